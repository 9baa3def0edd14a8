"""Real debates on the embedded SmolLM2-135M model, through LiteLLM and llama.cpp.

The model's words differ between llama.cpp builds (it is compiled for the CPU it is built on),
so these tests assert only what holds whatever the model says: every call reached the model and
was billed, the debate stopped for a reason its settings allow and says so, the transcript
round-trips, calls on one in-process model never overlap, and the answer shown is one clean line.
What the model cannot be relied on to do (give usable answers, flip, agree) is tested with the
scripted provider.
"""

from __future__ import annotations

import itertools

import pytest

from madspy.programs import Debate, DebateConfig, Transcript

pytestmark = pytest.mark.local_model
STATUSES = {"converged", "convergence_failed", "degraded", "undetermined", "failed"}


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_a_real_debate_on_the_embedded_model_has_the_full_structure(temperature):
    config = DebateConfig.with_agents(
        2, rounds=2, max_tokens=96, cache=False, stop={"stable_rounds": 0, "agreement_gate": None}
    )
    config = config.updated(agents=[a.model_dump() | {"temperature": temperature} for a in config.agents])
    result = Debate(config)(question="What is 17 * 23?")
    t = result.transcript
    assert result.status in STATUSES
    # Stop rules are off: the debate ends at its last round, or after a round with no usable answer.
    assert result.stop_reason in {"max_rounds", "all_agents_failed"}
    assert [r.index for r in t.rounds] == ([0, 1] if result.stop_reason == "max_rounds" else list(range(len(t.rounds))))
    roles = [c.role for c in t.calls()]
    # Each agent answers once a round: it proposes until one of its answers succeeds, then revises.
    for agent in (0, 1):
        answered = False
        for r in t.rounds:
            mine = [c for c in r.calls if c.agent == agent and c.role in ("proposer", "reviser")]
            assert [c.role for c in mine] == ["reviser" if answered else "proposer"]
            answered = answered or mine[0].ok
    if len(t.rounds) == 2:  # the critic attacks each of round 0's proposals before the agents revise
        first = t.rounds[0].calls
        assert [c.role for c in first] == ["proposer"] * 2 + ["critic"] * sum(c.ok for c in first[:2])
    # No protocol is set, so the resolver judges whenever some round gave a usable answer.
    assert (roles[-1] == "resolver") == any(r.votes for r in t.rounds)
    assert all(c.prompt_tokens > 0 and c.latency_s > 0 for c in t.calls())
    assert all(c.completion_tokens > 0 for c in t.calls() if c.ok)
    assert result.usage["prompt_tokens"] == sum(c.prompt_tokens for c in t.calls()) > 0
    assert result.usage["calls"] == len(t.calls())
    assert Transcript.from_json(t.to_json()) == t
    calls = sorted(t.calls(), key=lambda c: c.started_s)  # one in-process model: calls run in turn, never queue
    assert all(b.started_s >= a.started_s + a.latency_s - 1e-3 for a, b in itertools.pairwise(calls))
    # Whatever the model wrote, the answer a user sees is one line without JSON or code debris.
    if result.answer is not None:
        assert result.answer.strip() and "\n" not in result.answer and "```" not in result.answer
        assert result.answer.strip()[0] not in "{}[],\"'"
    else:
        assert result.status == "failed"
