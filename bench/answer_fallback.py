"""Would reading the answer from the reasoning help? Answer fields the task cannot read, and what their last step says.

lm-evaluation-harness scores GSM8K with a "flexible extract" (the last number anywhere in the reply) beside
its strict one. madspy reads only the answer field (``programs.answers.read_answer``): an answer field with
no number ("k", "testing", "That's correct!") is no vote and scores 0. This counts, over every proposer and
reviser call of the given eval folders (transcripts unpacked), the answer fields the task's normalizer cannot
read, how many of those have a last reasoning step it can read, and how many of those would be right: the
most a fallback to the last step could gain. No LM call.

Usage (from the repo root; eval folders with their transcripts.tar.gz unpacked in place):
    python bench/answer_fallback.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from madspy.data import get_task
from madspy.evaluation import eval_settings, load_rows
from madspy.programs.answers import read_answer
from madspy.signatures import Role

ANSWERING = {Role.PROPOSER.value, Role.REVISER.value}


def count(folder: Path) -> Counter[str]:
    """The counts of one eval folder (its transcripts under ``folder/transcripts/<program>/<id>.json``)."""
    task = get_task(eval_settings(folder)["task"])
    gold = {row.id: row.gold for row in load_rows(folder)}
    counts: Counter[str] = Counter()
    for file in sorted(folder.glob("transcripts/*/*.json")):
        transcript = json.loads(file.read_text(encoding="utf-8"))
        question, right = transcript["question"], gold[file.stem]
        for call in (c for rnd in transcript["rounds"] for c in rnd["calls"] if c["role"] in ANSWERING):
            output = call.get("output") or {}
            if not output:
                continue
            counts["answer calls"] += 1
            if task.normalize(read_answer(output.get("answer"), question, task.normalize)) is not None:
                continue
            counts["answer field unreadable"] += 1
            steps = [str(s) for s in output.get("reasoning_steps") or []]
            last = task.normalize(steps[-1]) if steps else None
            counts["... last step readable"] += last is not None
            counts["... last step right"] += last is not None and task.score(last, right) == 1.0
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    total: Counter[str] = Counter()
    print("| folder | answer calls | answer field unreadable | ... last step readable | ... last step right |")
    print("|:--|--:|--:|--:|--:|")
    for folder in args.folders:
        counts = count(folder)
        total += counts
        print(f"| {folder.name} | " + " | ".join(str(counts[k]) for k in _COLUMNS) + " |")
    print("| **all** | " + " | ".join(f"**{total[k]}**" for k in _COLUMNS) + " |")


_COLUMNS = ("answer calls", "answer field unreadable", "... last step readable", "... last step right")

if __name__ == "__main__":
    main()
