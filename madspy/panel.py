"""Which reasoning modes make a panel: each program's accuracy and how often two are wrong together.

A debate pays when its agents err in different places ("Stop Overvaluing Multi-Agent Debate", 2025; three
different models reach 91% on GSM8K where three copies of one reach 82%, Hegazy 2024). Given the rows of single
agents in different modes on the same questions (``madspy eval --programs cot,pot ...``), ``error_overlap`` is,
for each pair, the share of the questions either gets wrong that both get wrong (the Jaccard index of their error
sets: 1 when they fail together, 0 when never), and ``choose_panel`` picks the members whose errors overlap least
among those within ``margin`` of the best accuracy.

Example:
    >>> accuracy = {"cot": 0.70, "pot": 0.69, "plain": 0.72}
    >>> overlap = {("cot", "plain"): 0.8, ("cot", "pot"): 0.3, ("plain", "pot"): 0.35}
    >>> choose_panel(accuracy, overlap, size=2)
    ('cot', 'pot')
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from madspy.core.errors import EvalError
from madspy.evaluation import load_rows
from madspy.summary import paired_rows


def error_overlap(rows_by_program: Mapping[str, Mapping[str, bool]]) -> dict[tuple[str, str], float]:
    """For each pair of programs (sorted names), the Jaccard index of the questions they get wrong (0 when
    neither gets any wrong).

    >>> error_overlap({"a": {"q1": False, "q2": False, "q3": True}, "b": {"q1": False, "q2": True, "q3": False}})
    {('a', 'b'): 0.3333333333333333}
    """
    wrong = {name: {q for q, right in outcomes.items() if not right} for name, outcomes in rows_by_program.items()}
    return {
        (a, b): len(wrong[a] & wrong[b]) / len(wrong[a] | wrong[b]) if wrong[a] | wrong[b] else 0.0
        for a, b in itertools.combinations(sorted(wrong), 2)
    }


def choose_panel(
    accuracy: Mapping[str, float], overlap: Mapping[tuple[str, str], float], size: int = 3, margin: float = 0.05
) -> tuple[str, ...]:
    """The ``size`` members (a program may repeat) whose errors overlap least on average, among the programs within
    ``margin`` of the best accuracy; a repeated program overlaps itself fully. Ties go to the higher mean accuracy.
    """
    best = max(accuracy.values())
    eligible = sorted(name for name, acc in accuracy.items() if acc >= best - margin - 1e-9)  # 0.8 - 0.2 < 0.6

    def pair(a: str, b: str) -> float:
        return 1.0 if a == b else overlap[tuple(sorted((a, b)))]  # type: ignore[index]

    def cost(panel: tuple[str, ...]) -> tuple[float, float]:
        pairs = list(itertools.combinations(panel, 2))
        together = sum(pair(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0
        return together, -sum(accuracy[name] for name in panel) / len(panel)

    return min(itertools.combinations_with_replacement(eligible, size), key=cost)


def panel_report(folder: str | Path, programs: Sequence[str] | None = None, size: int = 3, margin: float = 0.05):
    """Accuracy per program, the error-overlap matrix and the chosen panel, on the questions every program of an
    eval folder answered. Returns (table, overlap matrix, panel)."""
    rows = paired_rows([r for r in load_rows(folder) if programs is None or r.program in programs])
    outcomes: dict[str, dict[str, bool]] = {}
    for row in rows:
        outcomes.setdefault(row.program, {})[row.id] = row.correct
    if len(outcomes) < 2:
        raise EvalError(f"{folder}: a panel needs the rows of at least two programs on the same questions")
    accuracy = {name: sum(o.values()) / len(o) for name, o in outcomes.items()}
    overlap = error_overlap(outcomes)
    names = sorted(outcomes)
    matrix = pd.DataFrame(
        [[1.0 if a == b else overlap[tuple(sorted((a, b)))] for b in names] for a in names], index=names, columns=names
    )
    table = pd.DataFrame({"n": {n: len(outcomes[n]) for n in names}, "accuracy": accuracy}).loc[names]
    return table, matrix, choose_panel(accuracy, overlap, size, margin)
