"""The efficient default debate: debate only where it pays, one critique per distinct answer, a digest for revisers."""

from __future__ import annotations

import optuna
from scripts import REVIEWED, by_agent

from madspy.optimizers.search import efficient_default, sample_config, sample_efficient
from madspy.programs import Debate
from madspy.programs.presets import preset
from madspy.programs.protocols import Vote
from madspy.programs.stopping import DecisiveVote
from madspy.testing import calls_of

PERSONAS = [a.persona for a in preset("debate").agents]
QUESTION = "What is 17 * 23?"


def debate(model, **changes):
    return Debate(preset("debate", model=model, protocol="majority", **changes))


def test_a_decisive_first_round_stops_without_a_critic_call(scripted):
    for answers in ([["391"], ["391"], ["391"]], [["391"], ["401"], ["391"]]):  # unanimous, then 2 of 3
        model = scripted(by_agent(PERSONAS, answers))
        # (the scripted steps state none of the question's numbers, which the quantity check would debate)
        result = debate(model, critic={"enabled": True, "quantity_check": False})(question=QUESTION)
        assert result.stop_reason == "decisive_vote" and result.status == "converged" and result.answer == "391"
        assert [t.role for t in calls_of(model)] == ["proposer"] * 3
        assert len(result.transcript.rounds) == 1


def test_a_split_first_round_debates_once_without_a_critic_by_default(scripted):
    split = [["391"], ["401", "391"], ["400", "391"]]  # three answers: no two agree
    model = scripted(by_agent(PERSONAS, split))
    result = debate(model)(question=QUESTION)
    roles = [t.role for t in calls_of(model)]
    assert len(result.transcript.rounds) == 2 and result.stop_reason == "decisive_vote"  # agreed after revising
    assert roles == ["proposer"] * 3 + ["reviser"] * 3  # the default has no critic
    assert result.answer == "391"
    reviewed = scripted(by_agent(PERSONAS, split))
    debate(reviewed, critic={"enabled": True})(question=QUESTION)
    assert [t.role for t in calls_of(reviewed)].count("critic") == 3  # one per distinct answer


def test_proposals_with_one_answer_get_one_critique_shared_by_their_holders(scripted):
    model = scripted(by_agent(PERSONAS, [["391"], ["401"], ["391"]], confidence=0.7))
    debate(model, **REVIEWED)(question=QUESTION)
    critiqued = [t.input_json("proposal") for t in calls_of(model) if t.role == "critic"]
    assert len(critiqued) == 2  # one for 391 (agents 0 and 2), one for 401
    assert sorted(p.splitlines()[0] for p in critiqued) == [
        "answer: 391 (confidence 0.70)",
        "answer: 401 (confidence 0.70)",
    ]
    revisers = {t.inputs["persona"]: t for t in calls_of(model) if t.role == "reviser"}
    # Every holder of 391 reads the critique of 391's representative as its own.
    assert revisers[PERSONAS[0]].input_json("critiques") == revisers[PERSONAS[2]].input_json("critiques")
    without = scripted(by_agent(PERSONAS, [["391"], ["401"], ["391"]]))
    debate(without, critic={"enabled": True, "per_answer": False}, stop={"decisive_share": 1.0})(question=QUESTION)
    assert sum(t.role == "critic" for t in calls_of(without)) == 3


def test_the_digest_holds_each_distinct_answer_once_and_is_the_same_for_every_reviser(scripted):
    model = scripted(by_agent(PERSONAS, [["391"], ["401"], ["391"]]))
    debate(model, **REVIEWED)(question=QUESTION)
    revisers = [t for t in calls_of(model) if t.role == "reviser"]
    digests = [t.input_json("peer_answers") for t in revisers]
    assert all(d == digests[0] for d in digests)  # a shared prompt prefix for every reviser of the round
    (first, second) = digests[0]
    assert first.startswith("391: held by 2 of 3 debaters (agents 0, 2)") and "the critic flagged it" in first
    assert second.startswith("401: held by 1 of 3 debaters (agent 1)")
    assert sum("its strongest argument" in entry for entry in digests[0]) == 2


