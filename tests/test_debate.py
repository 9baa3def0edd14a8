"""The debate loop on scripted models: protocols, stop rules, concurrency, faults."""

from __future__ import annotations

import dspy
import litellm
import pytest
from scripts import by_agent, proposal

from madspy.core.errors import InputError
from madspy.programs import AgentConfig, Debate, DebateConfig, Transcript
from madspy.programs.answers import read_answer
from madspy.programs.transcript import EventKind

PERSONAS = ["A", "B", "C"]


def config(model: str, **settings) -> DebateConfig:
    agents = [AgentConfig(persona=p) for p in settings.pop("personas", PERSONAS)]
    return DebateConfig(model=model, agents=agents, cache=False, num_retries=0, **settings)


def test_majority_picks_most_votes_without_resolver(scripted):
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]]))
    cfg = config(model, rounds=1, protocol="majority", resolver={"enabled": False})
    result = Debate(cfg)(question="q")
    assert result.answer == "7"
    assert result.transcript.decision.tally == {"7": 2, "9": 1}
    assert result.confidence == pytest.approx(2 / 3 * 0.7)
    assert result.status == "convergence_failed" and result.stop_reason == "max_rounds"
    assert [c.role for c in result.transcript.calls()] == ["proposer"] * 3


def test_judge_lets_the_resolver_overrule_the_majority(scripted):
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]], judge="9"))
    result = Debate(config(model, rounds=1, protocol="judge"))(question="q")
    assert result.answer == "9"
    assert result.transcript.decision.protocol == "judge"
    assert result.transcript.calls()[-1].role == "resolver"
    assert result.confidence == pytest.approx(0.8)


def test_judge_falls_back_to_majority_when_resolver_fails(scripted):
    def script(turn):
        if turn.role == "resolver":
            return "no fields at all"
        return by_agent(PERSONAS, [["7"], ["7"], ["9"]])(turn)

    result = Debate(config(model := scripted(script), rounds=1, critic={"enabled": False}))(question="q")
    assert model and result.answer == "7"
    assert "majority fallback" in result.transcript.decision.note
    assert result.status == "degraded"


def test_a_judge_that_returns_the_tally_is_not_an_answer(scripted):
    from madspy.data import get_task

    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]], judge="7: 2 votes; 9: 1 vote"))
    result = Debate(
        config(model, rounds=1, protocol="judge", critic={"enabled": False}), normalize=get_task("gsm8k").normalize
    )(question="q")
    assert result.answer == "7"  # not "2", the number a normalizer reads in "7: 2 votes"
    assert "majority fallback" in result.transcript.decision.note
    assert result.transcript.rounds[-1].happened(EventKind.TALLY_ECHOED)


def test_an_answer_that_copies_the_peer_format_counts_as_its_answer(scripted):
    from madspy.data import get_task

    echoes = ["answer: 42 (confidence 0.70)", "agent 0: answer: 42 (confidence 0.70) (confidence 0.70)"]
    model = scripted(
        by_agent(PERSONAS, [["42"], ["41", echoes[0]], ["40", echoes[1]]], judge="answer: 42 (confidence 0.90)")
    )
    result = Debate(
        config(model, rounds=2, protocol="judge", critic={"enabled": False}), normalize=get_task("gsm8k").normalize
    )(question="q")
    assert result.transcript.rounds[-1].votes == {"0": "42", "1": "42", "2": "42"}  # not 0.7, the confidence
    assert result.answer == "42" and result.status == "converged"
    revised = [c for c in result.transcript.rounds[-1].calls if c.role == "reviser"]
    assert revised[2].output["answer"] == echoes[1]  # the call record keeps what the model said


def test_an_answer_that_copies_the_digest_head_counts_as_its_answer(scripted):
    # Revisers on arc_challenge wrote "D: held by 1 of 3 debaters (agent 2), mean confidence 0.80".
    from madspy.data import get_task

    head = "42: held by 1 of 3 debaters (agent 0), mean confidence 0.70"
    model = scripted(by_agent(PERSONAS, [["42"], ["41", head], ["40", head]]))
    cfg = config(
        model, rounds=2, protocol="majority", memory="digest", critic={"enabled": False}, stop={"agreement_gate": None}
    )
    result = Debate(cfg, normalize=get_task("gsm8k").normalize)(question="q")
    assert result.transcript.rounds[-1].votes == {"0": "42", "1": "42", "2": "42"}  # not 1, 3 or 0.7
    assert result.answer == "42" and result.status == "converged"


