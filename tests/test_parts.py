"""Protocols, stop rules and answer keys on hand-made votes."""

from __future__ import annotations

import pytest

from madspy.programs.answers import normalize_answer
from madspy.programs.protocols import JudgeProtocol, Majority, Vote, get_protocol
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


def test_judge_uses_the_judge_and_falls_back_without_one():
    vs = votes(("4", 0.9), ("5", 0.5), ("5", 0.6))
    ruling = Decision(protocol="judge", answer="4", confidence=0.7)
    assert JudgeProtocol().decide(vs, judge=lambda v, t: ruling).answer == "4"
    fallback = JudgeProtocol().decide(vs, judge=lambda v, t: None)
    assert fallback.answer == "5" and "fallback" in fallback.note


def test_unknown_protocol_lists_the_known_ones():
    with pytest.raises(ValueError, match="majority, judge"):
        get_protocol("dictator")


def test_stop_rules():
    a, b = votes(("1", 0.9), ("1", 0.9)), votes(("1", 0.9), ("2", 0.9))
    assert ConfidentAgreement(0.85).check([a]) == "confident_agreement"
    assert ConfidentAgreement(0.95).check([a]) is None and ConfidentAgreement(0.5).check([b]) is None
    assert StableAnswers(1).check([b]) is None and StableAnswers(1).check([b, b]) == "stable_answers"
    assert StableAnswers(2).check([a, b, b]) is None and StableAnswers(2).check([b, b, b]) == "stable_answers"
    assert MaxRounds(2).check([a]) is None and MaxRounds(2).check([a, b]) == "max_rounds"
    assert first_reason([StableAnswers(1), MaxRounds(1)], [b]) == "max_rounds"


@pytest.mark.parametrize(("raw", "key"), [("391", "391"), ("391.0", "391"), (" The Moon. ", "the moon"),
                                          ("0.50", "0.5"), ("", None), (None, None), ("(B)", "b")])
def test_answer_keys(raw, key):
    assert normalize_answer(raw) == key
