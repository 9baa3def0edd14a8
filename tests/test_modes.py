"""Reasoning modes: an agent in program mode answers with what its program computes in the sandbox."""

from __future__ import annotations

import pytest
from scripts import proposal

from madspy.cli import main
from madspy.evaluation import program_fingerprint
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import load_program, save_program
from madspy.programs.debate import format_proposal
from madspy.programs.presets import preset
from madspy.testing import calls_of

QUESTION = "Ana has 3 boxes of 4 pens and gives away 5. How many pens does she keep?"
PROGRAM = "boxes = 3\nper_box = 4\ngiven = 5\nanswer = boxes * per_box - given"


def panel(model: str, modes: list[str], rounds: int = 1) -> DebateConfig:
    config = DebateConfig.with_agents(len(modes), model=model, rounds=rounds, protocol="majority")
    return config.with_agent_modes(modes).updated(critic={"enabled": False}, resolver={"enabled": False})


def coder(program: str, prose_answer: str = "7"):
    def script(turn):
        if turn.role == "programmer":
            return {"reasoning": "Pens in boxes, minus those given.", "program": program, "confidence": 0.9}
        return proposal(prose_answer)

    return script


def test_a_program_agents_answer_is_what_its_program_computes_in_the_sandbox(scripted):
    model = scripted(coder(PROGRAM, prose_answer="9"))
    result = Debate(panel(model, ["cot", "program", "program"]))(question=QUESTION)
    calls = result.transcript.calls()
    assert [c.role for c in calls] == ["proposer", "programmer", "programmer"]
    assert [c.output["answer"] for c in calls] == ["9", "7", "7"] and result.answer == "7"
    shown = format_proposal(calls[1].output).splitlines()  # peers and critics read the program as its steps
    assert shown[0] == "answer: 7 (confidence 0.90)" and shown[-1] == "step 5: answer = boxes * per_box - given"
    assert "persona" in calls_of(model)[1].inputs


def test_a_program_that_prints_its_result_instead_of_setting_answer_answers_the_printed_value(scripted):
    setup = "boxes = 3\nper_box = 4\ngiven = 5\n"
    for printing in ("print('Pens kept:', boxes * per_box - given)", "print(f'She keeps {boxes * per_box - given:,}')"):
        result = Debate(panel(scripted(coder(setup + printing, prose_answer="9")), ["program"]))(question=QUESTION)
        assert result.answer == "7" and result.transcript.calls()[0].ok
    two_numbers = "print(f'{boxes * per_box - given} of {boxes * per_box}')"  # which is the answer? none
    result = Debate(panel(scripted(coder(setup + two_numbers, prose_answer="9")), ["program"]))(question=QUESTION)
    assert "leaves no number" in result.transcript.calls()[0].error


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ("import os\nanswer = 1", "Import not supported"),
        ("while True:\n    pass", "ran over its limit of 2 s of CPU"),
        ("answer = 'seven'", "leaves no number in answer"),
        ("answer = pens / 0", "name 'pens' is not defined"),
    ],
)
def test_a_program_that_fails_is_a_failed_call_with_its_reason_and_the_debate_goes_on(scripted, program, reason):
    result = Debate(panel(scripted(coder(program)), ["cot", "program", "cot"]))(question=QUESTION)
    failed = [c for c in result.transcript.calls() if not c.ok]
    assert len(failed) == 1 and failed[0].role == "programmer" and reason in failed[0].error
    assert failed[0].error.startswith("ProgramFailed: the program computes no answer")
    assert result.answer == "7" and result.status == "degraded"


def test_the_mode_is_saved_with_the_program_and_is_part_of_what_it_is(scripted, tmp_path):
    model = scripted(coder(PROGRAM))
    cot = Debate(panel(model, ["cot"] * 3))
    mixed = Debate(panel(model, ["cot", "program", "cot"]))
    save_program(mixed, tmp_path / "panel.json")
    loaded = load_program(tmp_path / "panel.json")
    assert [a.mode for a in loaded.config.agents] == ["cot", "program", "cot"]
    assert program_fingerprint(loaded) == program_fingerprint(mixed) != program_fingerprint(cot)
    assert "programmer" in dict(loaded.named_predictors())


