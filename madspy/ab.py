"""A/B test two programs on the same questions: paired accuracy test, cost, calibration and an HTML report.

Example::

    from madspy.ab import ab
    result = ab("compiled/x.json", "handwritten", "gsm8k", "openai/gpt-4o-mini", n=100, out="runs/ab")
    result.verdict, result.report          # one line, and runs/ab/report.html
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from madspy.comparison import Comparison, compare
from madspy.data import Task
from madspy.evaluation import EvalError, evaluate, is_program_file
from madspy.programs import Debate
from madspy.programs.artifact import load_program, save_program
from madspy.report import write_eval_report
from madspy.summary import summarize

HANDWRITTEN = "handwritten"


def handwritten_twin(program: str | Path, path: Path) -> Path:
    """Save ``program``'s hand-written twin to ``path``: its config, the roles' own instructions, no demos."""
    compiled = load_program(program)
    kept = {key: compiled.manifest[key] for key in ("task", "model") if key in compiled.manifest}
    save_program(
        Debate(compiled.config), path, manifest={**kept, "optimizer": {"name": HANDWRITTEN}, "twin_of": str(program)}
    )
    return path


def program_spec(name: str, other: str, out: Path) -> str:
    """What ``evaluate`` runs for an A/B side.

    ``handwritten`` facing a saved program is that program's hand-written twin (same config,
    saved as ``out/handwritten.json``), so the A/B measures what compiling changed and
    nothing else; facing a preset it is the ``debate`` preset.
    """
    if name != HANDWRITTEN:
        return name
    if not is_program_file(other):
        return "debate"
    return str(handwritten_twin(other, out / "handwritten.json"))


@dataclass(frozen=True)
class ABResult:
    """The paired comparison of ``a`` and ``b``, their summary lines and the report's path."""

    comparison: Comparison
    summary: pd.DataFrame
    report: Path

    @property
    def verdict(self) -> str:
        return self.comparison.verdict


def ab(
    a: str,
    b: str,
    task: str | Task,
    model: str,
    *,
    out: str | Path,
    n: int = 100,
    data_dir: str | Path | None = None,
    seed: int = 0,
    concurrency: int | None = None,
    progress: bool = False,
    **evaluate_options: Any,
) -> ABResult:
    """Run programs ``a`` and ``b`` (paths, presets or ``handwritten``) on the same ``n`` questions of ``task``.

    ``handwritten`` opposite a saved program is its hand-written twin (see ``program_spec``).
    Both use ``model``; rows, transcripts and ``report.html`` go to ``out`` (resumable, see ``evaluate``).
    """
    out = Path(out)
    specs: Sequence[str] = [program_spec(a, b, out), program_spec(b, a, out)]
    if specs[0] == specs[1]:
        raise EvalError(f"--a and --b are the same program ({specs[0]})")
    ev = evaluate(
        specs,
        task,
        model,
        out=out,
        n=n,
        data_dir=data_dir,
        seed=seed,
        concurrency=concurrency,
        progress=progress,
        **evaluate_options,
    )
    rows = [r for r in ev.rows if r.program in specs]
    comparison = compare(rows, *specs)
    name = task if isinstance(task, str) else task.name
    report = write_eval_report(out, specs, comparison, title=f"A/B on {name} with {model}: {specs[0]} vs {specs[1]}")
    return ABResult(comparison, summarize(rows, order=specs), report)
