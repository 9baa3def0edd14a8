"""A/B test two programs on the same questions: paired accuracy test, cost, calibration and an HTML report.

Example:
    >>> from madspy.ab import ab
    >>> # result = ab("compiled/x.json", "handwritten", "gsm8k", "openai/gpt-4o-mini", n=100, out="runs/ab")
    >>> # result.verdict, result.report          # one line, and runs/ab/report.html
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from madspy.evaluation import Comparison, EvalError, compare, evaluate, summarize
from madspy.report import write_eval_report

HANDWRITTEN = "handwritten"  # the hand-written debate: the `debate` preset


def program_spec(name: str) -> str:
    """What ``evaluate`` runs for an A/B side: ``handwritten`` is the ``debate`` preset."""
    return "debate" if name == HANDWRITTEN else name


@dataclass(frozen=True)
class ABResult:
    """The paired comparison of ``a`` and ``b``, their summary lines and the report's path."""

    comparison: Comparison
    summary: pd.DataFrame
    report: Path

    @property
    def verdict(self) -> str:
        return self.comparison.verdict


def ab(a: str, b: str, task: str, model: str, *, out: str | Path, n: int = 100, data_dir: str | Path | None = None,
       seed: int = 0, concurrency: int | None = None, progress: bool = False, **evaluate_options: Any) -> ABResult:
    """Run programs ``a`` and ``b`` (paths, presets or ``handwritten``) on the same ``n`` questions of ``task``.

    Both use ``model``; rows, transcripts and ``report.html`` go to ``out`` (resumable, see ``evaluate``).
    """
    specs: Sequence[str] = [program_spec(a), program_spec(b)]
    if specs[0] == specs[1]:
        raise EvalError(f"--a and --b are the same program ({specs[0]})")
    ev = evaluate(task, model, specs, out=out, n=n, data_dir=data_dir, seed=seed, concurrency=concurrency,
                  progress=progress, **evaluate_options)
    rows = [r for r in ev.rows if r["program"] in specs]
    comparison = compare(rows, *specs)
    report = write_eval_report(out, specs, comparison, title=f"A/B on {task} with {model}: {specs[0]} vs {specs[1]}")
    return ABResult(comparison, summarize(rows, order=specs), report)
