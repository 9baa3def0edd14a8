"""`madspy export-pairs`: wrong answers revised into right ones become DPO preference pairs."""

from __future__ import annotations

import json

import pytest
from scripts import critique, proposal

from madspy.cli import main
from madspy.evaluation import EvalError
from madspy.pairs import export_pairs
from madspy.programs.transcript import Call, Round, Transcript


def proposer(agent: int, rnd: int, answer: str | None) -> Call:
    if answer is None:
        return Call(role="proposer", agent=agent, round=rnd, error="Timeout")
    return Call(role="proposer", agent=agent, round=rnd, output=proposal(answer, evidence=f"critique {rnd}"))


def crafted() -> Transcript:
    """Agent 0: 390 -> 391 (a pair). Agent 1: 391 -> 392 (right to wrong: none). Agent 2: 5 -> failed -> 391."""
    answers = {0: ["390", "391", "391"], 1: ["391", "392", "392"], 2: ["5", None, "391"]}
    rounds = []
    for r in range(3):
        calls = [proposer(agent, r, mine[r]) for agent, mine in answers.items()]
        calls += [
            Call(role="critic", agent=agent, round=r, output=critique(flawed=mine[r] != "391"))
            for agent, mine in answers.items()
            if mine[r] is not None
        ]
        rounds.append(Round(index=r, calls=calls))
    return Transcript(
        question="What is 17 * 23?", config={"model": "scripted/x", "agents": [{}, {}, {"model": "m2"}]}, rounds=rounds
    )


@pytest.fixture
def eval_dir(tmp_path):
    (tmp_path / "transcripts" / "debate").mkdir(parents=True)
    crafted().save(tmp_path / "transcripts" / "debate" / "q1.json")
    (tmp_path / "settings.json").write_text(json.dumps({"task": "arithmetic"}))
    rows = [
        {
            "program": "debate",
            "id": "q1",
            "gold": "391",
            "status": "converged",
            "transcript": "transcripts/debate/q1.json",
        },
        {"program": "debate", "id": "q2", "gold": "7", "status": "invalid_input"},
    ]  # no transcript
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_pairs_from_wrong_to_right_revisions_only(eval_dir, tmp_path, capsys):
    out = tmp_path / "pairs.jsonl"
    assert main(["export-pairs", str(eval_dir), "--out", str(out)]) == 0
    assert "2 pairs written" in capsys.readouterr().out
    first, second = map(json.loads, out.read_text().splitlines())

    assert first["prompt"] == "What is 17 * 23?"
    assert first["chosen"] == "so the answer is 391\nAnswer: 391"
    assert first["rejected"] == "so the answer is 390\nAnswer: 390"
    assert first["meta"] | {"critiques": None} == {
        "agent": 0,
        "rejected_round": 0,
        "chosen_round": 1,
        "evidence_ref": "critique 1",
        "critiques": None,
        "model": "scripted/x",
        "program": "debate",
        "id": "q1",
        "gold": "391",
    }
    assert first["meta"]["critiques"] == [critique(flawed=True)]  # what the critic said of the rejected answer

    # A failed call is skipped: the revision is paired with the agent's last answer, from round 0.
    assert (second["meta"]["agent"], second["meta"]["rejected_round"], second["meta"]["chosen_round"]) == (2, 0, 2)
    assert second["rejected"].endswith("Answer: 5") and second["meta"]["model"] == "m2"


def test_not_an_eval_folder(tmp_path):
    with pytest.raises(EvalError, match="not an eval folder"):
        export_pairs(tmp_path, tmp_path / "pairs.jsonl")


def test_a_revision_to_the_gold_option_written_out_is_a_pair(tmp_path):
    """The debate counts 'Copper wire.' as B; a pair export that did not would drop the revision it rewarded."""
    question = "Which is a metal?\n\nA) wood\nB) copper wire\nC) glass"
    calls = [Call(role="proposer", agent=0, round=r, output=proposal(a)) for r, a in enumerate(["A", "Copper wire."])]
    transcript = Transcript(
        question=question,
        config={"model": "scripted/x"},
        rounds=[Round(index=r, calls=[c]) for r, c in enumerate(calls)],
    )
    (tmp_path / "transcripts").mkdir()
    transcript.save(tmp_path / "transcripts" / "q1.json")
    (tmp_path / "settings.json").write_text(json.dumps({"task": "arc_challenge"}))
    row = {"program": "debate", "id": "q1", "gold": "B", "status": "converged", "transcript": "transcripts/q1.json"}
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    assert export_pairs(tmp_path, tmp_path / "pairs.jsonl") == 1
    pair = json.loads((tmp_path / "pairs.jsonl").read_text())
    assert pair["chosen"].endswith("Answer: Copper wire.") and pair["rejected"].endswith("Answer: A")
