"""Free-text reasoning first, bounded fields after; the format as a program setting; the plain baseline."""

from __future__ import annotations

import pytest
from scripts import critique, proposal

from madspy.data import get_task
from madspy.evaluation import build_program
from madspy.programs.answers import final_answer_in
from madspy.programs.artifact import load_program, save_program
from madspy.programs.config import DebateConfig
from madspy.programs.debate import Debate, format_proposal
from madspy.programs.formats import PLAIN_SYSTEM
from madspy.programs.presets import preset
from madspy.programs.steps import steps_of
from madspy.testing import Cut, calls_of

GSM8K = get_task("gsm8k")
REASONING = "1. 3 boxes hold 3 * 4 = 12 pens.\n2. She gives away 5: 12 - 5 = 7.\nSo she keeps 7 pens."


def test_a_free_text_reply_is_read_into_answer_confidence_and_derived_steps(scripted):
    model = scripted(lambda turn: {"reasoning": REASONING, "answer": "7", "confidence": 0.8})
    result = Debate(preset("cot", model=model))(question="Ana has 3 boxes of 4 pens and gives away 5. How many?")
    (call,) = result.transcript.calls()
    assert call.output == {"reasoning": REASONING, "answer": "7", "confidence": 0.8} and call.finish_reason is None
    assert result.answer == "7" and result.confidence == 0.8
    assert format_proposal(call.output).splitlines() == [
        "answer: 7 (confidence 0.80)",
        "step 1: 3 boxes hold 3 * 4 = 12 pens.",
        "step 2: She gives away 5: 12 - 5 = 7.",
        "step 3: So she keeps 7 pens.",
    ]


def test_a_chat_reply_that_stops_after_its_reasoning_gives_the_answer_it_boxed(scripted):
    """The bench model often ends its reasoning with a boxed answer and never opens the answer field."""
    reply = "[[ ## reasoning ## ]]\n3 * 4 = 12, and 12 - 5 = 7.\n\nSo she keeps \\(\\boxed{7}\\) pens."
    model = scripted(lambda turn: reply)
    result = Debate(preset("cot", model=model))(question="q")
    (call,) = result.transcript.calls()
    assert result.answer == "7" and call.ok and call.attempts == 1
    assert call.output["confidence"] == 0.0  # it stated none


def test_the_critics_step_must_be_a_step_the_proposal_has(scripted):
    """Steps are derived from the free text: a critique of step 1 holds, one of a step beyond the last is dropped."""

    def script(turn):
        if turn.role in ("proposer", "reviser"):
            return proposal("8") | {"reasoning": "17 + 23 = 41. So 8."}  # two derived steps
        if turn.role == "critic":
            step = "step 2" if "agent 0" not in str(turn.inputs) else "step 7"
            issues = critique(flawed=True)["issues"]
            return critique(flawed=True) | {"issues": [issues[0] | {"location": step}]}
        return {}

    model = scripted(script)
    cfg = preset("debate-v1", model=model, rounds=2, protocol="majority", resolver={"enabled": False})
    result = Debate(cfg)(question="What is 17 + 23?")
    critic_calls = [c for c in result.transcript.calls() if c.role == "critic"]
    assert critic_calls and all(c.ok for c in critic_calls)
    dropped = [e for r in result.transcript.rounds for e in r.events if e.kind == "challenges_dropped"]
    kept = [
        c
        for c in result.transcript.calls()
        if c.role == "reviser" and any("step 2" in x for x in c.inputs["critiques"])
    ]
    assert kept and not [c for c in result.transcript.calls() if c.role == "reviser" and "step 7" in str(c.inputs)]
    assert len(dropped) == sum(1 for c in critic_calls if "step 7" in str(c.output))


@pytest.mark.parametrize("program", ["cot", "plain"])
def test_a_reply_cut_by_max_tokens_is_reported_as_length_never_read(scripted, program):
    model = scripted(lambda turn: Cut("[[ ## reasoning ## ]]\n3 * 4 = 12, and then 12 - 5 = 7, so the answer is 7"))
    result = Debate(preset(program, model=model, max_tokens=64))(question="q")
    (call,) = result.transcript.calls()
    assert call.finish_reason == "length" and call.error.startswith("length: the reply reached max_tokens=64")
    assert call.attempts == 1  # not asked again: the retry would be cut too
    assert call.reply.endswith("so the answer is 7") and call.output is None  # kept for audit, never read
    assert result.answer is None and result.status == "failed" and result.usage["length_calls"] == 1


