"""The fitted calibrator: lowers ECE on over-confident debates, is saved in the program, calibrates what it reports."""

from __future__ import annotations

import json
import random
import re

import pytest
from scripts import proposal

from madspy.calibrate import row_outcome
from madspy.cli import main
from madspy.evaluation import EvalRow
from madspy.optimizers.compile import calibration_quality
from madspy.optimizers.metrics import ece
from madspy.optimizers.traces import ProposalTrace as P
from madspy.programs.artifact import load_program
from madspy.programs.calibration import FEATURES, Calibrator
from madspy.programs.presets import preset
from madspy.testing import Turn

PERSONAS = [a.persona for a in preset("debate").agents]
EXPRESSION = re.compile(r"What is the result of (.*?)\?")


def seen(confidence: float, share: float, right: bool, first: float | None = None, flagged: bool = False):
    """One debate's (signals, right)."""
    share_first = share if first is None else first
    return {"confidence": confidence, "vote_share": share, "first_agreement": share_first, "flagged": flagged}, right


def test_platt_scaling_lowers_ece_on_an_over_confident_set():
    rng = random.Random(0)
    # Stated 0.9 throughout; right 90% of the time when all agents agree, 20% when they split.
    outcomes = [seen(0.9, 1.0, rng.random() < 0.9) for _ in range(60)] + [
        seen(0.9, 0.67, rng.random() < 0.2) for _ in range(60)
    ]
    calibrator = Calibrator.fit(outcomes)
    correct = [c for _, c in outcomes]
    before = ece([s["confidence"] for s, _ in outcomes], correct)
    after = ece([calibrator(s) for s, _ in outcomes], correct)
    assert before > 0.3 and after < 0.1
    assert Calibrator.model_validate_json(calibrator.model_dump_json()) == calibrator


def test_the_checks_flag_and_first_round_agreement_separate_what_stated_confidence_cannot():
    # Every debate says 0.9 with a full final vote; the wrong ones were flagged by a check or split at round 0.
    outcomes = [seen(0.9, 1.0, True, first=1.0)] * 20 + [seen(0.9, 1.0, False, first=1.0, flagged=True)] * 10
    outcomes += [seen(0.9, 1.0, False, first=0.34)] * 10
    full = Calibrator.fit(outcomes)
    stated = Calibrator.fit(outcomes, features=("confidence", "vote_share"))
    assert calibration_quality(full, outcomes)["auroc_after"] == 1.0
    assert not calibration_quality(stated, outcomes)["ranks"]  # what it reads is the same for all
    assert full.features == FEATURES and len(full.weights) == len(FEATURES) + 1


def test_the_calibrators_features_round_trip_and_old_files_still_load():
    calibrator = Calibrator.fit([seen(0.9, 1.0, True)] * 3 + [seen(0.9, 0.5, False, flagged=True)] * 3)
    assert Calibrator.model_validate_json(calibrator.model_dump_json()) == calibrator
    old = Calibrator.model_validate({"kind": "platt", "weights": [0.1, 0.5, 2.0], "n": 54})  # saved before features
    assert old.features == ("confidence", "vote_share") and 0 < old(seen(0.9, 1.0, True)[0]) < 1
    with pytest.raises(ValueError, match="needs 3 weights"):
        Calibrator.model_validate({"weights": [0.1, 0.5], "n": 4})
    with pytest.raises(ValueError, match="calibrator features"):
        Calibrator.fit([seen(0.9, 1.0, True), seen(0.9, 0.5, False)], features=("mood",))


def test_a_calibrator_needs_right_and_wrong_outcomes():
    with pytest.raises(ValueError, match="some right and some wrong"):
        Calibrator.fit([seen(0.9, 1.0, True)] * 5)


def script(turn: Turn):
    """Every agent right when the gold is a multiple of 3; else agents 1 and 2 agree on gold + 1. Always 0.9 sure."""
    gold = eval(EXPRESSION.search(turn.inputs["question"]).group(1))
    if turn.role in ("proposer", "reviser"):
        wrong = gold % 3 != 0 and PERSONAS.index(turn.inputs["persona"]) != 0
        return proposal(str(gold + wrong), confidence=0.9)
    return "unexpected role"


def test_compile_fits_a_calibrator_saves_it_and_the_program_reports_calibrated_confidence(scripted, tmp_path):
    model, out = scripted(script), tmp_path / "calibrated.json"
    argv = ["compile", "--task", "arithmetic", "--model", model, "--optimizer", "bootstrap", "--protocol", "majority"]
    argv += ["--train", "2", "--dev", "24", "--calibrate", "--keep", "compiled"]
    assert main([*argv, "--yes", "--out", str(out)]) == 0
    manifest = json.loads(out.read_text())["manifest"]["calibration"]
    assert manifest["fitted"] and manifest["n"] == 24
    assert manifest["ece_10_after"] < manifest["ece_10_before"]
    program = load_program(out)
    assert program.config.calibrator is not None
    result = program(question="What is the result of 2+4?\n\nAnswer with a single number.")  # all agree: right
    decision = result.transcript.decision
    assert decision.confidence == 0.9  # the raw confidence stays in the transcript
    assert result.confidence == decision.calibrated_confidence == program.config.calibrator(decision.signals)
    assert set(decision.signals) == set(FEATURES) and decision.signals["first_agreement"] == 1.0
    split = program(question="What is the result of 2+5?\n\nAnswer with a single number.")  # a 2-1 split
    assert split.transcript.decision.vote_share < 1 and split.confidence < result.confidence


def test_a_row_answered_in_an_earlier_rounds_wording_gets_its_vote_share():
    """With evidence-only flips a decision may report an answer as an earlier round wrote it ("$391"): its share of
    the last round's votes is still found (it was 0 when only the last round's wording was matched)."""

    said = [P(round=0, agent=0, answer="$391", correct=True, key="391")]
    said += [
        P(round=1, agent=a, answer=ans, correct=ans == "391", key=ans) for a, ans in enumerate(["391", "391", "7"])
    ]
    row = EvalRow(
        program="debate",
        id="q",
        gold="391",
        answer="$391",
        correct=True,
        confidence=0.8,
        status="converged",
        proposals=said,
    )
    assert row_outcome(row) == ({"confidence": 0.8, "vote_share": 0.6667, "first_agreement": 1.0, "flagged": 0.0}, True)


def test_a_calibrator_that_learned_only_the_base_rate_is_reported_as_such():
    # Nothing it reads carries signal: every debate says 0.9 with a full vote, half of them right.
    flat = [seen(0.9, 1.0, i % 2 == 0) for i in range(40)]
    calibrator = Calibrator.fit(flat)
    report = calibration_quality(calibrator, flat)
    assert calibrator.base_rate == 0.5 and report["distinct_after"] == 1 and not report["ranks"]
    assert report["auroc_after"] == 0.5 and report["ece_10_after"] == pytest.approx(report["ece_10_constant"], abs=0.01)
    # With a vote share that separates right from wrong, it ranks, and beats the constant's Brier.
    signal = [seen(0.9, 1.0 if i % 2 == 0 else 0.34, i % 2 == 0) for i in range(40)]
    report = calibration_quality(Calibrator.fit(signal), signal)
    assert report["ranks"] and report["auroc_after"] == 1.0 and report["brier_after"] < report["brier_constant"]