def test_an_answer_that_is_an_options_text_votes_for_its_letter(scripted):
    # The bench model answered 8 of 150 round-0 arc_challenge questions with an option's text: no vote at all.
    from madspy.data import get_task
    from madspy.optimizers.traces import debate_trace

    task, question = get_task("arc_challenge"), "Which is a metal?\n\nA) wood\nB) copper wire\nC) glass"
    model = scripted(by_agent(PERSONAS, [["B"], ["Copper wire."], ["(C)"]]))
    cfg = config(model, rounds=1, protocol="majority", critic={"enabled": False})
    result = Debate(cfg, normalize=task.normalize)(question=question)
    assert result.transcript.rounds[0].votes == {"0": "B", "1": "B) copper wire", "2": "(C)"}
    assert result.transcript.decision.tally == {"B": 2, "C": 1} and result.answer == "B"
    assert result.transcript.calls()[1].output["answer"] == "Copper wire."  # the record keeps what was said
    rows = debate_trace(result.transcript, lambda answer: task.score(answer, "B") == 1.0, task.normalize)
    assert [(p.key, p.correct) for p in rows.proposals] == [("B", True), ("B", True), ("C", False)]  # as counted
    unreadable = scripted(by_agent(PERSONAS, [["B"], ["shiny metal"], ["(C)"]]))  # names no option: still no vote
    result = Debate(
        config(unreadable, rounds=1, protocol="majority", critic={"enabled": False}),
        normalize=get_task("arc_challenge").normalize,
    )(question=question)
    assert result.transcript.rounds[0].votes == {"0": "B", "2": "(C)"}


# The bench model's `cot` answer fields on arc_challenge test questions (2026-12-07) and the options they name.
NAMED_OPTIONS = [
    ("NaCl + H2O", "A) Na + Cl_{2}\nB) NaCL + OH\nC) NaOH + Cl\nD) NaCl + H_{2}O", "D"),
    ("12", "A) 0.2 km/h^2\nB) 3.0 km/h^2\nC) 6.0 km/h^2\nD) 12.0 km/h^2", "D"),
    ("1.5", "A) 1.0 g\nB) 1.5 g\nC) 148.5 g\nD) 298.5 g", "B"),
    ("mode", "A) the mean number of eggs\nB) the median number of eggs\nC) the mode of the number of eggs", "C"),
    ("1.0 because the calculation is straightforward", "A) 80 km per hour\nB) 90 km per hour", None),
    ("eggs", "A) the mean number of eggs\nB) the median number of eggs", None),  # in both: not guessed
]


@pytest.mark.parametrize(("said", "options", "letter"), NAMED_OPTIONS)
def test_an_answer_naming_exactly_one_option_is_that_option(said, options, letter):
    from madspy.data import get_task

    task = get_task("arc_challenge")
    assert task.normalize(read_answer(said, f"Which?\n\n{options}", task.normalize)) == letter


def test_an_answer_field_holding_an_essay_is_cut_to_its_first_line(scripted):
    # SmolLM2-135M on a fresh install: the judge's final answer began "0.0}" and went on as a markdown essay.
    essay = "0.0}\n\nThis is how you can implement a JSON parsing solution.\n\n```python\nimport json\n```"
    model = scripted(
        by_agent(PERSONAS, [["**391**"], ["391\n\nBecause 17 * 23 = 391."], ["```\n391\n```"]], judge=essay)
    )
    result = Debate(config(model, rounds=1, protocol="judge", critic={"enabled": False}))(question="What is 17 * 23?")
    assert result.transcript.rounds[0].votes == {"0": "391", "1": "391", "2": "391"}
    assert result.answer == "0.0"  # wrong, but one short line: what a user sees first
    judged = result.transcript.calls()[-1]
    assert judged.role == "resolver" and judged.output["final_answer"] == essay  # the record keeps what was said


def test_a_round_without_usable_answers_ends_degraded_with_the_last_votes(scripted):
    from madspy.data import get_task

    model = scripted(by_agent(PERSONAS, [["7", "unsure"]] * 3))
    result = Debate(
        config(model, rounds=3, protocol="majority", resolver={"enabled": False}, critic={"enabled": False}),
        normalize=get_task("gsm8k").normalize,
    )(question="q")
    assert result.stop_reason == "all_agents_failed" and result.status == "degraded"
    assert result.answer == "7" and len(result.transcript.rounds) == 2


def test_confident_agreement_at_round_zero_costs_one_round(scripted):
    model = scripted(by_agent(PERSONAS, [["7"]] * 3, confidence=0.95))
    result = Debate(config(model, rounds=3))(question="q")
    assert result.stop_reason == "confident_agreement" and result.status == "converged"
    assert len(result.transcript.rounds) == 1
    assert [c.role for c in result.transcript.calls()] == ["proposer"] * 3  # no critic, no resolver


