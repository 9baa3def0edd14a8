"""The checks that read no step (unreadable answer, stated doubt): what they flag and what a debate does with it."""

from __future__ import annotations

from scripts import agent_of, proposal

from madspy.data.scoring import normalize_number
from madspy.programs import Debate
from madspy.programs.checks import check_proposal, checks_on
from madspy.programs.config import CriticConfig
from madspy.programs.presets import preset
from madspy.testing import Turn, calls_of

PERSONAS = [a.persona for a in preset("debate").agents]
QUESTION = "Ana has 3 bags of 3 apples. How many apples does she have?"
ONLY_THESE = {"calculator": False, "quantity_check": False}  # the preset's other checks off


def panel(answers: list[str], confidences: list[float], *, told: str, fix: str):
    """Agent i proposes answers[i] at confidences[i]; a reviser whose critiques contain ``told`` moves to ``fix``
    (confident, citing the critique); the others keep their answers."""

    def script(turn: Turn):
        i = agent_of(turn, PERSONAS)
        if turn.role == "proposer":
            return proposal(answers[i], confidence=confidences[i])
        if turn.role == "reviser":
            moved = any(told in c for c in turn.input_json("critiques"))
            return proposal(fix, 0.99, "critique 1") if moved else proposal(answers[i], confidences[i])
        return "unexpected role"

    return script


def reviser_critiques(model) -> dict[int, str]:
    return {agent_of(t, PERSONAS): " ".join(t.input_json("critiques")) for t in calls_of(model) if t.role == "reviser"}


def test_a_decisive_vote_the_proposers_doubt_is_debated_and_the_doubters_are_told(scripted):
    def run(**critic):
        model = scripted(panel(["8", "8", "9"], [0.6, 0.7, 0.99], told="below 0.95", fix="9"))
        result = Debate(preset("debate", model=model, protocol="majority", critic=ONLY_THESE | critic))(
            question=QUESTION
        )
        return model, result

    _, plain = run()
    assert plain.answer == "8" and plain.stop_reason == "decisive_vote"

    model, checked = run(doubt_below=0.95)
    assert checked.answer == "9" and len(checked.transcript.rounds) == 2
    first = checked.transcript.rounds[0].events
    assert [e.agent for e in first if e.kind == "doubted"] == [0, 1]
    told = reviser_critiques(model)
    assert "states confidence 0.60, below 0.95" in told[0] and "states confidence" not in told[2]


def test_an_answer_field_the_task_cannot_read_is_a_critique_for_its_holder(scripted):
    model = scripted(panel(["testing", "9", "8"], [0.99, 0.99, 0.99], told="holds no answer the task", fix="9"))
    config = preset("debate", model=model, protocol="majority", critic=ONLY_THESE | {"readable_check": True})
    result = Debate(config, normalize=normalize_number)(question=QUESTION)
    first = result.transcript.rounds[0].events
    assert [e.agent for e in first if e.kind == "answer_unreadable"] == [0]
    assert "'testing'" in reviser_critiques(model)[0] and result.answer == "9"


def test_checks_that_are_off_or_lack_their_input_flag_nothing():
    critic = CriticConfig(readable_check=True, doubt_below=0.9)
    assert checks_on(critic) and not checks_on(CriticConfig())
    assert check_proposal(0, "testing", [], QUESTION, critic) == ([], [])  # no normalizer, no stated confidence
    issues, events = check_proposal(0, "9", [], QUESTION, critic, confidence=0.9, normalize=normalize_number)
    assert issues == [] and events == []  # at the threshold is not below it
