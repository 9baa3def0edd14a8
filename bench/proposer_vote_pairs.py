"""The round-0 vote of each program's proposers in a ``madspy role-eval --role proposer`` folder, paired.

A role-eval scores each proposer call alone; a debate's round 0 is several proposer calls on one
question (one per persona), voted. This groups a role-eval's rows by question, decides each
question's calls by majority vote (as the debate's round 0 and its 2/3 gate do) and compares the
programs on the questions every program answered in full: accuracy per program and McNemar
against the first. No LM call.

Usage (from the repo root):
    python bench/proposer_vote_pairs.py bench/runs/proposer-ab-gsm8k-test38 --task gsm8k
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from madspy.data import get_task
from madspy.optimizers.metrics import mcnemar
from madspy.programs.protocols import DecisionContext, Vote, get_protocol


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a role-eval --role proposer folder")
    parser.add_argument("--task", required=True)
    args = parser.parse_args()
    task = get_task(args.task)
    summary = json.loads((args.folder / "summary.json").read_text(encoding="utf-8"))
    programs = list(summary["programs"])
    golds = {}
    for line in (Path(summary["role_data"]) / "proposer.jsonl").read_text(encoding="utf-8").splitlines():
        example = json.loads(line)
        golds[example["question_id"]] = example["gold"]
    calls: dict[tuple[str, str], list[Vote]] = defaultdict(list)
    for line in (args.folder / "rows.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        answer = str((row["output"] or {}).get("answer") or "")
        votes = calls[row["program"], row["question_id"]]
        key = task.normalize(answer) or answer.strip().casefold()
        votes.append(Vote(len(votes), answer, key, float((row["output"] or {}).get("confidence") or 0.0)))
    size = max(len(v) for v in calls.values())
    questions = sorted({q for _, q in calls if all(len(calls[p, q]) == size for p in programs)})
    right = {}
    for p in programs:
        for q in questions:
            decided = get_protocol("majority").decide(calls[p, q], DecisionContext(history=[calls[p, q]]))
            right[p, q] = task.score(decided.answer, golds[q]) == 1.0
    print(f"{len(questions)} questions with {size} proposer calls each, decided by majority vote")
    for p in programs:
        line = f"{p}: {sum(right[p, q] for q in questions) / len(questions):.3f}"
        if p != programs[0]:
            test = mcnemar([right[p, q] for q in questions], [right[programs[0], q] for q in questions])
            line += f"; McNemar vs {programs[0]}: {test.a_only} vs {test.b_only}, p = {test.p_value:.2f}"
        print(line)


if __name__ == "__main__":
    main()