def test_agreement_below_the_gate_goes_on_debating(scripted):
    model = scripted(by_agent(PERSONAS, [["7"]] * 3, confidence=0.6))
    result = Debate(config(model, rounds=3, stop={"stable_rounds": 1}))(question="q")
    assert result.stop_reason == "stable_answers"
    assert len(result.transcript.rounds) == 2


def test_stable_answers_stop_after_k_unchanged_rounds(scripted):
    answers = [["5", "7"], ["7"], ["9", "9", "7"]]
    model = scripted(by_agent(PERSONAS, answers))
    cfg = config(model, rounds=6, protocol="majority", stop={"stable_rounds": 2, "agreement_gate": None})
    result = Debate(cfg)(question="q")
    votes = [r.votes for r in result.transcript.rounds]
    # rounds: (5,7,9) (7,7,9) (7,7,7) (7,7,7) (7,7,7) -> stable for 2 rounds after round 4
    assert len(votes) == 5 and result.stop_reason == "stable_answers"
    assert result.answer == "7" and result.status == "converged"


def test_agents_that_keep_disagreeing_have_not_converged(scripted):
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]]))
    cfg = config(model, rounds=6, protocol="majority", stop={"stable_rounds": 1, "agreement_gate": None})
    result = Debate(cfg)(question="q")
    assert result.stop_reason == "stable_answers" and len(result.transcript.rounds) == 2
    assert result.answer == "7" and result.status == "convergence_failed"


def test_max_rounds_is_a_hard_stop_and_reports_disagreement(scripted):
    flip = {"A": ["1", "2"], "B": ["2", "1"], "C": ["3", "4"]}
    count: dict[str, int] = {}

    def script(turn):
        if turn.role in ("proposer", "reviser"):
            p = turn.inputs["persona"]
            count[p] = count.get(p, 0) + 1
            return proposal(flip[p][count[p] % 2])
        return {"reasoning": "checked each step", "issues": [], "verdict": "sound"}

    cfg = config(scripted(script), rounds=4, protocol="majority", resolver={"enabled": False})
    result = Debate(cfg)(question="q")
    assert len(result.transcript.rounds) == 4
    assert result.stop_reason == "max_rounds" and result.status == "convergence_failed"


def test_revisers_see_peers_and_critiques_of_their_own_proposal(scripted):
    model = scripted(by_agent(PERSONAS, [["5", "7"], ["7"], ["7"]]))
    Debate(config(model, rounds=2, protocol="majority", resolver={"enabled": False}))(question="q")
    from madspy.testing import calls_of

    revise = next(t for t in calls_of(model) if t.role == "reviser" and t.inputs["persona"] == "A")
    peers = revise.input_json("peer_answers")
    assert len(peers) == 2 and all("answer: 7" in p for p in peers)
    assert "answer: 5" in revise.inputs["previous_answer"]
    assert any("calculation_error" in c for c in revise.input_json("critiques"))


def test_a_step_takes_as_long_as_its_slowest_call(scripted):
    latency = 0.4
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]]), latency_s=latency)
    cfg = config(
        model,
        rounds=2,
        protocol="majority",
        resolver={"enabled": False},
        critic={"enabled": False},
        stop={"stable_rounds": 0, "agreement_gate": None},
    )
    result = Debate(cfg)(question="q")
    for rnd in result.transcript.rounds:
        first_end = min(c.started_s + c.latency_s for c in rnd.calls)
        assert all(c.started_s < first_end for c in rnd.calls), "calls of one step must overlap"
        assert rnd.wall_s < 2 * latency  # sequential would be 3 * latency
    assert result.transcript.wall_s < 2 * 2 * latency


def test_one_failing_agent_degrades_but_the_debate_goes_on(scripted):
    def script(turn):
        if turn.inputs.get("persona") == "B":
            raise litellm.Timeout("backend timed out", model="x", llm_provider="scripted")
        return by_agent(PERSONAS, [["7"], ["0"], ["7"]])(turn)

    result = Debate(config(scripted(script), rounds=1, protocol="majority"))(question="q")
    assert result.answer == "7" and result.status == "degraded"
    failed = [c for c in result.transcript.calls() if c.error]
    assert len(failed) == 1 and failed[0].agent == 1 and "Timeout" in failed[0].error
    assert result.transcript.rounds[0].votes == {"0": "7", "2": "7"}


