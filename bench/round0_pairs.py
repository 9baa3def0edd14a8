"""Round 0 of recorded debates against another program, paired, with no LM call.

For each debate of ``--program`` in an eval folder: the majority of its round-0 votes (what
"round 0 only" would have answered) and its recorded decision. Each is compared, on the questions
both have, with the rows of ``--other`` (read from ``--other-rows``, another eval folder, or the same
folder): accuracy and McNemar. Also prints each agent's round-0 accuracy and the flips of the last
round by direction (wrong->right, right->wrong, wrong->wrong).

Usage (from the repo root; transcripts committed as transcripts.tar.gz must be unpacked first):
    python bench/round0_pairs.py bench/runs/arc_challenge-validation-n40-seed0-nogate \\
        --program bench/programs/debate-no-gate-majority.json \\
        --other sc:3 --other-rows bench/runs/arc_challenge-validation-n40-seed0-cot-sc3
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from madspy.data import get_task
from madspy.evaluation import eval_settings, load_rows
from madspy.optimizers.metrics import mcnemar
from madspy.programs.protocols import DecisionContext, get_protocol
from madspy.programs.transcript import Transcript
from madspy.redecide import vote_history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--program", required=True)
    parser.add_argument("--other", required=True, help="the program to pair with")
    parser.add_argument("--other-rows", type=Path, help="eval folder of --other (default: the same folder)")
    args = parser.parse_args()
    task = get_task(eval_settings(args.folder)["task"])
    other = {r.id: r.correct for r in load_rows(args.other_rows or args.folder) if r.program == args.other}
    round0, recorded = {}, {}
    agents, flips = Counter(), Counter()
    for row in (r for r in load_rows(args.folder) if r.program == args.program and r.id in other):
        history = vote_history(Transcript.load(args.folder / row.transcript), task.normalize)
        decided = get_protocol("majority").decide(history[0], DecisionContext(history=history[:1]))
        round0[row.id], recorded[row.id] = task.score(decided.answer, row.gold) == 1.0, row.correct
        first, last = ({v.agent: v for v in votes} for votes in (history[0], history[-1]))
        agents.update(a for a, v in first.items() if task.score(v.answer, row.gold) == 1.0)
        for agent in first.keys() & last.keys() if len(history) > 1 else ():
            if first[agent].key != last[agent].key:
                was, now = (task.score(v.answer, row.gold) == 1.0 for v in (first[agent], last[agent]))
                flips["wrong->right" if now else "right->wrong" if was else "wrong->wrong"] += 1
    ids = sorted(round0)
    print(f"{len(ids)} paired questions; {args.other}: {sum(other[i] for i in ids) / len(ids):.3f}")
    comparisons = (
        ("round 0 majority", round0, args.other, other),
        ("as recorded", recorded, args.other, other),
        ("round 0 majority", round0, "as recorded", recorded),
    )
    for name, answers, versus, theirs in comparisons:
        test = mcnemar([answers[i] for i in ids], [theirs[i] for i in ids])
        print(
            f"{name}: {sum(answers[i] for i in ids) / len(ids):.3f}; McNemar vs {versus}: "
            f"{test.a_only} vs {test.b_only}, p = {test.p_value:.2f}"
        )
    print("agents right at round 0:", dict(sorted(agents.items())), "| last-round flips:", dict(flips))


if __name__ == "__main__":
    main()
