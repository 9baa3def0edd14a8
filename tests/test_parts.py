"""Protocols, stop rules and answer keys on hand-made votes."""

from __future__ import annotations

import pytest

from madspy.programs.answers import normalize_answer
from madspy.programs.protocols import DecisionContext, JudgeProtocol, Majority, Vote, get_protocol
from madspy.programs.stopping import ConfidentAgreement, MaxRounds, StableAnswers, first_reason
from madspy.programs.transcript import Decision


def votes(*pairs):
    return [Vote(i, a, normalize_answer(a), c) for i, (a, c) in enumerate(pairs)]


def test_majority_tie_is_broken_by_summed_confidence():
    d = Majority().decide(votes(("4", 0.9), ("5", 0.5), ("5", 0.3), ("4", 0.2)))
    assert d.answer == "4" and "no strict majority" in d.note
    assert d.confidence == pytest.approx(0.5 * (1.1 / 2))


def test_majority_counts_normalized_answers_and_keeps_a_surface_form():
    d = Majority().decide(votes(("$1,200", 0.4), ("1200.", 0.8), ("7", 0.9)))
    assert d.tally == {"1200": 2, "7": 1} and d.answer == "1200."


@pytest.mark.parametrize("protocol", ["majority", "plurality", "confidence"])
def test_a_decision_reports_its_answer_as_briefly_as_a_holder_wrote_it(protocol):
    essay = "**Answer:** Therefore, Polly can stand 160 feet away from the dragon."
    d = get_protocol(protocol).decide([Vote(0, essay, "160", 0.95), Vote(1, "160", "160", 0.6), Vote(2, "7", "7", 0.5)])
    assert d.answer == "160"


def test_judge_uses_the_judge_and_falls_back_without_one():
    vs = votes(("4", 0.9), ("5", 0.5), ("5", 0.6))
    ruling = Decision(protocol="judge", answer="4", confidence=0.7)
    assert JudgeProtocol().decide(vs, DecisionContext(judge=lambda v, t: ruling)).answer == "4"
    fallback = JudgeProtocol().decide(vs, DecisionContext(judge=lambda v, t: None))
    assert fallback.answer == "5" and "fallback" in fallback.note


def test_unknown_protocol_lists_the_known_ones():
    with pytest.raises(ValueError, match="majority, plurality, confidence, credit, unanimity, judge, free"):
        get_protocol("dictator")


def test_stop_rules():
    a, b = votes(("1", 0.9), ("1", 0.9)), votes(("1", 0.9), ("2", 0.9))
    assert ConfidentAgreement(0.85).check([a]) == "confident_agreement"
    assert ConfidentAgreement(0.95).check([a]) is None and ConfidentAgreement(0.5).check([b]) is None
    assert StableAnswers(1).check([b]) is None and StableAnswers(1).check([b, b]) == "stable_answers"
    assert StableAnswers(2).check([a, b, b]) is None and StableAnswers(2).check([b, b, b]) == "stable_answers"
    assert MaxRounds(2).check([a]) is None and MaxRounds(2).check([a, b]) == "max_rounds"
    assert first_reason([StableAnswers(1), MaxRounds(1)], [b]) == "max_rounds"


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("391", "391"),
        ("391.0", "391"),
        (" The Moon. ", "the moon"),
        ("0.50", "0.5"),
        ("", None),
        (None, None),
        ("(B)", "b"),
    ],
)
def test_answer_keys(raw, key):
    assert normalize_answer(raw) == key


def test_plurality_wins_without_majority_and_says_nothing():
    d = get_protocol("plurality").decide(votes(("4", 0.9), ("5", 0.5), ("6", 0.3)))
    assert d.answer == "4" and d.note == ""


def test_confidence_weighted_lets_two_confident_agents_beat_three_unsure_ones():
    vs = votes(("4", 0.95), ("4", 0.9), ("5", 0.3), ("5", 0.3), ("5", 0.3))
    assert Majority().decide(vs).answer == "5"
    d = get_protocol("confidence").decide(vs)
    assert d.answer == "4" and d.confidence == pytest.approx(1.85 / 2.75)


def test_credit_weighted_follows_the_ledger_which_persists(tmp_path):
    from madspy.programs.credit import CreditLedger

    ledger = CreditLedger(tmp_path / "credit.json")
    for _ in range(3):
        ledger.record({0: True, 1: False, 2: False})
    again = CreditLedger(tmp_path / "credit.json").weights()
    assert again[0] == pytest.approx(0.95**3 + 0.95**2 + 0.95 + 1) and again[1] == pytest.approx(0.95**3)
    vs = votes(("4", 0.5), ("5", 0.5), ("5", 0.5))
    assert get_protocol("credit").decide(vs, DecisionContext(credit=again)).answer == "4"
    assert get_protocol("credit").decide(vs).answer == "5"


def test_credit_is_capped(tmp_path):
    from madspy.programs.credit import CreditLedger

    ledger = CreditLedger(tmp_path / "c.json", cap=2.0)
    for _ in range(50):
        ledger.record({0: True})
    assert ledger.weights()[0] == 2.0


def test_unanimity_needs_everyone_and_falls_back():
    assert get_protocol("unanimity").decide(votes(("4", 0.5), ("4", 0.6))).note == "unanimous"
    split = get_protocol("unanimity").decide(votes(("4", 0.5), ("5", 0.6), ("5", 0.6)))
    assert split.answer == "5" and "not unanimous; majority fallback" in split.note
    ruling = Decision(protocol="judge", answer="4", confidence=0.7)
    judged = get_protocol("unanimity").decide(votes(("4", 0.5), ("5", 0.6)), DecisionContext(judge=lambda v, t: ruling))
    assert judged.answer == "4" and "judge fallback" in judged.note


def test_free_mad_scores_trajectories_and_ignores_conformity_flips():
    r0 = votes(("4", 0.8), ("5", 0.6), ("5", 0.6))
    r1 = votes(("5", 0.6), ("5", 0.6), ("5", 0.6))
    final = votes(("4", 0.9), ("5", 0.6), ("5", 0.6))
    d = get_protocol("free").decide(final, DecisionContext(history=[r0, final]))
    assert d.candidates == {"4": 1.7, "5": 2.4} and d.answer == "5"
    # every agent only echoed 5 after round 0 (conformity flips): that support does not count
    herd = DecisionContext(history=[r0, r1, final], conformity={(0, 1), (1, 1), (2, 1), (1, 2), (2, 2)})
    d = get_protocol("free").decide(final, herd)
    assert d.candidates == {"4": 1.7, "5": 1.2} and d.answer == "4"


def test_the_public_api_names_resolve():
    import madspy

    for name in madspy.__all__:
        assert getattr(madspy, name) is not None
    assert madspy.compile is not madspy.compile_program  # the object-first front door, and the named-task draw
