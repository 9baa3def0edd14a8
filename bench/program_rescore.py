"""Program-mode rows scored again with today's sandbox, from their transcripts (no LM call).

A program-of-thought reply that failed in the sandbox is run again with ``execute``; the row would be right
if the value it computes now scores right against the gold answer. Prints per folder: failed programs, how
many compute a value now, how many of those are right, and the accuracy the program mode would have had.

Usage (from the repo root):
    python bench/program_rescore.py bench/runs/modes-2026-12-07/gsm8k-train30-modes --program pot
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from madspy.data import get_task
from madspy.evaluation import eval_settings, load_rows
from madspy.programs.program_check import execute
from madspy.programs.transcript import Transcript

PROGRAM_FIELD = re.compile(r"\[\[ ## program ## \]\]\n(.*?)(?=\n\[\[ ## |\Z)", re.DOTALL)  # the reply's program field


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--program", default="pot")
    args = parser.parse_args()
    for folder in args.folders:
        task = get_task(eval_settings(folder)["task"])
        rows = [r for r in load_rows(folder) if r.program == args.program]
        outcome = Counter()
        for row in rows:
            call = Transcript.load(folder / row.transcript).calls()[0]
            if call.ok:
                outcome["right" if row.correct else "wrong"] += 1
                continue
            found = PROGRAM_FIELD.search(call.reply or "")
            program = found.group(1) if found else ""
            value, _ = execute(program)
            if value is None:
                outcome["still failed"] += 1
            else:
                shown = f"{value:g}" if value != int(value) else str(int(value))
                outcome["failed, now right" if task.score(shown, row.gold) >= 0.5 else "failed, now wrong"] += 1
        now = outcome["right"] + outcome["failed, now right"]
        print(
            f"{folder} ({args.program}, n={len(rows)}): {dict(outcome)}; accuracy {outcome['right'] / len(rows):.3f}"
            f" -> {now / len(rows):.3f}"
        )


if __name__ == "__main__":
    main()
