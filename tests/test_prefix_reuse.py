"""Prefix (KV) reuse: cached prompt tokens counted apart, a warm local context per prompt prefix."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import litellm
import pytest
from scripts import by_agent

from madspy.core import local
from madspy.evaluation import evaluate
from madspy.programs import Debate, DebateConfig

PERSONAS = [a.persona for a in DebateConfig.default_agents(3)]


def bare() -> SimpleNamespace:
    """A context without a model: no chat template, so the loop guard leaves its handler alone."""
    return SimpleNamespace(metadata={}, chat_format=None, chat_handler=None)


def test_cached_prompt_tokens_are_counted_apart_per_call_and_in_the_usage(scripted):
    model = scripted(by_agent(PERSONAS, [["391"], ["391"], ["401", "391"]]))
    config = DebateConfig.with_agents(
        3, model=model, rounds=2, concurrency=1, protocol="majority", stop={"agreement_gate": None, "stable_rounds": 0}
    )
    result = Debate(config)(question="What is 17 * 23?")
    calls = result.transcript.calls()
    seen: set[str] = set()
    for call in calls:  # the scripted provider caches every message before the last once it has seen them
        assert (call.cached_prompt_tokens > 0) == (call.role in seen), call  # a role's system prompt is its prefix
        assert call.cached_prompt_tokens < call.prompt_tokens
        seen.add(call.role)
    assert result.usage["cached_prompt_tokens"] == sum(c.cached_prompt_tokens for c in calls) > 0
    assert result.usage["prompt_tokens"] == sum(c.prompt_tokens for c in calls)


def test_eval_tables_show_cached_prompt_tokens(scripted, tmp_path):
    model = scripted(by_agent(PERSONAS, [["7"]] * 3))
    ev = evaluate(["cot", "debate"], "arithmetic", model, out=tmp_path, n=2, progress=False, cache=False)
    assert ev.summary.loc["debate", "cached_prompt_tokens"] > 0
    assert ev.summary.loc["debate", "cached_prompt_tokens"] < ev.summary.loc["debate", "prompt_tokens"]
    assert "cached_prompt_tokens" in ev.cost.columns


def test_a_call_goes_to_the_context_that_shares_the_most_of_its_prompt(monkeypatch):
    monkeypatch.setattr(local.llama_cpp, "Llama", lambda **kwargs: bare())  # contexts without a model
    monkeypatch.setenv("MADSPY_LOCAL_CONTEXTS", "2")
    model = local._Model(Path("x.gguf"), logprobs=False)

    def ask(system: str, user: str):
        return model.context([{"role": "system", "content": system}, {"role": "user", "content": user}])

    critic, judge = "You are a critic. " * 10, "You are a judge. " * 10
    a = ask(critic, "q1")
    assert ask(critic, "q2") is a  # the same role: its warm context
    assert ask(critic + "Your previous reply could not be parsed.", "q2") is a  # a retry shares most of it
    b = ask(judge, "q1")
    assert b is not a and ask(critic, "q3") is a and ask(judge, "q2") is b
    c = ask("You are a referee. " * 10, "q1")  # no room left: the least recently used context (the critic's)
    assert c is a and ask(judge, "q3") is b
    assert model.context() is b  # token counting takes any context


def test_a_role_with_demos_and_its_twin_without_keep_a_context_each(monkeypatch):
    monkeypatch.setattr(local.llama_cpp, "Llama", lambda **kwargs: bare())
    model = local._Model(Path("x.gguf"), logprobs=False)
    system = "You are a critic. " * 10
    demos = [{"role": "user", "content": "an example proposal " * 20}, {"role": "assistant", "content": "flawed"}] * 2

    def ask(user: str, with_demos: bool):
        messages = [
            {"role": "system", "content": system},
            *(demos if with_demos else []),
            {"role": "user", "content": user},
        ]
        return model.context(messages)

    hand, compiled = ask("q1", False), ask("q1", True)
    assert compiled is not hand  # the demos are most of its prompt: they get a warm context of their own
    for q in ("q2", "q3"):  # an A/B test alternates the two: each goes back to its own
        assert ask(q, False) is hand and ask(q, True) is compiled
    assert len(model.contexts) == 2


def test_reused_tokens():
    assert local.reused_tokens([], [1, 2]) == 0
    assert local.reused_tokens([1, 2, 3, 4], [1, 2, 5]) == 2


def _alternate(model: str) -> list[tuple[str, int, int]]:
    """Two prompt prefixes, alternating: (reply, prompt tokens, cached prompt tokens) of each call."""
    prefixes = [
        "You are a careful calculator. Answer with one number and nothing else. " * 4,
        "You translate English to French. Reply with the French sentence only. " * 4,
    ]
    out = []
    for question in ("What is 2 + 3?", "What is 7 * 6?"):
        for system in prefixes:
            r = litellm.completion(
                model=model,
                max_tokens=8,
                temperature=0.0,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
            )
            out.append(
                (r.choices[0].message.content, r.usage.prompt_tokens, r.usage.prompt_tokens_details.cached_tokens)
            )
    return out


@pytest.mark.local_model
def test_each_prompt_prefix_keeps_a_warm_context_and_answers_do_not_change(monkeypatch):
    local.register()
    runs = {}
    for contexts in ("1", "2"):
        monkeypatch.setenv("MADSPY_LOCAL_CONTEXTS", contexts)
        local.close_all()
        runs[contexts] = _alternate(local.DEFAULT_MODEL)
    local.close_all()
    single, warm = runs["1"], runs["2"]
    assert [reply for reply, _, _ in single] == [reply for reply, _, _ in warm]  # temperature 0: reuse is exact
    # Calls 3 and 4 repeat the prefixes of calls 1 and 2: a warm context takes the whole system prompt from
    # its KV cache; one shared context has just served the other prefix, so it reuses only the chat template.
    for i in (2, 3):
        assert warm[i][2] > warm[i][1] // 2 > single[i][2], (single, warm)
    assert warm[0][2] == 0 and all(0 <= cached < prompt for _, prompt, cached in single + warm)
