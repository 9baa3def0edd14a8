"""One real debate on the embedded SmolLM2-135M model, through LiteLLM and llama.cpp."""

from __future__ import annotations

import pytest

from madspy.programs import Debate, DebateConfig, Transcript

pytestmark = pytest.mark.local_model


def test_a_real_debate_on_the_embedded_model_has_the_full_structure():
    config = DebateConfig.with_agents(2, rounds=2, max_tokens=96, cache=False,
                                      stop={"stable_rounds": 0, "agreement_gate": None})
    result = Debate(config)(question="What is 17 * 23?")
    t = result.transcript
    assert result.status in {"converged", "convergence_failed", "degraded", "undetermined", "failed"}
    assert result.stop_reason == "max_rounds" and [r.index for r in t.rounds] == [0, 1]
    roles = [c.role for c in t.calls()]
    assert roles.count("proposer") == 4 and "critic" in roles and roles[-1] == "resolver"
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 and c.latency_s > 0 for c in t.calls())
    assert result.usage["prompt_tokens"] == sum(c.prompt_tokens for c in t.calls()) > 0
    assert Transcript.from_json(t.to_json()) == t
    calls = sorted(t.calls(), key=lambda c: c.started_s)  # one in-process model: calls run in turn, never queue
    assert all(b.started_s >= a.started_s + a.latency_s - 1e-3 for a, b in zip(calls, calls[1:]))