# Endings of real replies of the bench model to the plain prompt (gsm8k train, 2026-12-07), and forms it also uses.
REAL_ENDINGS = [
    ("Thus, Jimmy needs to buy \\(\\boxed{4}\\) packs of bread.", "4"),
    ("the number of bonus points Tom earned that day is:\n\\[ \\boxed{16} \\]", "16"),
    ("Thus, each student will receive \\boxed{46} stickers.", "46"),
    ("\\[ B = \\frac{24}{3} = 8 \\text{ pounds} \\]\n\nTherefore, the weight is 8 pounds.", "8"),
    ("the total time over 4 weeks is \\(40 \\times 4 = 160\\) minutes.", "160"),
    ("Earnings: $1,250.50 in all.", "1,250.50"),
    ("The correct answer is B) copper wire.", "B) copper wire."),
    ("Comparing the options, the answer is \\(\\boxed{C}\\).", "C"),
]


@pytest.mark.parametrize(("reply", "answer"), REAL_ENDINGS)
def test_plain_reads_the_boxed_value_else_the_marked_answer_else_the_last_number(reply, answer):
    assert final_answer_in(reply) == answer


def test_an_answer_field_without_a_letter_or_digit_is_read_from_the_reasoning(scripted):
    # The bench model's reply to gsm8k test-639 (2026-12-07): the right answer in the reasoning, "**" in the field.
    reasoning = "So, it will take Bob 216 seconds to dig the hole.\n\n**Final Answer:**\n216\n\n**Confidence:**\n1.0"
    model = scripted(lambda turn: {"reasoning": reasoning, "answer": "**", "confidence": 0.0})
    result = build_program("cot", GSM8K, model)(question="How long will it take him to dig the hole?")
    assert result.answer == "216" and result.status == "converged"


def test_plain_asks_the_question_alone_and_a_task_reads_its_answer(scripted):
    replies = {"What is 2+2?": "2 + 2 = 4, so the answer is \\(\\boxed{4}\\).", "What is 3+3?": "3 + 3 = 6"}
    model = scripted(lambda turn: replies[turn.inputs["question"]])
    debate = build_program("plain-sc:2", GSM8K, model)
    assert [a.temperature for a in debate.config.agents] == [0.7, 0.7] and debate.config.format == "plain"
    assert debate(question="What is 2+2?").answer == "4" and debate(question="What is 3+3?").answer == "6"
    messages = calls_of(model)[0].messages
    assert messages == [{"role": "system", "content": PLAIN_SYSTEM}, {"role": "user", "content": "What is 2+2?"}]


def test_plain_serves_agents_that_answer_once_only():
    with pytest.raises(Exception, match="format 'plain' only asks questions"):
        preset("du-mad", model="openai/m", format="plain")


def test_the_format_is_a_setting_of_the_saved_program(scripted, tmp_path):
    model = scripted(lambda turn: {"reasoning": REASONING, "answer": "7", "confidence": 0.8})
    save_program(Debate(preset("cot[format=json]", model=model)), tmp_path / "p.json")
    loaded = load_program(tmp_path / "p.json")
    assert loaded.config.format == "json"
    assert loaded(question="q").answer == "7"
    assert "JSON object" in calls_of(model)[-1].messages[0]["content"]  # the JSON adapter's request
    assert DebateConfig().format == "auto"


def test_steps_are_numbered_lines_else_lines_else_sentences():
    assert steps_of(REASONING) == [
        "3 boxes hold 3 * 4 = 12 pens.",
        "She gives away 5: 12 - 5 = 7.",
        "So she keeps 7 pens.",
    ]
    assert steps_of("Half of 12.5 is 6.25. Then add 1 to get 7.25.") == [
        "Half of 12.5 is 6.25.",
        "Then add 1 to get 7.25.",
    ]


def test_the_text_format_speaks_free_text_to_answering_roles_and_chat_to_the_others(scripted):
    """Proposers and revisers get their inputs as paragraphs and reply in free text; the critic gets DSPy's chat."""
    model = scripted(
        lambda turn: (
            critique(flawed=False)
            if turn.role == "critic"
            else {"reasoning": REASONING, "answer": "7", "confidence": 0.75, "evidence_ref": "critique 1: step 2"}
        )
    )
    cfg = preset("debate-v1", model=model, rounds=2, format="text", protocol="majority", resolver={"enabled": False})
    result = Debate(cfg)(question="Ana has 3 boxes of 4 pens and gives away 5. How many does she keep?")
    by_role = {c.role: c for c in result.transcript.calls()}
    assert by_role["proposer"].output == {
        "reasoning": REASONING + "\n\nThe final answer is $\\boxed{7}$.",
        "answer": "7",
        "confidence": 0.75,
    }
    assert by_role["reviser"].output["evidence_ref"] == "critique 1: step 2" and by_role["critic"].ok
    turns = {t.role: t for t in calls_of(model)}
    assert turns["reviser"].inputs["persona"] and turns["reviser"].inputs["question"].startswith("Ana has")
    assert (
        "[[ ## " in turns["critic"].messages[-1]["content"]
        and "[[ ## " not in turns["proposer"].messages[-1]["content"]
    )
    assert result.answer == "7" and result.confidence == 0.75
