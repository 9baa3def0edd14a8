"""Debate mechanisms whose outcome differs when they are on and off (scripted models)."""

from __future__ import annotations

import pytest
from scripts import by_agent, critique, proposal

from madspy.programs import AgentConfig, Debate, DebateConfig
from madspy.programs.transcript import EventKind
from madspy.testing import calls_of

PERSONAS = ["A", "B", "C"]
QUESTION = "What is 6 * 7? Secret-marker-9931."


def config(model: str, **settings) -> DebateConfig:
    agents = [AgentConfig(persona=p) for p in PERSONAS]
    base = dict(
        model=model,
        agents=agents,
        cache=False,
        num_retries=0,
        protocol="majority",
        resolver={"enabled": False},
        stop={"stable_rounds": 0, "agreement_gate": None},
    )
    return DebateConfig(**base).updated(**settings)


def follower_script(turn):
    """A and B start wrong (41), C right (42). A reviser adopts 42 only when every peer it sees says 42."""
    if turn.role == "proposer":
        return proposal("42" if turn.inputs["persona"] == "C" else "41")
    if turn.role == "reviser":
        peers = turn.input_json("peer_answers")
        own = turn.inputs["previous_answer"].split()[1]
        if peers and all("answer: 42" in p for p in peers):
            return proposal("42", evidence="agent 2: 6*7 is 42, not 41")
        return proposal(own)
    if turn.role == "mask":
        return {"reasoning": "solved it", "label": "YES" if "answer: 42" in turn.inputs["memory"] else "NO"}
    return critique(flawed=False)


def test_masking_lets_an_evidence_based_minority_overturn_a_wrong_majority(scripted):
    plain = Debate(config(scripted(follower_script), rounds=2, critic={"enabled": False}))(question=QUESTION)
    masked_model = scripted(follower_script)
    masked = Debate(config(masked_model, rounds=2, critic={"enabled": False}, memory="mask_strict"))(question=QUESTION)
    assert plain.answer == "41"
    assert masked.answer == "42"
    masks = masked.transcript.rounds[1].masks
    assert [(m.agent, m.label, m.kept) for m in masks] == [(0, "NO", False), (1, "NO", False), (2, "YES", True)]
    seen = [t.input_json("peer_answers") for t in calls_of(masked_model) if t.role == "reviser"]
    assert all("answer: 41" not in p for peers in seen for p in peers)


def test_lenient_mask_keeps_not_sure_and_strict_drops_it(scripted):
    def script(turn):
        if turn.role == "mask":
            return {"reasoning": "solved it", "label": "NOT_SURE"}
        return follower_script(turn)

    for policy, kept in (("mask_lenient", True), ("mask_strict", False)):
        result = Debate(config(scripted(script), rounds=2, critic={"enabled": False}, memory=policy))(question=QUESTION)
        assert {m.kept for m in result.transcript.rounds[1].masks} == {kept}


def test_full_memory_shows_every_earlier_round(scripted):
    model = scripted(by_agent(PERSONAS, [["1", "2", "3"], ["1"], ["1"]]))
    Debate(config(model, rounds=3, critic={"enabled": False}, memory="full"))(question=QUESTION)
    last = [t for t in calls_of(model) if t.role == "reviser" and t.inputs["persona"] == "B"][-1]
    peers = last.input_json("peer_answers")
    assert any("round 0" in p for p in peers) and any("round 1" in p for p in peers) and len(peers) == 4


def conformist(evidence: str, flawed: bool = False):
    def script(turn):
        if turn.role == "proposer":
            return proposal({"A": "1", "B": "2", "C": "2"}[turn.inputs["persona"]])
        if turn.role == "reviser":
            return proposal("2", evidence=evidence if turn.inputs["persona"] == "A" else "none")
        return critique(flawed=flawed)

    return script


def test_echo_alarm_fires_on_conformity_flips_only(scripted):
    herd = Debate(config(scripted(conformist("none")), rounds=2, critic={"enabled": False}))(question=QUESTION)
    (flip,) = herd.transcript.rounds[1].flips
    assert flip.kind == "conformity" and herd.transcript.rounds[1].echo_ratio == 1.0
    (alarm,) = herd.transcript.rounds[1].happened(EventKind.ECHO_ALARM)
    assert alarm.value > alarm.threshold == 0.5

    argued = Debate(
        config(scripted(conformist("agent 1: step 2 shows the sum is 2")), rounds=2, critic={"enabled": False})
    )(question=QUESTION)
    assert argued.transcript.rounds[1].flips[0].kind == "evidence"
    assert not argued.transcript.rounds[1].happened(EventKind.ECHO_ALARM)


