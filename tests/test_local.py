"""The ``local`` LiteLLM provider, mostly end to end with the embedded SmolLM2-135M."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import dspy
import litellm
import pydantic
import pytest

from madspy.core import local  # sets LITELLM_LOCAL_MODEL_COST_MAP before litellm is imported

MODEL = local.DEFAULT_MODEL


class Issue(pydantic.BaseModel):
    where: str
    problem: str


class QA(dspy.Signature):
    """Answer the question."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()
    confidence: float = dspy.OutputField()


class Reasoned(dspy.Signature):
    """Answer the question, step by step."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()
    reasoning_steps: list[str] = dspy.OutputField()
    confidence: float = dspy.OutputField()


class Critique(dspy.Signature):
    """Critique the answer."""

    answer: str = dspy.InputField()
    issues: list[Issue] = dspy.OutputField()
    verdict: Literal["flawed", "sound"] = dspy.OutputField()


@dataclass
class Call:
    optional_params: dict
    content: str
    finish_reason: str


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    """What each call hands the handler and what it answers, in order."""
    seen: list[Call] = []
    real = local.LocalLLM.completion

    def spy(self, model, messages, *args, **kwargs):  # type: ignore[no-untyped-def]
        response = real(self, model, messages, *args, **kwargs)
        choice = response.choices[0]
        seen.append(Call(dict(kwargs["optional_params"]), choice.message.content, choice.finish_reason))
        return response

    monkeypatch.setattr(local.LocalLLM, "completion", spy)
    return seen


def _lm(max_tokens: int) -> dspy.LM:
    local.register()
    return dspy.LM(MODEL, engine="litellm", max_tokens=max_tokens, temperature=0.0, cache=False, num_retries=0)


def test_unknown_alias_and_missing_file_are_clear_errors(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MADSPY_MODELS_DIR", str(tmp_path))
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    with pytest.raises(local.LocalModelError, match=f"unknown local model 'nope'.*{tmp_path}.*found: tiny"):
        local.resolve("local/nope")
    with pytest.raises(ValueError, match=r"not found.*missing\.gguf"):
        local.register(f"local/{tmp_path}/missing.gguf")


def test_a_name_finds_its_gguf_in_the_models_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MADSPY_MODELS_DIR", str(tmp_path))
    (tmp_path / "qwen-1.5b.gguf").write_bytes(b"GGUF")
    assert local.resolve("local/qwen-1.5b") == tmp_path / "qwen-1.5b.gguf"
    monkeypatch.delenv("MADSPY_MODELS_DIR")
    assert local.models_dir() == Path.home() / ".cache" / "madspy" / "models"


def test_the_engine_names_llama_cpp_pythons_version_its_libraries_and_their_features() -> None:
    import llama_cpp

    from madspy.core.models import engine_of

    engine = engine_of("local/no-such-model")  # loads nothing: a description of the build, not of a model
    assert engine == local.engine() and engine.startswith(f"llama-cpp-python {llama_cpp.__version__}, libraries ")
    assert re.fullmatch(r"llama-cpp-python \S+, libraries [0-9a-f]{12} \(CPU: [^=|]+\)", engine), engine


def test_response_format_translation() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    openai_style = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    assert local.llama_response_format(openai_style) == {"type": "json_object", "schema": local.bounded(schema)}
    bounded = local.bounded({"type": "array", "items": {"type": "string", "enum": ["x"]}})
    assert bounded == {"type": "array", "items": {"type": "string", "enum": ["x"]}, "maxItems": local.MAX_ITEMS}
    assert local.bounded(schema)["properties"]["a"]["maxLength"] == local.MAX_STRING_CHARS
    # A final answer may be a long translation: it is bounded, but far above a short string. Free-text reasoning is
    # not bounded at all (its limit is max_tokens, reported when hit).
    fields = {"reasoning": (str, ...), "notes": (list[str], ...), "answer": (str, ...)}
    propose = local.bounded(pydantic.create_model("Proposal", **fields).model_json_schema())
    assert propose["properties"]["answer"]["pattern"] == local.ANSWER_PATTERN and local.MAX_ANSWER_CHARS > 887
    assert propose["properties"]["notes"]["items"]["maxLength"] == local.MAX_STRING_CHARS
    assert propose["properties"]["reasoning"] == {"title": "Reasoning", "type": "string"}
    issues = local.bounded({"type": "array", "items": {"$ref": "#/$defs/CriticIssue"}})
    assert issues["maxItems"] == local.MAX_OBJECT_ITEMS < local.MAX_ITEMS
    assert local.llama_response_format({"type": "json_object"}) == {"type": "json_object"}
    assert local.llama_response_format({"type": "text"}) is None
    assert local.llama_response_format(None) is None
    # The grammar builder rejects a dangling $ref: plain JSON mode instead.
    dangling = {"type": "json_schema", "json_schema": {"schema": {"properties": {"x": {"$ref": "#/$defs/Gone"}}}}}
    assert local.llama_response_format(dangling) == {"type": "json_object"}


def test_register_is_idempotent_and_keeps_other_providers(tmp_path) -> None:
    gguf = tmp_path / "copy.gguf"
    gguf.write_bytes(b"")  # registration checks the file exists, it does not load it
    other = {"provider": "someone-else", "custom_handler": object()}
    saved = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [*saved, other]
    try:
        local.register()
        local.register(f"local/{gguf}")
        providers = [p["provider"] for p in litellm.custom_provider_map]
        assert providers.count("local") == 1 and "someone-else" in providers
    finally:
        litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p is not other]
    assert "local" in litellm._custom_providers
    for model in (MODEL, f"local/{gguf}"):
        assert litellm.supports_response_schema(model=model, custom_llm_provider="local")
    info = litellm.get_model_info(MODEL, custom_llm_provider="local")
    assert info["max_input_tokens"] == local.n_ctx() and info["input_cost_per_token"] == 0


@pytest.mark.local_model
def test_dspy_json_adapter_gets_schema_constrained_output(calls: list[Call]) -> None:
    with dspy.context(lm=_lm(64), adapter=dspy.JSONAdapter()), dspy.track_usage() as usage:
        pred = dspy.Predict(QA)(question="What is 2+2?")
    response_format = calls[0].optional_params["response_format"]
    assert response_format["type"] == "json_schema"
    assert set(response_format["json_schema"]["schema"]["properties"]) == {"answer", "confidence"}
    assert isinstance(pred.answer, str) and isinstance(pred.confidence, float)
    tokens = usage.get_total_tokens()[MODEL]
    assert tokens["prompt_tokens"] > 0 and tokens["completion_tokens"] > 0


@pytest.mark.local_model
def test_schema_with_list_of_strings(calls: list[Call]) -> None:
    try:
        with dspy.context(lm=_lm(100), adapter=dspy.JSONAdapter()):
            pred = dspy.Predict(Reasoned)(question="Is 7 prime?")
        assert all(isinstance(step, str) for step in pred.reasoning_steps)
        assert isinstance(pred.confidence, float)
    except dspy.utils.exceptions.AdapterParseError:
        # An answer and up to 8 steps of 200 characters do not fit 100 tokens: a reply cut there is a JSON prefix.
        assert calls[0].finish_reason == "length"
        assert calls[0].content.replace(" ", "").startswith('{"answer":')
    # The schema survived grammar conversion (no silent fall back to plain JSON).
    assert "schema" in local.llama_response_format(calls[0].optional_params["response_format"])


@pytest.mark.local_model
def test_schema_with_defs_refs_and_literal(calls: list[Call]) -> None:
    try:
        with dspy.context(lm=_lm(100), adapter=dspy.JSONAdapter()):
            pred = dspy.Predict(Critique)(answer="7 is even.")
        assert all(isinstance(issue, Issue) for issue in pred.issues)
        assert pred.verdict in ("flawed", "sound")
    except dspy.utils.exceptions.AdapterParseError:
        # At temperature 0 the 135M model tends to repeat list items until max_tokens;
        # every item it finished still has exactly the shape the grammar imposes.
        assert calls[0].finish_reason == "length"
        assert calls[0].content.replace(" ", "").startswith('{"issues":[')
        items = re.findall(r"\{[^{}]*\}", calls[0].content)
        assert items and all(Issue.model_validate_json(item) for item in items)
    assert "schema" in local.llama_response_format(calls[0].optional_params["response_format"])


@pytest.mark.local_model
def test_logprobs_in_openai_format() -> None:
    local.register()
    response = litellm.completion(
        model=MODEL,
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=6,
        temperature=0.0,
        logprobs=True,
        top_logprobs=2,
    )
    content = response.choices[0].logprobs["content"]
    assert len(content) == response.usage.completion_tokens
    assert all(t["logprob"] <= 0 and len(t["top_logprobs"]) == 2 for t in content)

    # Only this call needed the instance that keeps every position's logits (and its memory).
    path = local.resolve(MODEL)
    litellm.completion(model=MODEL, messages=[{"role": "user", "content": "Hey"}], max_tokens=2)
    with_logits, without = ([c.llm for c in local._MODELS[path, logits].contexts] for logits in (True, False))
    assert len(with_logits) == 1 and all(c._logits_all for c in with_logits)
    assert without and not any(c._logits_all for c in without)


@pytest.mark.local_model
def test_async_completion() -> None:
    local.register()
    response = asyncio.run(litellm.acompletion(model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4))
    assert response.usage.prompt_tokens > 0 and response.choices[0].finish_reason in ("stop", "length")


@pytest.mark.local_model
def test_context_helpers_and_overlong_prompt() -> None:
    local.register()
    assert local.context_limit(MODEL) == local.n_ctx()
    assert 0 < local.count_tokens(MODEL, "What is 2+2?") < 12
    prompt = "word " * (local.n_ctx() + 100)
    with pytest.raises(litellm.ContextWindowExceededError, match=rf"prompt is \d+ tokens.*context is {local.n_ctx()}"):
        litellm.completion(model=MODEL, messages=[{"role": "user", "content": prompt}], max_tokens=4)


@pytest.mark.local_model
def test_a_cached_reply_is_counted_as_the_model_billed_it() -> None:
    """DSPy's cache keeps no usage; a cache hit's tokens are counted again with the GGUF's template."""
    from madspy.programs.debate import Debate
    from madspy.programs.presets import preset

    local.register()
    messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "What is 17 times 3?"}]
    billed = litellm.completion(model=MODEL, messages=messages, max_tokens=4).usage.prompt_tokens
    assert local.count_prompt_tokens(MODEL, messages) == billed
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    config = preset("cot", model=MODEL, max_tokens=48)
    first, again = (Debate(config)(question="What is 17 times 3?").transcript.calls() for _ in range(2))
    assert [c.cached for c in first + again] == [False] * len(first) + [True] * len(again)
    assert [c.prompt_tokens for c in again] == [c.prompt_tokens for c in first]
    # A reply's tokens are its text tokenized again: what was billed, unless the model generated a sequence that
    # tokenizes another way (a degenerate truncated reply of one build: 84 for 96 billed), so close, not equal.
    for cached, billed_call in zip(again, first, strict=True):
        assert abs(cached.completion_tokens - billed_call.completion_tokens) <= max(
            2, 0.2 * billed_call.completion_tokens
        )