def test_run_takes_the_modes_of_the_panel(scripted, capsys):
    model = scripted(coder(PROGRAM, prose_answer="9"))
    assert main(["run", QUESTION, "--model", model, "--agent-modes", "program", "--agents", "2", "--rounds", "1"]) == 0
    assert capsys.readouterr().out.strip() == "7"
    assert main(["run", QUESTION, "--model", model, "--agent-modes", "poetry"]) == 2


def test_a_verify_agent_solves_then_checks_its_answer_backwards_in_one_call(scripted):
    def script(turn):
        if turn.role == "verifier":
            check = "Keeps 9: 12 - 9 = 3 given, but 5 were given: wrong. Keeps 12 - 5 = 7."
            return {"reasoning": "3 * 4 = 12, keeps 9.", "verification": check, "answer": "7", "confidence": 0.8}
        return proposal("9")

    model = scripted(script)
    result = Debate(panel(model, ["verify", "cot", "verify"]))(question=QUESTION)
    calls = result.transcript.calls()
    assert [c.role for c in calls] == ["verifier", "proposer", "verifier"] and result.answer == "7"
    assert "substitute" in calls_of(model)[0].messages[0]["content"]  # the verify instructions were asked
    cot, verify = Debate(panel(model, ["cot"] * 3)), Debate(panel(model, ["verify", "cot", "verify"]))
    assert program_fingerprint(cot) != program_fingerprint(verify)
    alone = Debate(preset("verify", model=model))(question=QUESTION)  # the mode's one-agent baseline
    assert [c.role for c in alone.transcript.calls()] == ["verifier"] and alone.answer == "7"


@pytest.mark.parametrize(("flip_to", "kind"), [("8", "conformity"), ("7", "evidence")])
def test_a_flip_citing_a_program_counts_as_evidence_only_for_the_number_it_computes(scripted, flip_to, kind):
    def script(turn):
        if turn.role == "programmer":
            return {"reasoning": "Pens in boxes, minus those given.", "program": PROGRAM, "confidence": 0.9}
        if turn.role == "reviser" and turn.inputs["previous_answer"].startswith("answer: 9"):
            return proposal(flip_to) | {"evidence_ref": "agent 1's program"}  # agent 1's program computes 7
        return proposal("9")

    config = panel(scripted(script), ["cot", "program", "program"], rounds=2).updated(stop={"decisive_share": None})
    result = Debate(config)(question=QUESTION)
    (flip,) = [f for r in result.transcript.rounds for f in r.flips if f.agent == 0]
    assert (flip.before, flip.after, flip.kind) == ("9", flip_to, kind)


def test_the_mode_panel_debates_only_when_its_modes_disagree(scripted):
    worked = "3 boxes of 4 pens are 3 * 4 = 12 pens; she gives away 5, so 12 - 5 = 7."  # every quantity used

    def script(verified: str):
        def answer(turn):
            if turn.role == "programmer":
                return {"reasoning": "Pens in boxes, minus those given.", "program": PROGRAM, "confidence": 0.9}
            if turn.role == "verifier":
                check = "7 + 5 = 12 = 3 * 4"
                return {"reasoning": worked, "verification": check, "answer": verified, "confidence": 0.9}
            return proposal("7") | {"reasoning": worked}

        return answer

    agree = Debate(preset("panel", model=scripted(script("7"))))(question=QUESTION)
    assert [c.role for c in agree.transcript.calls()] == ["proposer", "programmer", "verifier"]
    assert len(agree.transcript.rounds) == 1 and agree.answer == "7"
    disagree = Debate(preset("panel", model=scripted(script("8"))))(question=QUESTION)
    assert len(disagree.transcript.rounds) == 2 and {c.role for c in disagree.transcript.rounds[1].calls} == {"reviser"}