def test_no_devils_advocate_is_assigned_after_the_last_round(scripted):
    # Seen on held-out questions: the advocate was named in the last round, with no round left to argue.
    herd = Debate(config(scripted(conformist("none")), rounds=2, critic={"enabled": False}))(question=QUESTION)
    last = herd.transcript.rounds[-1]
    assert herd.stop_reason == "max_rounds" and last.happened(EventKind.ECHO_ALARM)
    assert not last.happened(EventKind.DEVILS_ADVOCATE)
    longer = Debate(config(scripted(conformist("none")), rounds=3, critic={"enabled": False}))(question=QUESTION)
    assert longer.transcript.rounds[1].happened(EventKind.DEVILS_ADVOCATE)


def test_echo_alarm_devils_advocate_reaches_the_next_round(scripted):
    model = scripted(conformist("none"))
    Debate(config(model, rounds=3, critic={"enabled": False}))(question=QUESTION)
    notes = [t.inputs["referee_note"] for t in calls_of(model) if t.role == "reviser"]
    round2_notes = notes[3:]
    assert any("Devil's advocate" in n for n in round2_notes) and not any(notes[:3])


def test_echo_alarm_can_stop_the_debate(scripted):
    result = Debate(
        config(scripted(conformist("none")), rounds=4, critic={"enabled": False}, echo={"reaction": "stop"})
    )(question=QUESTION)
    assert result.stop_reason == "echo_alarm" and len(result.transcript.rounds) == 2


def test_budget_stops_mid_round_and_still_answers(scripted):
    model = scripted(by_agent(PERSONAS, [["1"], ["2"], ["2"]]))
    unlimited = Debate(config(model, rounds=3))(question=QUESTION)
    proposers = sum(
        c.prompt_tokens + c.completion_tokens for c in unlimited.transcript.rounds[0].calls if c.role == "proposer"
    )
    result = Debate(config(scripted(by_agent(PERSONAS, [["1"], ["2"], ["2"]])), rounds=3, budget_tokens=proposers))(
        question=QUESTION
    )
    assert result.status == "budget_exhausted" and result.stop_reason == "budget_exhausted"
    assert result.answer == "2"
    assert [c.role for c in result.transcript.calls()] == ["proposer"] * 3  # the critic step never ran


def test_time_budget_starts_no_step_after_it_and_still_answers(scripted):
    # Round 0's three calls start at once, well inside the budget (with room for a loaded machine's thread
    # start-up); the step ends after it.
    model = scripted(by_agent(PERSONAS, [["1"], ["2"], ["2"]]), latency_s=1.0)
    result = Debate(config(model, rounds=3, protocol="judge", resolver={"enabled": True}, budget_s=0.5))(
        question=QUESTION
    )
    assert result.status == "time_exhausted" and result.stop_reason == "time_exhausted"
    assert result.answer == "2" and "time budget" in result.transcript.decision.note
    assert [c.role for c in result.transcript.calls()] == ["proposer"] * 3  # no critic, no resolver


def test_isolated_critic_never_sees_the_question(scripted):
    model = scripted(by_agent(PERSONAS, [["1"], ["2"], ["2"]]))
    Debate(config(model, rounds=2, critic={"isolated": True}))(question=QUESTION)
    critics = [t for t in calls_of(model) if t.role.startswith("critic")]
    assert critics and all(t.blind for t in critics)
    assert all("Secret-marker-9931" not in str(m["content"]) for t in critics for m in t.messages)
    model = scripted(by_agent(PERSONAS, [["1"], ["2"], ["2"]]))
    Debate(config(model, rounds=2))(question=QUESTION)
    assert all("Secret-marker-9931" in t.inputs["question"] for t in calls_of(model) if t.role == "critic")


def critic_script(confidence: float, first: list[dict], on_checklist: list[dict] | None = None):
    def script(turn):
        if turn.role in ("proposer", "reviser"):
            return proposal({"A": "1", "B": "2", "C": "2"}[turn.inputs["persona"]], confidence)
        if turn.role == "critic":
            issues = on_checklist if on_checklist is not None and "Checklist" in turn.inputs["focus"] else first
            return {"reasoning": "checked each step", "issues": issues, "verdict": "flawed" if issues else "sound"}
        if turn.role == "resolver":
            return {"final_answer": "2", "confidence": 0.5, "verification": "v", "status": "converged"}
        return "?"

    return script


