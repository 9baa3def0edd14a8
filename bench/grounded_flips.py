"""What counting only grounded evidence flips would have decided on an eval's recorded debates, with no LM call.

A reviser's flip cites ``evidence_ref``; since it was recorded, a reference to "critique N" counts as
evidence only if the reviser read at least N critiques (``madspy.programs.flips.flip_kind``). This
replays each debate's decision with ``evidence_flips_only`` (conformity flips do not move a vote),
once with the flip kinds as recorded and once with the kinds re-derived by that rule, and prints
per folder: flips, flips re-classified as conformity, accuracy as recorded, replayed with recorded
kinds (must equal the recorded one on a voting debate run with evidence_flips_only: a check of the
replay) and replayed with grounded kinds. Only the decision is replayed: a debate whose echo alarm
would have fired on the re-classified flips might have gone on differently.

Usage (from the repo root; transcripts committed as transcripts.tar.gz must be unpacked first):
    python bench/grounded_flips.py --program debate bench/runs/gsm8k-n50-seed0-adversary-on
"""

from __future__ import annotations

import argparse
from pathlib import Path

from madspy.data import get_task
from madspy.evaluation import eval_settings, load_rows
from madspy.programs.config import DebateConfig
from madspy.programs.defenses import anchored_votes
from madspy.programs.flips import Flip, flip_kind
from madspy.programs.protocols import DecisionContext, get_protocol
from madspy.programs.transcript import Transcript
from madspy.redecide import vote_history


def grounded(transcript: Transcript) -> dict[int, list[Flip]]:
    """Each round's flips with their kind re-derived from the critiques the reviser read."""
    flips: dict[int, list[Flip]] = {}
    for rnd in transcript.rounds:
        read = {c.agent: len(c.inputs.get("critiques") or []) for c in rnd.calls if c.role == "reviser"}
        for flip in rnd.flips:
            kind = flip_kind(flip.evidence_ref, critiques_read=read.get(flip.agent, 0))
            flips.setdefault(rnd.index, []).append(flip.model_copy(update={"kind": kind}))
    return flips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--program", default="debate")
    args = parser.parse_args()
    print(
        "| folder | n | flips | re-classified as conformity | recorded | replayed, recorded kinds "
        "| replayed, grounded |"
    )
    print("|:--|--:|--:|--:|--:|--:|--:|")
    for folder in args.folders:
        task = get_task(eval_settings(folder)["task"])
        rows = [r for r in load_rows(folder) if r.program == args.program]
        flips = changed = recorded = 0
        right = {"recorded kinds": 0, "grounded": 0}
        for row in rows:
            transcript = Transcript.load(folder / row.transcript)
            protocol = get_protocol(DebateConfig.model_validate(transcript.config).decision_protocol)
            history = vote_history(transcript, task.normalize)
            kinds = {r.index: r.flips for r in transcript.rounds if r.flips}
            regrounded = grounded(transcript)
            flips += sum(len(f) for f in kinds.values())
            changed += sum(a.kind != b.kind for i in kinds for a, b in zip(kinds[i], regrounded[i], strict=True))
            recorded += row.correct
            for name, by in (("recorded kinds", kinds), ("grounded", regrounded)):
                decision = protocol.decide(anchored_votes(history, by), DecisionContext(history=history))
                right[name] += task.score(decision.answer, row.gold) == 1.0
        n = len(rows)
        print(
            f"| {folder.name} | {n} | {flips} | {changed} | {recorded / n:.3f} | {right['recorded kinds'] / n:.3f} "
            f"| {right['grounded'] / n:.3f} |"
        )


if __name__ == "__main__":
    main()
