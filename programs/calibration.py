"""A fitted confidence calibrator: Platt scaling on the judge's confidence and the winning answer's vote share.

A debate's stated confidence is often far from its accuracy (a judge saying 0.90 at 0.40
accuracy). Platt scaling (Platt, 1999, "Probabilistic outputs for support vector machines")
fits ``P(correct) = sigmoid(b + w1 logit(confidence) + w2 vote_share)`` on debates with known
outcomes. ``compile`` fits one on its dev debates and stores it in the program's config;
``Debate`` then reports the calibrated confidence and the transcript keeps the raw one in
its decision. Three parameters fit by Newton's method on the log-loss with a small ridge
term: a dozen lines of numpy, which spares a scikit-learn dependency for one regression.

Example:
    >>> outcomes = [(0.9, 1.0, True), (0.9, 1.0, False), (0.9, 0.34, False), (0.9, 0.67, True)] * 5
    >>> c = Calibrator.fit(outcomes)
    >>> c(0.9, 1.0) < 0.9, c(0.9, 1.0) > c(0.9, 0.34)
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

RIDGE = 1e-2
EPS = 1e-4


def _logit(p: float) -> float:
    p = min(1 - EPS, max(EPS, p))
    return math.log(p / (1 - p))


def _features(confidence: float, share: float) -> list[float]:
    return [1.0, _logit(confidence), min(1.0, max(0.0, share))]


class Calibrator(BaseModel):
    """``P(correct) = sigmoid(w . [1, logit(confidence), vote_share])``, fitted on ``n`` debates."""

    model_config = ConfigDict(frozen=True)

    kind: str = "platt"
    weights: tuple[float, float, float]
    n: int
    base_rate: float | None = None  # the share right among the debates fitted on (what a constant would say)

    def __call__(self, confidence: float, share: float) -> float:
        z = float(np.dot(self.weights, _features(confidence, share)))
        return round(1 / (1 + math.exp(-max(-50.0, min(50.0, z)))), 4)

    @classmethod
    def fit(cls, outcomes: Sequence[tuple[float, float, bool]], iterations: int = 50) -> Calibrator:
        """Fit on ``(confidence, vote_share, correct)`` triples (at least 2, with both outcomes present)."""
        if len(outcomes) < 2 or len({bool(c) for *_, c in outcomes}) < 2:
            raise ValueError("a calibrator needs at least two debates, some right and some wrong")
        x = np.array([_features(conf, share) for conf, share, _ in outcomes])
        y = np.array([float(c) for *_, c in outcomes])
        w = np.zeros(3)
        for _ in range(iterations):
            p = 1 / (1 + np.exp(-x @ w))
            gradient = x.T @ (p - y) + RIDGE * w
            hessian = (x.T * (p * (1 - p))) @ x + RIDGE * np.eye(3)
            step = np.linalg.solve(hessian, gradient)
            w -= step
            if np.abs(step).max() < 1e-8:
                break
        rate = round(float(y.mean()), 4)
        return cls(weights=tuple(round(float(v), 6) for v in w), n=len(outcomes), base_rate=rate)


def vote_share(tally: dict[str, int], answer_key: str | None) -> float:
    """The share of the final votes held by the answer chosen (0 when it holds none).

    >>> vote_share({"391": 2, "390": 1}, "391")
    0.6667
    """
    total = sum(tally.values())
    return round(tally.get(answer_key, 0) / total, 4) if total and answer_key is not None else 0.0