STEP_ISSUE = {"location": "step 1", "issue_type": "calculation_error", "description": "1 is wrong", "evidence": "x"}
VAGUE_ISSUE = {"location": "overall", "issue_type": "contradiction", "description": "feels off", "evidence": ""}


def test_low_confidence_proposals_get_a_deeper_review(scripted):
    for confidence, deep in ((0.3, True), (0.7, False)):
        model = scripted(critic_script(confidence, []))
        Debate(config(model, rounds=2))(question=QUESTION)
        focus = [t.inputs["focus"] for t in calls_of(model) if t.role == "critic"]
        assert focus and all(("Deep review" in f) == deep for f in focus)


def test_checklist_retry_asks_a_silent_critic_once_more(scripted):
    model = scripted(critic_script(0.7, [], on_checklist=[STEP_ISSUE]))
    result = Debate(config(model, rounds=2, critic={"checklist_retry": True}))(question=QUESTION)
    critic_calls = [c for c in result.transcript.rounds[0].calls if c.role == "critic"]
    assert len(critic_calls) == 6  # three silent critics, each asked again with the checklist
    revise = [t for t in calls_of(model) if t.role == "reviser"]
    assert all(any("1 is wrong" in c for c in t.input_json("critiques")) for t in revise)
    model = scripted(critic_script(0.7, [], on_checklist=[STEP_ISSUE]))
    Debate(config(model, rounds=2))(question=QUESTION)
    revise = [t for t in calls_of(model) if t.role == "reviser"]
    assert not any("1 is wrong" in c for t in revise for c in t.input_json("critiques"))


def test_a_challenge_that_names_no_step_is_not_valid(scripted):
    model = scripted(critic_script(0.7, [VAGUE_ISSUE]))
    result = Debate(config(model, rounds=2))(question=QUESTION)
    revise = [t for t in calls_of(model) if t.role == "reviser"]
    assert all(t.input_json("critiques") == ["the critic found no valid issue"] for t in revise)
    assert {e.count for e in result.transcript.rounds[0].happened(EventKind.CHALLENGES_DROPPED)} == {1}


def test_a_confident_flagged_proposal_is_marked_for_the_resolver(scripted):
    for confidence, marked in ((0.9, True), (0.7, False)):
        model = scripted(critic_script(confidence, [STEP_ISSUE]))
        Debate(
            config(
                model,
                rounds=1,
                protocol="judge",
                resolver={"enabled": True},
                stop={"stable_rounds": 0, "agreement_gate": None},
            )
        )(question=QUESTION)
        (resolve,) = [t for t in calls_of(model) if t.role == "resolver"]
        assert all(("confident proposal the critic flagged" in c) == marked for c in resolve.input_json("critiques"))


def referee_script(
    relevance: float = 0.9, converged: bool = False, long_from_round: int | None = None, agreement: float = 0.5
):
    """Agents disagree forever; the referee reports fixed verdicts."""
    rounds = {"n": 0}

    def script(turn):
        if turn.role in ("proposer", "reviser"):
            r = turn.input_json("peer_answers")
            long = long_from_round is not None and any(f"round {long_from_round - 1}" in p for p in r or [])
            answer = {"A": "1", "B": "2", "C": "3"}[turn.inputs["persona"]]
            return {**proposal(answer), "reasoning": "x" * (2000 if long else 10)}
        if turn.role == "referee":
            rounds["n"] += 1
            return {
                "relevance": relevance,
                "converged": converged,
                "off_topic_summary": "talks about cats",
                "intervention": "You drifted to cats; answer: What is 6 * 7?" if relevance < 0.5 else "",
                "agreement": agreement,
            }
        return critique(flawed=False)

    return script


def referee_config(model, **referee):
    return config(model, rounds=4, critic={"enabled": False}, memory="full", referee={"enabled": True, **referee})