@pytest.mark.local_model
def test_concurrent_calls_are_serialized() -> None:
    lm = _lm(8)
    errors: list[BaseException] = []
    outputs: list[str] = []

    def call(i: int) -> None:
        try:
            outputs.extend(lm(f"Say the number {i}."))
        except BaseException as e:  # collected and asserted on below
            errors.append(e)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(outputs) == 4


@pytest.mark.local_model
def test_path_model_and_clean_shutdown(tmp_path) -> None:
    gguf = tmp_path / "model.gguf"
    shutil.copy(local.resolve(MODEL), gguf)
    script = (
        "from madspy.core import local; import litellm\n"
        f"m = 'local/{gguf}'; local.register(m)\n"
        "r = litellm.completion(model=m, messages=[{'role': 'user', 'content': 'Hi'}], max_tokens=4)\n"
        "print(r.usage.prompt_tokens)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 0
    assert "Exception" not in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    "answer, allowed",
    [
        ("391", True),
        ("C", True),
        ("-12.5", True),
        ("(B) photosynthesis", True),
        ("x" * 887, True),
        ("\\frac{1}{2}", True),
        ('the "Iliad"', True),  # escaped backslash and quotes survive
        ("", False),
        (" 391", False),
        (",", False),
        ("{ ", False),
        ("0.0}\n\nThis is how", False),
        ("```python", False),
        ("x" * (local.MAX_ANSWER_CHARS + 1), False),
    ],
)
def test_an_answer_field_is_one_short_line(answer, allowed) -> None:
    # The pattern reads a JSON string's content, as llama.cpp's schema converter applies it.
    assert bool(re.fullmatch(local.ANSWER_PATTERN.strip("^$"), json.dumps(answer)[1:-1])) is allowed


