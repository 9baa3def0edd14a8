"""Paired comparison of two programs' eval rows: McNemar's test and a paired bootstrap of the difference.

Example::

    from madspy.comparison import compare
    from madspy.evaluation import load_rows
    compare(load_rows("runs/gsm8k"), "debate", "cot").verdict
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from madspy.core.errors import EvalError
from madspy.optimizers import metrics
from madspy.rows import EvalRow


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of programs ``a`` and ``b`` on the questions both answered."""

    a: str
    b: str
    n: int
    accuracy_a: float
    accuracy_b: float
    difference: metrics.Bootstrap  # accuracy a - b with a paired-bootstrap 95% CI
    mcnemar: metrics.McNemar
    tokens_a: float
    tokens_b: float
    wall_s_a: float
    wall_s_b: float
    split_sessions: int = 0  # pairs whose two rows were written by different eval sessions (``madspy.sessions``)
    split_engines: int = 0  # of those, pairs whose sessions ran on different engines (when ``engines`` are given)
    unknown_sessions: int = 0  # pairs with a row from before rows named their session

    @property
    def verdict(self) -> str:
        d, p = self.difference.mean_difference, self.mcnemar.p_value
        if p < 0.05 and d != 0:
            better, worse = (self.a, self.b) if d > 0 else (self.b, self.a)
            return (
                f"{better} beats {worse} by {abs(d):.1%} on {self.n} paired questions "
                f"(McNemar p={p:.3g}, 95% CI of a-b [{self.difference.low:+.3f}, {self.difference.high:+.3f}])"
            )
        return (
            f"no significant difference between {self.a} and {self.b} on {self.n} paired questions "
            f"(difference {d:+.1%}, McNemar p={p:.3g})"
        )


def compare(
    rows: Sequence[EvalRow],
    a: str,
    b: str,
    *,
    rows_b: Sequence[EvalRow] | None = None,
    engines: Mapping[str, str] | None = None,
    n_resamples: int = 10000,
    seed: int = 0,
) -> Comparison:
    """Paired bootstrap and McNemar test of ``a`` against ``b`` on their shared question ids.

    ``rows_b``, when given, holds ``b``'s rows (another eval of the same questions, e.g. yesterday's run or
    another model), so ``a`` and ``b`` may even share a name. Pairs whose rows two eval sessions wrote are
    counted (``split_sessions``), and with ``engines`` (session id -> engine, ``madspy.sessions.engines_of``)
    those whose sessions ran on different engines (``split_engines``): another build may answer differently.

    >>> rows = [EvalRow(program=p, id=str(i), gold="1", score=s, correct=bool(s), status="converged", wall_s=1.0)
    ...         for p, scores in {"x": [1, 1, 1, 0], "y": [0, 1, 0, 0]}.items() for i, s in enumerate(scores)]
    >>> c = compare(rows, "x", "y")
    >>> c.n, c.accuracy_a, c.accuracy_b, c.mcnemar.p_value
    (4, 0.75, 0.25, 0.5)
    """
    sources = {"a": (a, rows), "b": (b, rows if rows_b is None else rows_b)}
    by = {side: {r.id: r for r in found if r.program == name} for side, (name, found) in sources.items()}
    for side, (name, found) in sources.items():
        if not by[side]:
            known = ", ".join(sorted({r.program for r in found})) or "none"
            raise EvalError(f"no rows for program {name!r}; programs in these rows: {known}")
    ids = [i for i in by["a"] if i in by["b"]]
    if not ids:
        raise EvalError(f"{a} and {b} share no question ids")
    ra, rb = [by["a"][i] for i in ids], [by["b"][i] for i in ids]
    pairs = list(zip(ra, rb, strict=True))
    split = [(x, y) for x, y in pairs if x.session and y.session and x.session != y.session]
    engines = engines or {}

    def mean(values: Iterable[float]) -> float:
        values = list(values)
        return sum(values) / len(values)

    return Comparison(
        a,
        b,
        len(ids),
        accuracy_a=mean(r.score for r in ra),
        accuracy_b=mean(r.score for r in rb),
        difference=metrics.paired_bootstrap(
            [r.score for r in ra], [r.score for r in rb], n_resamples=n_resamples, seed=seed
        ),
        mcnemar=metrics.mcnemar([r.correct for r in ra], [r.correct for r in rb]),
        tokens_a=mean(r.tokens for r in ra),
        tokens_b=mean(r.tokens for r in rb),
        wall_s_a=mean(r.wall_s for r in ra),
        wall_s_b=mean(r.wall_s for r in rb),
        split_sessions=len(split),
        split_engines=sum(
            engines[x.session] != engines[y.session] for x, y in split if x.session in engines and y.session in engines
        ),
        unknown_sessions=sum(not (x.session and y.session) for x, y in pairs),
    )


def pool_samples(
    samples: Sequence[tuple[Sequence[EvalRow], Sequence[EvalRow]]], a: str, b: str
) -> tuple[list[EvalRow], list[EvalRow]]:
    """``a``'s and ``b``'s rows over several samples of one comparison, each question once.

    Each sample is (rows holding ``a``, rows holding ``b``), say seed 0's eval and seed 1's. A question
    both programs answered in several samples counts once, from the first sample that paired it, so
    pooling never counts a question twice. ``compare(rows_a, a, b, rows_b=rows_b)`` then tests the pool.

    >>> def rows(p, ids):
    ...     return [EvalRow(program=p, id=i, gold="1", status="converged") for i in ids]
    >>> rows_a, rows_b = pool_samples([(rows("x", "123"), rows("y", "12")), (rows("x", "34"), rows("y", "234"))],
    ...                               "x", "y")
    >>> [r.id for r in rows_a], [r.id for r in rows_b]
    (['1', '2', '3', '4'], ['1', '2', '3', '4'])
    """
    pooled_a: dict[str, EvalRow] = {}
    pooled_b: dict[str, EvalRow] = {}
    for found_a, found_b in samples:
        by_a = {r.id: r for r in found_a if r.program == a}
        by_b = {r.id: r for r in found_b if r.program == b}
        for question, row in by_a.items():
            if question in by_b and question not in pooled_a:
                pooled_a[question], pooled_b[question] = row, by_b[question]
    return list(pooled_a.values()), list(pooled_b.values())


__all__ = ["Comparison", "compare", "pool_samples"]