def test_referee_intervention_reaches_every_agent_next_round(scripted):
    model = scripted(referee_script(relevance=0.2))
    result = Debate(referee_config(model, max_off_topic=5))(question=QUESTION)
    notes = [t.inputs["referee_note"] for t in calls_of(model) if t.role == "reviser"]
    assert all("You drifted to cats" in n for n in notes)
    assert result.transcript.rounds[0].referee["relevance"] == 0.2
    quiet = scripted(referee_script(relevance=0.9))
    Debate(referee_config(quiet))(question=QUESTION)
    assert not any("drifted" in t.inputs["referee_note"] for t in calls_of(quiet) if t.role == "reviser")


def test_topic_anchor_is_restated_to_every_reviser(scripted):
    model = scripted(referee_script())
    Debate(referee_config(model))(question=QUESTION)
    notes = [t.inputs["referee_note"] for t in calls_of(model) if t.role == "reviser"]
    assert notes and all(QUESTION in n and "Current focus" in n for n in notes)


def test_off_topic_rounds_are_a_hard_exit(scripted):
    result = Debate(referee_config(scripted(referee_script(relevance=0.2)), max_off_topic=2))(question=QUESTION)
    assert result.stop_reason == "off_topic" and len(result.transcript.rounds) == 2


def test_referee_convergence_stops_the_debate(scripted):
    result = Debate(referee_config(scripted(referee_script(converged=True))))(question=QUESTION)
    assert result.stop_reason == "referee_converged" and len(result.transcript.rounds) == 1


def test_referee_cadence_every_k_rounds(scripted):
    cfg = referee_config(scripted(referee_script()), every=2).updated(rounds=5)
    result = Debate(cfg)(question=QUESTION)
    # the last round is never refereed: no next round could hear an intervention
    assert [r.referee is not None for r in result.transcript.rounds] == [False, True, False, True, False]


def test_referee_cadence_on_long_rounds_only(scripted):
    result = Debate(referee_config(scripted(referee_script(long_from_round=2)), cadence="long"))(question=QUESTION)
    assert [r.referee is not None for r in result.transcript.rounds] == [False, False, True, False]


@pytest.mark.parametrize(("agreement", "max_extra", "rounds"), [(0.2, 1, 5), (0.2, 2, 6), (0.2, 0, 4), (0.6, 1, 4)])
def test_debaters_far_apart_at_the_last_round_get_extra_rounds(scripted, agreement, max_extra, rounds):
    cfg = referee_config(scripted(referee_script(agreement=agreement)), extend_below=0.4, max_extra_rounds=max_extra)
    result = Debate(cfg)(question=QUESTION)
    assert len(result.transcript.rounds) == rounds and result.stop_reason == "max_rounds"
    extended = [r.index for r in result.transcript.rounds if r.happened(EventKind.EXTRA_ROUND)]
    assert extended == list(range(3, rounds - 1))
    if max_extra:  # the referee judged the last scheduled round, to decide
        assert result.transcript.rounds[3].referee["agreement"] == agreement


def test_the_compile_estimate_counts_the_extra_rounds():
    from madspy.optimizers.compile import calls_per_debate

    base = DebateConfig.with_agents(
        2,
        rounds=2,
        protocol="majority",
        resolver={"enabled": False},
        critic={"enabled": False},
        referee={"enabled": True},
    )
    assert calls_per_debate(base) == 2 * 2 + 2
    assert calls_per_debate(base.updated(referee={"extend_below": 0.4, "max_extra_rounds": 2})) == 2 * 4 + 4


def test_summary_memory_compresses_old_rounds(scripted):
    model = scripted(by_agent(PERSONAS, [["1", "2", "3", "4"], ["5"], ["6"]]))
    Debate(config(model, rounds=4, critic={"enabled": False}, memory="summary"))(question=QUESTION)
    last = [t for t in calls_of(model) if t.role == "reviser" and t.inputs["persona"] == "B"][-1]
    peers = last.input_json("peer_answers")
    assert peers[:2] == ["round 0 summary: 1 (agent 0); 6 (agent 2)", "round 1 summary: 2 (agent 0); 6 (agent 2)"]
    assert all("round 2:" in p for p in peers[2:]) and len(peers) == 4


def objective_script(with_logprobs: bool):
    """Like follower_script; the right answer (42) is the one the model is surest of."""

    def script(turn):
        reply = follower_script(turn)
        if with_logprobs and turn.role in ("proposer", "reviser"):
            reply["_mean_logprob"] = -0.1 if reply["answer"] == "42" else -2.0
        return reply

    return script


