"""Metrics, each against values computed by hand."""

import math

import pytest

from madspy.optimizers.metrics import (
    Bin,
    FlipCounts,
    accuracy,
    brier,
    by_stratum,
    cost_summary,
    critic_rates,
    difficulty_strata,
    ece,
    flip_stats,
    mcnemar,
    paired_bootstrap,
    reliability_curve,
)


def test_accuracy_wilson_interval():
    # 8/10: center = (0.8 + z^2/20) / (1 + z^2/10) = 0.71677,
    # half = z * sqrt(0.016 + z^2/400) / (1 + z^2/10) = 0.22658 -> [0.4902, 0.9433].
    result = accuracy([1] * 8 + [0] * 2)
    assert result.mean == 0.8 and result.n == 10
    assert result.low == pytest.approx(0.4902, abs=1e-4)
    assert result.high == pytest.approx(0.9433, abs=1e-4)


def test_accuracy_extremes_and_empty():
    all_right = accuracy([1.0] * 5)
    assert all_right.mean == 1.0 and all_right.high == 1.0
    # Wilson lower bound for 5/5: n / (n + z^2) = 5 / 8.8415 = 0.5655.
    assert all_right.low == pytest.approx(0.5655, abs=1e-4)
    empty = accuracy([])
    assert (empty.mean, empty.low, empty.high, empty.n) == (None, 0.0, 1.0, 0)


def test_critic_rates():
    pairs = [(False, True), (False, True), (False, False), (True, True), (True, False), (True, False), (True, False)]
    rates = critic_rates(pairs)
    assert (rates.wrong, rates.right, rates.hits, rates.false_alarms) == (3, 4, 2, 1)
    assert rates.hit_rate == pytest.approx(2 / 3)
    assert rates.false_alarm_rate == 0.25


def test_critic_rates_empty_denominators():
    only_right = critic_rates([(True, False)])
    assert only_right.hit_rate is None and only_right.false_alarm_rate == 0.0
    nothing = critic_rates([])
    assert nothing.hit_rate is None and nothing.false_alarm_rate is None


def test_brier():
    # ((0.8-1)^2 + (0.6-0)^2 + (1.0-1)^2 + (0.0-0)^2) / 4 = (0.04 + 0.36) / 4 = 0.1
    assert brier([0.8, 0.6, 1.0, 0.0], [True, False, True, False]) == pytest.approx(0.1)
    assert brier([], []) is None
    with pytest.raises(ValueError):
        brier([0.5], [True, False])
    with pytest.raises(ValueError):
        brier([1.5], [True])


def test_ece_four_points():
    # bins=10. 0.15 -> bin 1 (wrong); 0.85 and 0.95 -> bins 8 and 9; 1.0 -> last bin 9.
    # bin 1: conf 0.15, acc 0   -> gap 0.15,  weight 1/4
    # bin 8: conf 0.85, acc 1   -> gap 0.15,  weight 1/4
    # bin 9: conf (0.95+1.0)/2 = 0.975, acc 1/2 -> gap 0.475, weight 2/4
    # ECE = 0.0375 + 0.0375 + 0.2375 = 0.3125
    value = ece([0.15, 0.85, 0.95, 1.0], [False, True, True, False])
    assert value == pytest.approx(0.3125)
    assert ece([], []) is None


def test_ece_is_zero_when_calibrated():
    assert ece([0.5, 0.5], [True, False], bins=2) == pytest.approx(0.0)


def test_reliability_curve():
    curve = reliability_curve([0.15, 0.85, 0.95, 1.0], [False, True, True, False], bins=10)
    assert len(curve) == 10
    assert curve[0] == Bin(0.0, 0.1, 0, None, None)
    assert curve[1].count == 1 and curve[1].accuracy == 0.0
    assert curve[9].lower == 0.9 and curve[9].upper == 1.0
    assert curve[9].count == 2
    assert curve[9].mean_confidence == pytest.approx(0.975)
    assert curve[9].accuracy == 0.5
    assert sum(b.count for b in curve) == 4


def _call(role, agent, prompt, completion, latency, error=None, cached=False):
    return {
        "role": role,
        "agent": agent,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "latency_s": latency,
        "error": error,
        "cached": cached,
    }


def test_cost_summary():
    transcripts = [
        {
            "wall_s": 3.0,
            "rounds": [
                {"index": 0, "calls": [_call("solver", 0, 100, 20, 1.0), _call("solver", 1, 110, 30, 1.5)]},
                {"index": 1, "calls": [_call("critic", None, 50, 10, 0.5, error="timeout")]},
            ],
        },
        {
            "wall_s": 1.0,
            "rounds": [
                {"index": 0, "calls": [_call("solver", 0, 90, 25, 0.0, cached=True)]},
            ],
        },
    ]
    summary = cost_summary(transcripts)
    assert summary.questions == 2
    assert summary.mean_wall_s == 2.0
    assert (summary.total.calls, summary.total.prompt_tokens, summary.total.completion_tokens) == (4, 350, 85)
    assert summary.total.latency_s == pytest.approx(3.0)
    assert summary.total.errors == 1 and summary.total.cached == 1
    solver = summary.by_role["solver"]
    assert (solver.calls, solver.prompt_tokens, solver.completion_tokens) == (3, 300, 75)
    assert summary.by_role["critic"].errors == 1
    assert list(summary.by_round) == [0, 1]
    assert summary.by_round[0].prompt_tokens == 300
    assert summary.by_round[1].latency_s == pytest.approx(0.5)


