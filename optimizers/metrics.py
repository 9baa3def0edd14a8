"""Evaluation metrics: pure functions over plain Python values.

Accuracy with a Wilson interval, critic hit and false-alarm rates,
calibration (Brier, ECE, reliability curve), token and latency cost, answer
flips, difficulty strata, and paired tests (McNemar, bootstrap).

>>> accuracy([1, 1, 0, 1]).mean
0.75
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

_Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclass(frozen=True)
class Interval:
    """A mean of n scores with a 95% interval; mean is None when n == 0 (interval 0..1)."""

    mean: float | None
    low: float
    high: float
    n: int


def accuracy(scores: Sequence[float]) -> Interval:
    """Mean score with a 95% Wilson score interval.

    Scores are in [0, 1]; for non-binary scores (chrF) the Wilson interval is an
    approximation around their mean.

    >>> result = accuracy([1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
    >>> result.mean, round(result.low, 4), round(result.high, 4), result.n
    (0.8, 0.4902, 0.9433, 10)
    """
    n = len(scores)
    if n == 0:
        return Interval(None, 0.0, 1.0, 0)
    p = sum(scores) / n
    z2 = _Z95 * _Z95
    center = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Interval(p, max(0.0, center - half), min(1.0, center + half), n)


@dataclass(frozen=True)
class CriticRates:
    """How often a critic flags wrong proposals (hits) and right ones (false alarms)."""

    wrong: int
    right: int
    hits: int
    false_alarms: int
    hit_rate: float | None
    false_alarm_rate: float | None


def critic_rates(pairs: Iterable[tuple[bool, bool]]) -> CriticRates:
    """Rates from (proposal_correct, critic_flagged) pairs; a rate is None when its denominator is 0.

    >>> critic_rates([(False, True), (False, False), (True, True), (True, False), (True, False)])
    CriticRates(wrong=2, right=3, hits=1, false_alarms=1, hit_rate=0.5, false_alarm_rate=0.3333333333333333)
    """
    wrong = right = hits = false_alarms = 0
    for correct, flagged in pairs:
        if correct:
            right += 1
            false_alarms += bool(flagged)
        else:
            wrong += 1
            hits += bool(flagged)
    return CriticRates(
        wrong,
        right,
        hits,
        false_alarms,
        hits / wrong if wrong else None,
        false_alarms / right if right else None,
    )


def _checked(confidences: Sequence[float], correct: Sequence[bool]) -> None:
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences but {len(correct)} correctness values")
    if any(not 0.0 <= c <= 1.0 for c in confidences):
        raise ValueError("confidences must lie in [0, 1]")


def brier(confidences: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Mean squared gap between confidence and correctness (0 is perfect); None for no data.

    >>> round(brier([0.9, 0.2], [True, False]), 6)  # ((0.1)^2 + (0.2)^2) / 2
    0.025
    """
    _checked(confidences, correct)
    if not confidences:
        return None
    return sum((c - y) ** 2 for c, y in zip(confidences, correct, strict=True)) / len(confidences)


@dataclass(frozen=True)
class Bin:
    """One reliability bin [lower, upper); mean_confidence and accuracy are None when empty."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


def reliability_curve(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[Bin]:
    """Equal-width confidence bins over [0, 1], each [lower, upper) except the last, which includes 1.0.

    >>> [(b.count, b.accuracy) for b in reliability_curve([0.1, 0.9, 1.0], [False, True, False], bins=2)]
    [(1, 0.0), (2, 0.5)]
    """
    _checked(confidences, correct)
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for confidence, is_correct in zip(confidences, correct, strict=True):
        members[min(int(confidence * bins), bins - 1)].append((confidence, bool(is_correct)))
    curve = []
    for index, items in enumerate(members):
        count = len(items)
        curve.append(
            Bin(
                lower=index / bins,
                upper=(index + 1) / bins,
                count=count,
                mean_confidence=sum(c for c, _ in items) / count if count else None,
                accuracy=sum(y for _, y in items) / count if count else None,
            )
        )
    return curve


def ece(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> float | None:
    """Expected calibration error: sum over bins of (bin share) * |accuracy - mean confidence|.

    >>> round(ece([0.1, 0.9, 1.0], [False, True, False], bins=2), 6)  # 1/3*0.1 + 2/3*|0.5-0.95|
    0.333333
    """
    curve = reliability_curve(confidences, correct, bins)
    if not confidences:
        return None
    total = len(confidences)
    return sum(b.count / total * abs(b.accuracy - b.mean_confidence) for b in curve if b.count)


def auroc(confidences: Sequence[float], correct: Sequence[bool]) -> float | None:
    """How well confidence ranks right answers above wrong ones: the chance a random right answer is more
    confident than a random wrong one (ties count half); 0.5 is no ranking at all. None without both kinds.

    >>> auroc([0.9, 0.8, 0.3, 0.8], [True, True, False, False]), auroc([0.5, 0.5], [True, False])
    (0.875, 0.5)
    """
    right = [c for c, ok in zip(confidences, correct, strict=True) if ok]
    wrong = [c for c, ok in zip(confidences, correct, strict=True) if not ok]
    if not right or not wrong:
        return None
    wins = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return wins / (len(right) * len(wrong))


@dataclass
class Usage:
    """Summed cost of a group of LM calls."""

    calls: int = 0
    errors: int = 0
    cached: int = 0  # calls answered from the LM cache (no model time; tokens estimated)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens: taken from the backend's prefix cache
    latency_s: float = 0.0

    def add(self, call: Mapping[str, Any]) -> None:
        self.calls += 1
        self.errors += call.get("error") is not None
        self.cached += bool(call.get("cached"))
        self.prompt_tokens += call.get("prompt_tokens") or 0
        self.completion_tokens += call.get("completion_tokens") or 0
        self.cached_prompt_tokens += call.get("cached_prompt_tokens") or 0
        self.latency_s += call.get("latency_s") or 0.0


@dataclass
class CostSummary:
    """Totals, per-role and per-round usage over a set of debate transcripts."""

    questions: int = 0
    mean_wall_s: float | None = None
    total: Usage = field(default_factory=Usage)
    by_role: dict[str, Usage] = field(default_factory=dict)
    by_round: dict[int, Usage] = field(default_factory=dict)


def cost_summary(transcripts: Iterable[Mapping[str, Any]]) -> CostSummary:
    """Token, call and latency totals, broken down by role and by round; mean wall time per question.

    Missing token counts or latencies count as 0.

    >>> call = {"role": "solver", "agent": 0, "prompt_tokens": 10, "completion_tokens": 5,
    ...         "latency_s": 0.5, "error": None}
    >>> summary = cost_summary([{"wall_s": 2.0, "rounds": [{"index": 0, "calls": [call, call]}]}])
    >>> summary.total.prompt_tokens, summary.by_role["solver"].calls, summary.mean_wall_s
    (20, 2, 2.0)
    """
    summary = CostSummary()
    by_role: dict[str, Usage] = defaultdict(Usage)
    by_round: dict[int, Usage] = defaultdict(Usage)
    wall = 0.0
    for transcript in transcripts:
        summary.questions += 1
        wall += transcript.get("wall_s") or 0.0
        for round_ in transcript.get("rounds", []):
            for call in round_.get("calls", []):
                for usage in (summary.total, by_role[call["role"]], by_round[round_["index"]]):
                    usage.add(call)
    summary.by_role = dict(by_role)
    summary.by_round = dict(sorted(by_round.items()))
    summary.mean_wall_s = wall / summary.questions if summary.questions else None
    return summary


@dataclass(frozen=True)
class FlipCounts:
    """Answer changes of one kind, and how many changed correctness each way."""

    flips: int
    right_to_wrong: int
    wrong_to_right: int


def flip_stats(flips: Iterable[Mapping[str, Any]]) -> dict[str, FlipCounts]:
    """Counts per flip kind ("evidence", "conformity", ...) plus "all".

    >>> stats = flip_stats([
    ...     {"kind": "conformity", "before_correct": True, "after_correct": False},
    ...     {"kind": "evidence", "before_correct": False, "after_correct": True},
    ...     {"kind": "evidence", "before_correct": False, "after_correct": False},
    ... ])
    >>> stats["evidence"], stats["all"].right_to_wrong
    (FlipCounts(flips=2, right_to_wrong=0, wrong_to_right=1), 1)
    """
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for flip in flips:
        before, after = bool(flip["before_correct"]), bool(flip["after_correct"])
        for key in (flip["kind"], "all"):
            counts[key][0] += 1
            counts[key][1] += before and not after
            counts[key][2] += after and not before
    counts.setdefault("all", [0, 0, 0])
    return {kind: FlipCounts(*values) for kind, values in counts.items()}


Stratum = Literal["hard", "medium", "easy"]
STRATA: tuple[Stratum, ...] = ("hard", "medium", "easy")


def difficulty_strata(single_agent_accuracy: Mapping[str, float]) -> dict[str, Stratum]:
    """Question id -> "hard" (accuracy < 0.3), "easy" (> 0.7), else "medium".

    Both boundaries belong to "medium": 0.3 and 0.7 are medium.

    >>> difficulty_strata({"q1": 0.2, "q2": 0.3, "q3": 0.7, "q4": 0.8})
    {'q1': 'hard', 'q2': 'medium', 'q3': 'medium', 'q4': 'easy'}
    """
    strata: dict[str, Stratum] = {}
    for question, value in single_agent_accuracy.items():
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"accuracy for {question!r} is {value}, outside [0, 1]")
        strata[question] = "hard" if value < 0.3 else "easy" if value > 0.7 else "medium"
    return strata


def by_stratum(scores: Mapping[str, float], strata: Mapping[str, Stratum]) -> dict[Stratum, Interval]:
    """Accuracy (with Wilson interval) per stratum; every scored id must have a stratum.

    >>> result = by_stratum({"q1": 1.0, "q2": 0.0, "q3": 1.0}, {"q1": "hard", "q2": "hard", "q3": "easy"})
    >>> result["hard"].mean, result["medium"].n, result["easy"].mean
    (0.5, 0, 1.0)
    """
    missing = [question for question in scores if question not in strata]
    if missing:
        raise ValueError(f"{len(missing)} scored ids have no stratum, e.g. {missing[0]!r}")
    return {
        stratum: accuracy([score for question, score in scores.items() if strata[question] == stratum])
        for stratum in STRATA
    }


@dataclass(frozen=True)
class McNemar:
    """Paired test on discordant pairs; `statistic` is the chi-square value (None for the exact test)."""

    a_only: int
    b_only: int
    p_value: float
    method: Literal["exact", "chi2"]
    statistic: float | None = None


EXACT_BELOW = 25  # use the exact binomial test when there are fewer discordant pairs


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """McNemar's test on two systems' per-question correctness.

    With fewer than 25 discordant pairs: exact two-sided binomial test,
    p = min(1, 2 * P[X <= min(a_only, b_only)]) for X ~ Binomial(a_only + b_only, 1/2).
    Otherwise: chi-square with continuity correction, (|a_only - b_only| - 1)^2 / (a_only + b_only), 1 df.

    >>> mcnemar([True] * 6 + [False], [False] * 6 + [True])  # 2 * (1 + 7) / 2**7
    McNemar(a_only=6, b_only=1, p_value=0.125, method='exact', statistic=None)
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    a_only = sum(bool(x) and not bool(y) for x, y in zip(a, b, strict=True))
    b_only = sum(bool(y) and not bool(x) for x, y in zip(a, b, strict=True))
    discordant = a_only + b_only
    if discordant < EXACT_BELOW:
        tail = sum(math.comb(discordant, k) for k in range(min(a_only, b_only) + 1)) / 2**discordant
        return McNemar(a_only, b_only, min(1.0, 2 * tail), "exact")
    statistic = (abs(a_only - b_only) - 1) ** 2 / discordant
    return McNemar(a_only, b_only, math.erfc(math.sqrt(statistic / 2)), "chi2", statistic)


@dataclass(frozen=True)
class Bootstrap:
    """Mean of a - b over paired items, with a 95% percentile interval."""

    mean_difference: float
    low: float
    high: float
    n_resamples: int


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n_resamples: int = 10000, seed: int = 0) -> Bootstrap:
    """Paired bootstrap of mean(a) - mean(b): resample items with replacement, take 2.5/97.5 percentiles.

    >>> paired_bootstrap([1, 1, 1, 1], [0, 0, 0, 0])
    Bootstrap(mean_difference=1.0, low=1.0, high=1.0, n_resamples=10000)
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"need two non-empty paired samples, got {len(a)} and {len(b)}")
    differences = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = [differences[rng.integers(0, len(differences), len(differences))].mean() for _ in range(n_resamples)]
    low, high = np.percentile(means, [2.5, 97.5])
    return Bootstrap(float(differences.mean()), float(low), float(high), n_resamples)