def test_objective_mask_keeps_the_most_confident_memory_without_extra_calls(scripted):
    model = scripted(objective_script(with_logprobs=True))
    result = Debate(config(model, rounds=2, critic={"enabled": False}, memory="mask_objective"))(question=QUESTION)
    assert result.answer == "42"
    masks = result.transcript.rounds[1].masks
    assert [m.kept for m in masks] == [False, False, True] and masks[2].label == "logprob -0.100"
    assert not any(t.role == "mask" for t in calls_of(model))
    assert result.transcript.rounds[0].calls[0].mean_logprob == -2.0


def test_objective_mask_falls_back_to_the_subjective_mask_with_a_note(scripted):
    model = scripted(objective_script(with_logprobs=False))
    result = Debate(config(model, rounds=2, critic={"enabled": False}, memory="mask_objective"))(question=QUESTION)
    assert result.answer == "42"
    assert result.transcript.rounds[1].happened(EventKind.NO_LOGPROBS)
    assert sum(t.role == "mask" for t in calls_of(model)) == 3


def test_ring_topology_shows_each_agent_only_its_neighbours(scripted):
    agents = ["A", "B", "C", "D", "E"]
    model = scripted(by_agent(agents, [[str(i)] for i in range(5)]))
    cfg = config(model, rounds=2, critic={"enabled": False}, topology="ring", neighbors=2).updated(
        agents=[{"persona": p} for p in agents]
    )
    Debate(cfg)(question=QUESTION)
    seen = {
        t.inputs["persona"]: sorted(p.split(":")[0] for p in t.input_json("peer_answers"))
        for t in calls_of(model)
        if t.role == "reviser"
    }
    assert seen["A"] == ["agent 1", "agent 4"] and seen["C"] == ["agent 1", "agent 3"]


def test_groups_debate_inside_and_vote_across_groups(scripted):
    agents = list("ABCDEFGHI")
    # flat vote: 7 wins 5:4; by group: (7,7,7) -> 7, (9,9,7) -> 9, (9,9,7) -> 9, so 9 wins 2:1
    answers = [[a] for a in ("7", "7", "7", "9", "9", "7", "9", "9", "7")]
    for topology, winner, tally in (("all", "7", {"7": 5, "9": 4}), ("groups", "9", {"9": 2, "7": 1})):
        model = scripted(by_agent(agents, answers))
        cfg = config(model, rounds=2, critic={"enabled": False}, topology=topology, group_size=3).updated(
            agents=[{"persona": p} for p in agents]
        )
        result = Debate(cfg)(question=QUESTION)
        assert result.answer == winner and result.transcript.decision.tally == tally
    seen = [len(t.input_json("peer_answers")) for t in calls_of(model) if t.role == "reviser"]
    assert seen == [2] * 9  # each agent sees only its own group


def test_cascade_skips_the_debate_when_one_agent_is_confident(scripted):
    for confidence, calls, reason in ((0.95, 1, "cascade_confident"), (0.6, 3, "max_rounds")):
        model = scripted(by_agent(PERSONAS, [["7"], ["7"], ["7"]], confidence=confidence))
        result = Debate(config(model, rounds=1, cascade_gate=0.9))(question=QUESTION)
        assert result.stop_reason == reason and len(result.transcript.calls()) == calls
        assert result.answer == "7"


def test_a_run_budget_is_shared_across_questions(scripted):
    from madspy.programs.budget import RunBudget

    model = scripted(by_agent(PERSONAS, [["1"], ["2"], ["2"]]))
    debate = Debate(config(model, rounds=3))
    first = debate(question=QUESTION)
    budget = RunBudget(first.transcript.usage.total_tokens + 10)
    assert debate(question=QUESTION, run_budget=budget).status != "budget_exhausted"
    second = debate(question=QUESTION, run_budget=budget)
    assert second.status == "budget_exhausted" and second.answer is not None
    assert budget.remaining < 0


def test_a_flip_citing_a_critique_the_reviser_never_read_is_conformity(scripted):
    copied = "critique 1: step 2 adds instead of multiplying"  # the reviser instruction's own example
    no_critic = Debate(config(scripted(conformist(copied)), rounds=2, critic={"enabled": False}))(question=QUESTION)
    assert no_critic.transcript.rounds[1].flips[0].kind == "conformity"
    criticised = Debate(config(scripted(conformist(copied, flawed=True)), rounds=2))(question=QUESTION)
    assert criticised.transcript.rounds[1].flips[0].kind == "evidence"  # agent A read critique 1