def test_cost_summary_empty():
    summary = cost_summary([])
    assert summary.questions == 0 and summary.mean_wall_s is None and summary.total.calls == 0


def test_flip_stats():
    flips = [
        {"kind": "evidence", "before_correct": False, "after_correct": True},
        {"kind": "evidence", "before_correct": False, "after_correct": True},
        {"kind": "evidence", "before_correct": True, "after_correct": True},
        {"kind": "conformity", "before_correct": True, "after_correct": False},
        {"kind": "conformity", "before_correct": False, "after_correct": False},
    ]
    stats = flip_stats(flips)
    assert stats["evidence"] == FlipCounts(flips=3, right_to_wrong=0, wrong_to_right=2)
    assert stats["conformity"] == FlipCounts(flips=2, right_to_wrong=1, wrong_to_right=0)
    assert stats["all"] == FlipCounts(flips=5, right_to_wrong=1, wrong_to_right=2)
    assert flip_stats([]) == {"all": FlipCounts(0, 0, 0)}


def test_difficulty_strata_boundaries():
    strata = difficulty_strata({"a": 0.0, "b": 0.29, "c": 0.3, "d": 0.5, "e": 0.7, "f": 0.71, "g": 1.0})
    assert strata == {"a": "hard", "b": "hard", "c": "medium", "d": "medium", "e": "medium", "f": "easy", "g": "easy"}
    assert difficulty_strata({"x": 3 / 10})["x"] == "medium"  # 3 of 10 right is a boundary
    with pytest.raises(ValueError):
        difficulty_strata({"x": 1.2})


def test_by_stratum():
    strata = {"q1": "hard", "q2": "hard", "q3": "medium", "q4": "easy"}
    result = by_stratum({"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 0.0}, strata)
    assert list(result) == ["hard", "medium", "easy"]
    assert (result["hard"].mean, result["hard"].n) == (0.5, 2)
    assert result["medium"].mean == 1.0 and result["easy"].mean == 0.0
    with pytest.raises(ValueError, match="no stratum"):
        by_stratum({"q9": 1.0}, strata)


def test_mcnemar_exact():
    # a right only on 1 item, b right only on 6; concordant items do not matter.
    a = [True] + [False] * 6 + [True, False]
    b = [False] + [True] * 6 + [True, False]
    result = mcnemar(a, b)
    # p = 2 * (C(7,0) + C(7,1)) / 2^7 = 2 * 8 / 128 = 0.125
    assert (result.a_only, result.b_only, result.method) == (1, 6, "exact")
    assert result.p_value == pytest.approx(0.125)


def test_mcnemar_exact_caps_at_one():
    # 2 vs 2 discordant: 2 * (1 + 4 + 6) / 16 = 1.375, capped at 1.
    assert mcnemar([True, True, False, False], [False, False, True, True]).p_value == 1.0
    assert mcnemar([True], [True]).p_value == 1.0  # no discordant pairs


def test_mcnemar_chi_square():
    # 30 vs 10 discordant: chi2 = (|30 - 10| - 1)^2 / 40 = 361 / 40 = 9.025;
    # p = erfc(sqrt(9.025 / 2)) = 0.002663 (chi-square, 1 df).
    a = [True] * 30 + [False] * 10
    b = [False] * 30 + [True] * 10
    result = mcnemar(a, b)
    assert result.method == "chi2"
    assert result.statistic == pytest.approx(9.025)
    assert result.p_value == pytest.approx(0.002663, abs=1e-6)
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(4.5125)))


def test_mcnemar_length_mismatch():
    with pytest.raises(ValueError):
        mcnemar([True], [True, False])


def test_paired_bootstrap():
    a = [1, 1, 1, 0, 1, 0, 1, 1, 0, 1]
    b = [1, 0, 1, 0, 0, 0, 1, 0, 0, 1]
    result = paired_bootstrap(a, b, n_resamples=2000, seed=0)
    assert result.mean_difference == pytest.approx(0.3)  # 7/10 - 4/10
    assert result.low <= 0.3 <= result.high
    assert result.low >= 0.0 and result.high <= 0.7  # the differences are 0 or 1, three of them 1
    assert result == paired_bootstrap(a, b, n_resamples=2000, seed=0)


def test_paired_bootstrap_identical_systems():
    result = paired_bootstrap([1, 0, 1], [1, 0, 1], n_resamples=100)
    assert (result.mean_difference, result.low, result.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_bootstrap([], [])