def test_the_answer_pattern_compiles_to_a_llama_cpp_grammar() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

    schema = local.bounded(pydantic.create_model("Resolution", final_answer=(str, ...)).model_json_schema())
    assert schema["properties"]["final_answer"]["pattern"] == local.ANSWER_PATTERN
    LlamaGrammar.from_string(json_schema_to_gbnf(json.dumps(schema)), verbose=False)


@pytest.mark.parametrize(
    ("reply", "looped"),
    [
        ([5] * 50, True),  # one token over and over
        (list(range(40)) * 3, True),  # a 40-token sentence said three times in a row
        (list(range(40)) * 2, False),  # said twice: not yet
        (list(range(200)), False),  # long, never repeating
        ([1, 2, 3] * 30 + list(range(10, 80)), False),  # repeated early, then moved on
        # one template per option, only the option's name differs: a walk through the options, not a loop
        ([n for name in (100, 200, 300, 400) for n in [name, *range(50)]], False),
    ],
)
def test_a_reply_is_looping_when_it_ends_with_one_block_said_three_times(reply: list[int], looped: bool) -> None:
    assert local.looping(reply) is looped


def test_the_loop_guard_reads_only_the_reply_and_resets() -> None:
    guard = local.LoopGuard()
    prompt = [9] * 100  # a repetitive prompt is not the reply's loop
    assert guard(prompt, None) is False and guard.start == 100
    assert guard([*prompt, 1, 2], None) is False
    assert guard(prompt + [4] * 50, None) is True and guard.looped
    guard.reset()
    assert (guard.start, guard.looped) == (None, False)


@pytest.mark.local_model
def test_a_looping_reply_is_stopped_and_reported_as_cut(calls: list[Call], monkeypatch) -> None:
    # Which words SmolLM2 says is not the test: a guard that sees a "loop" at the reply's fourth token
    # stands in for one, so this checks that llama.cpp stops there and the provider says "length".
    monkeypatch.setattr(local, "looping", lambda tokens: len(tokens) >= 4)
    lm = _lm(max_tokens=200)
    lm("Write a long story about a cat.")
    assert calls[-1].finish_reason == "length"
    assert lm.history[-1]["usage"]["completion_tokens"] <= 6 < 200
