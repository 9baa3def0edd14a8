"""A fitted confidence calibrator: Platt scaling on what a debate shows about its answer, not its stated confidence
alone.

A debate's stated confidence is often far from its accuracy (a judge saying 0.90 at 0.40
accuracy), and a calibrator fitted on it alone can learn only the base rate (61 of 107 values
one number, 2026-12-07). Platt scaling (Platt, 1999, "Probabilistic outputs for support vector
machines") fits ``P(correct) = sigmoid(w . [1, features])`` on debates with known outcomes, on
``signals`` that separate right from wrong answers: the stated confidence (as a logit), the
final vote share, the agreement of the first answers (self-consistency's signal: Wang et al.,
2023) and whether a check or the critic flagged the answer. ``compile`` fits one on its dev
debates and stores it in the program's config; ``Debate`` then reports the calibrated confidence
and the transcript keeps the raw one and the signals in its decision. Fitted by Newton's method
on the log-loss with a small ridge term: a dozen lines of numpy, which spares a scikit-learn
dependency for one regression.

Example:
    >>> def debate(share, flagged, right):
    ...     return {"confidence": 0.9, "vote_share": share, "first_agreement": share, "flagged": flagged}, right
    >>> outcomes = [debate(1.0, 0, True), debate(1.0, 1, False), debate(0.34, 0, False), debate(0.67, 0, True)] * 5
    >>> c = Calibrator.fit(outcomes)
    >>> c(outcomes[0][0]) > c(outcomes[1][0]), c(outcomes[0][0]) > c(outcomes[2][0])
    (True, True)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

RIDGE = 1e-2
EPS = 1e-4
FEATURES = ("confidence", "vote_share", "first_agreement", "flagged")  # what a new calibrator reads
STATED = ("confidence", "vote_share")  # what calibrators saved before 2026-12-07 read

Signals = Mapping[str, float]
Outcome = tuple[Signals, bool]  # a debate's signals and whether its answer was right


def _logit(p: float) -> float:
    p = min(1 - EPS, max(EPS, p))
    return math.log(p / (1 - p))


def _row(signals: Signals, features: Sequence[str]) -> list[float]:
    """The regression's inputs: 1, then each feature (the confidence as a logit, the others clipped to [0, 1])."""
    values = {name: float(signals.get(name) or 0.0) for name in features}
    return [1.0, *(_logit(v) if name == "confidence" else min(1.0, max(0.0, v)) for name, v in values.items())]


def signals(
    confidence: float, key: str | None, first: Sequence[str | None], last: Sequence[str | None], flagged: bool
) -> dict[str, float]:
    """What a calibrator may read off one debate: the stated ``confidence``; the share of the ``last`` round's
    votes (answer keys) held by the answer chosen (``key``); the share of the ``first`` answers that were already
    it; whether the critic or a check ``flagged`` a proposal holding it.

    >>> signals(0.9, "4", ["4", "5", None], ["4", "4", "5"], flagged=False)
    {'confidence': 0.9, 'vote_share': 0.6667, 'first_agreement': 0.5, 'flagged': 0.0}
    """
    first_keys = [k for k in first if k is not None]
    return {
        "confidence": float(confidence),
        "vote_share": vote_share(dict(Counter(k for k in last if k is not None)), key),
        "first_agreement": round(sum(k == key for k in first_keys) / len(first_keys), 4) if first_keys else 0.0,
        "flagged": float(flagged),
    }


class Calibrator(BaseModel):
    """``P(correct) = sigmoid(w . [1, features])`` (the confidence as a logit), fitted on ``n`` debates."""

    model_config = ConfigDict(frozen=True)

    kind: str = "platt"
    features: tuple[str, ...] = STATED
    weights: tuple[float, ...]
    n: int
    base_rate: float | None = None  # the share right among the debates fitted on (what a constant would say)

    @model_validator(mode="after")
    def _one_weight_per_feature(self) -> Calibrator:
        if len(self.weights) != len(self.features) + 1 or not set(self.features) <= set(FEATURES):
            raise ValueError(f"a calibrator reading {list(self.features)} needs {len(self.features) + 1} weights")
        return self

    def __call__(self, signals: Signals) -> float:
        z = float(np.dot(self.weights, _row(signals, self.features)))
        return round(1 / (1 + math.exp(-max(-50.0, min(50.0, z)))), 4)

    @classmethod
    def fit(cls, outcomes: Sequence[Outcome], features: Sequence[str] = FEATURES, iterations: int = 50) -> Calibrator:
        """Fit on ``(signals, correct)`` pairs (at least 2, with both outcomes present), reading ``features``."""
        unknown = [name for name in features if name not in FEATURES]
        if unknown or not features:
            raise ValueError(
                f"calibrator features: some of {', '.join(FEATURES)} (got {', '.join(features) or 'none'})"
            )
        if len(outcomes) < 2 or len({bool(c) for _, c in outcomes}) < 2:
            raise ValueError("a calibrator needs at least two debates, some right and some wrong")
        x = np.array([_row(s, features) for s, _ in outcomes])
        y = np.array([float(c) for _, c in outcomes])
        w = np.zeros(x.shape[1])
        for _ in range(iterations):
            p = 1 / (1 + np.exp(-x @ w))
            gradient = x.T @ (p - y) + RIDGE * w
            hessian = (x.T * (p * (1 - p))) @ x + RIDGE * np.eye(x.shape[1])
            step = np.linalg.solve(hessian, gradient)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        rate = round(float(y.mean()), 4)
        weights = tuple(round(float(v), 6) for v in w)
        return cls(features=tuple(features), weights=weights, n=len(outcomes), base_rate=rate)


def vote_share(tally: dict[str, int], answer_key: str | None) -> float:
    """The share of the final votes held by the answer chosen (0 when it holds none).

    >>> vote_share({"391": 2, "390": 1}, "391")
    0.6667
    """
    total = sum(tally.values())
    return round(tally.get(answer_key, 0) / total, 4) if total and answer_key is not None else 0.0