def test_all_agents_failing_returns_a_failed_result_not_an_exception(scripted):
    def script(turn):
        raise litellm.RateLimitError("429: slow down", llm_provider="scripted", model="x")

    result = Debate(config(scripted(script), rounds=3))(question="q")
    assert result.answer is None and result.status == "failed"
    assert result.stop_reason == "all_agents_failed"
    assert result.usage["failed_calls"] == 3 and len(result.transcript.rounds) == 1


def test_rate_limit_is_retried_by_litellm(scripted):
    attempts = {"n": 0}

    def script(turn):
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise litellm.RateLimitError("429", llm_provider="scripted", model="x")
        return proposal("7", 0.95)

    cfg = config(scripted(script), rounds=1, personas=["A"]).updated(num_retries=2)
    result = Debate(cfg)(question="q")
    assert result.answer == "7" and result.status == "converged"
    assert attempts["n"] == 2


@pytest.mark.parametrize("bad_reply", ["this is not the format", ""])
def test_unparsable_reply_is_retried_once_with_the_error_then_recorded(scripted, bad_reply):
    seen = []

    def script(turn):
        seen.append(turn.messages[0]["content"])
        if turn.inputs["persona"] == "A":
            return bad_reply
        if turn.inputs["persona"] == "B" and len([s for s in seen if "could not be parsed" in s]) == 0:
            return bad_reply
        return proposal("7")

    result = Debate(config(scripted(script), rounds=1, personas=["A", "B"], protocol="majority"))(question="q")
    calls = {c.agent: c for c in result.transcript.calls()}
    assert calls[0].error and calls[0].attempts == 2
    assert any("could not be parsed" in s for s in seen)
    assert result.status == "degraded"


def test_parse_retry_recovers(scripted):
    state = {"n": 0}

    def script(turn):
        state["n"] += 1
        return "garbage" if state["n"] == 1 else proposal("7", 0.9)

    result = Debate(config(scripted(script), rounds=1, personas=["A"], protocol="majority"))(question="q")
    (call,) = result.transcript.calls()
    assert call.ok and call.attempts == 2 and result.answer == "7"


def test_confidence_out_of_range_is_clamped(scripted):
    model = scripted(lambda turn: proposal("7", 7.5))
    result = Debate(config(model, rounds=1, personas=["A"], protocol="majority"))(question="q")
    assert result.transcript.calls()[0].output["confidence"] == 1.0


def test_usage_is_recorded_per_call_and_rolls_up_from_worker_threads(scripted):
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]]))
    with dspy.track_usage() as tracker:
        result = Debate(config(model, rounds=2))(question="q")
    calls = result.transcript.calls()
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)
    assert result.usage["calls"] == len(calls)
    assert result.usage["prompt_tokens"] == sum(c.prompt_tokens for c in calls)
    (outer,) = tracker.get_total_tokens().values()
    assert outer["prompt_tokens"] == result.usage["prompt_tokens"]


def test_transcript_round_trips_through_json(scripted, tmp_path):
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]]))
    transcript = Debate(config(model, rounds=2))(question="q").transcript
    transcript.save(tmp_path / "t.json")
    again = Transcript.load(tmp_path / "t.json")
    assert again == transcript
    assert again.rounds[1].calls[0].output["answer"]


@pytest.mark.parametrize("question", ["", "   \n"])
def test_empty_question_is_refused(scripted, question):
    with pytest.raises(InputError, match="empty"):
        Debate(config(scripted(lambda t: proposal("1"))))(question=question)


def test_question_longer_than_the_context_names_the_limit(scripted):
    model = scripted(lambda t: proposal("1"))
    litellm.register_model(
        {
            model: {
                "max_input_tokens": 2048,
                "max_tokens": 2048,
                "litellm_provider": "scripted",
                "mode": "chat",
                "input_cost_per_token": 0,
                "output_cost_per_token": 0,
            }
        }
    )
    with pytest.raises(InputError, match="2048-token context"):
        Debate(config(model, max_tokens=256))(question="why? " * 3000)


def test_cached_replies_still_report_their_tokens(scripted):
    model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["9"]]))
    cfg = config(model, rounds=1).updated(cache=True)
    import dspy as _dspy

    _dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    first = Debate(cfg)(question="q")
    with _dspy.track_usage() as tracker:
        again = Debate(cfg)(question="q")
    assert not any(c.cached for c in first.transcript.calls())
    assert all(c.cached for c in again.transcript.calls())
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in again.transcript.calls())
    assert tracker.get_total_tokens() == {}  # nothing billed for cached replies
