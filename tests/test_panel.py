"""Choosing a panel of reasoning modes by how often they are wrong together."""

from __future__ import annotations

import pytest

from madspy.cli import main
from madspy.panel import choose_panel, error_overlap
from madspy.programs.presets import preset
from madspy.rows import EvalRow


def test_the_chooser_picks_the_least_overlapping_modes_among_the_accurate():
    accuracy = {"cot": 0.70, "pot": 0.68, "plain": 0.72, "verify": 0.50}
    overlap = {
        ("cot", "plain"): 0.8,
        ("cot", "pot"): 0.4,
        ("plain", "pot"): 0.3,
        ("cot", "verify"): 0.0,
        ("plain", "verify"): 0.0,
        ("pot", "verify"): 0.0,
    }
    assert choose_panel(accuracy, overlap, size=2) == ("plain", "pot")  # verify never errs with them, but is weak
    assert choose_panel(accuracy, overlap, size=3) == ("cot", "plain", "pot")
    assert choose_panel(accuracy, overlap, size=3, margin=0.0) == ("plain", "plain", "plain")  # only one is eligible
    # with a wide margin the weak mode that never errs with the others is let in, beside the most accurate one
    assert choose_panel(accuracy, overlap, size=2, margin=0.3) == ("plain", "verify")


def test_error_overlap_is_the_share_of_errors_made_together():
    outcomes = {"a": {"q1": False, "q2": False, "q3": True, "q4": True}, "b": {"q1": False, "q2": True, "q3": True}}
    assert error_overlap(outcomes) == {("a", "b"): pytest.approx(1 / 2)}
    assert error_overlap({"a": {"q1": True}, "b": {"q1": True}}) == {("a", "b"): 0.0}


def test_pot_is_a_single_greedy_program_of_thought():
    config = preset("pot", model="openai/m")
    assert [(a.mode, a.temperature) for a in config.agents] == [("program", 0.0)] and config.rounds == 1


def test_panel_reads_an_eval_folder(tmp_path, capsys):
    right = {"cot": [1, 1, 0, 0, 1], "pot": [1, 0, 1, 1, 1], "plain": [1, 1, 0, 0, 0]}
    rows = [
        EvalRow(program=name, id=f"q{i}", gold="1", correct=bool(ok), score=float(ok), status="converged")
        for name, outcomes in right.items()
        for i, ok in enumerate(outcomes)
    ]
    (tmp_path / "rows.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows))
    assert main(["panel", str(tmp_path), "--size", "2", "--margin", "0.2"]) == 0
    assert capsys.readouterr().out.strip().endswith("panel: cot, pot")
    assert main(["panel", str(tmp_path), "--programs", "cot"]) == 2