def test_a_lower_share_gate_stops_on_a_majority_and_a_confidence_gate_keeps_debating(scripted):
    majority = scripted(by_agent(PERSONAS, [["391"], ["401"], ["391"]], confidence=0.9))
    assert debate(majority, stop={"decisive_share": 1.0})(question=QUESTION).stop_reason == "max_rounds"
    assert debate(majority, stop={"decisive_share": 0.6})(question=QUESTION).stop_reason == "decisive_vote"
    unsure = scripted(by_agent(PERSONAS, [["391"], ["391"], ["391"]], confidence=0.4))
    result = debate(unsure, stop={"decisive_confidence": 0.5})(question=QUESTION)
    assert result.stop_reason == "max_rounds"


def test_the_gates_and_mechanisms_are_searchable_config_fields():
    trial = optuna.trial.FixedTrial(
        {
            "agents": 3,
            "temperature": 0.8,
            "protocol": "majority",
            "rounds": 2,
            "memory": "digest",
            "topology": "all",
            "cascade_gate": None,
            "critic": True,
            "critic_per_answer": True,
            "agreement_gate": None,
            "stable_rounds": 0,
            "echo_reaction": "none",
            "decisive_share": 2 / 3,
            "decisive_confidence": 0.5,
        }
    )
    config = sample_config(trial, "openai/m")
    assert (config.stop.decisive_share, config.stop.decisive_confidence) == (2 / 3, 0.5)
    assert config.critic.per_answer and config.memory == "digest"
    efficient = sample_efficient(
        optuna.trial.FixedTrial(
            {
                "temperature": "1.0",
                "memory": "previous",
                "critic": False,
                "critic_per_answer": False,
                "calculator": True,
                "answer_check": True,
                "quantity_check": False,
                "decisive_share": 2 / 3,
                "decisive_confidence": 0.8,
            }
        ),
        "openai/m",
    )
    assert (efficient.stop.decisive_share, efficient.stop.decisive_confidence, efficient.memory) == (
        2 / 3,
        0.8,
        "previous",
    )
    assert not efficient.critic.enabled and efficient.critic.calculator and efficient.critic.answer_check
    assert not efficient.critic.quantity_check  # on in the preset, off in this trial
    assert {a.temperature for a in efficient.agents} == {1.0}
    assert efficient.rounds == preset("debate").rounds


def test_the_efficient_space_holds_the_default_debate_and_a_two_of_three_gate():
    """The search must be able to find (and compare against) the preset it would replace."""
    default = efficient_default()
    assert default["temperature"] == "0.7-0.9" and default["decisive_share"] == 2 / 3
    config = sample_efficient(optuna.trial.FixedTrial(default), "openai/m")
    assert config == preset("debate", model="openai/m")
    two_of_three = [Vote(0, "7", "7", 0.5), Vote(1, "7", "7", 0.5), Vote(2, "8", "8", 0.5)]
    for sample in (sample_efficient, sample_config):
        trial = optuna.create_study(directions=["maximize", "minimize"]).ask()
        sample(trial, "openai/m")
        shares = [s for s in trial.distributions["decisive_share"].choices if s is not None and s < 1]
        assert shares and all(DecisiveVote(s, 0.0, agents=3).check([two_of_three]) for s in shares)


def test_on_knowledge_tasks_the_efficient_space_searches_around_the_knowledge_form():
    """A search on arc must compare against (and vary) the preset it would replace there, not the persona panel."""
    point = efficient_default("knowledge")
    assert point["temperature"] == "0.7"
    config = sample_efficient(optuna.trial.FixedTrial(point), "openai/m", "knowledge")
    assert config == preset("debate", model="openai/m", kind="knowledge")
    assert {a.persona for a in config.agents} == {preset("sc:3").agents[0].persona}
    hotter = sample_efficient(optuna.trial.FixedTrial(point | {"temperature": "1.0"}), "openai/m", "knowledge")
    assert {a.temperature for a in hotter.agents} == {1.0} and hotter.decision_protocol == "majority"
    reasoning = sample_efficient(optuna.trial.FixedTrial(efficient_default("reasoning")), "openai/m", "reasoning")
    assert reasoning == preset("debate", model="openai/m", kind="reasoning") and reasoning != config
