"""Turn a LiteLLM model string plus sampling settings into a ``dspy.LM``.

Every model goes through LiteLLM (``engine="litellm"``), so porting a program is a
string change: ``openai/gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest``,
``ollama_chat/qwen2.5``, ``hosted_vllm/<name>``, the embedded
``local/smollm2-135m`` / ``local/<path to .gguf>`` served in-process, or ``router/<name>``: several
deployments of one model behind LiteLLM's Router (``madspy.core.routing``).

Example:
    >>> from madspy.core.models import make_lm
    >>> lm = make_lm("openai/gpt-4o-mini", temperature=0.8, max_tokens=256)
    >>> lm.model
    'openai/gpt-4o-mini'
"""

from __future__ import annotations

import importlib.metadata
import os
import unicodedata
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy
import litellm

from madspy.core.errors import InputError, ModelError

DEFAULT_MODEL = "local/smollm2-135m"
COMMON_PREFIXES = ("local/", "openai/", "anthropic/", "ollama_chat/", "ollama/", "hosted_vllm/", "gemini/", "groq/")
# Room left in the context for the role instructions, peers' answers and the reply.
PROMPT_RESERVE_TOKENS = 1024
# A question, in characters, whatever the model's context: every role reads it, so it is paid many times over.
MAX_QUESTION_CHARS = 20_000


def provider_of(model: str) -> str:
    """The LiteLLM provider prefix of a model string (``"openai/gpt-4o"`` -> ``"openai"``)."""
    return model.split("/", 1)[0] if "/" in model else ""


def one_call_at_a_time(model: str) -> bool:
    """Whether ``model`` serves one call at a time (an in-process llama.cpp model): more only queues.

    >>> one_call_at_a_time("local/smollm2-135m"), one_call_at_a_time("openai/gpt-4o-mini")
    (True, False)
    """
    return provider_of(model) == "local"


def portable_model(model: str) -> str:
    """``model`` as a saved program names it: a local GGUF in the models folder by name, not by path.

    >>> portable_model("openai/gpt-4o-mini")
    'openai/gpt-4o-mini'
    """
    if provider_of(model) != "local":
        return model
    from madspy.core import local

    return local.portable(model)


def engine_of(model: str) -> str:
    """What serves ``model``: for a ``local/`` model the llama.cpp build here (``local.engine``); for any other,
    the client that reaches it (LiteLLM's version), since a remote server's own build is not visible from here.

    >>> engine_of("openai/gpt-4o-mini").startswith("litellm ")
    True
    """
    if provider_of(model) == "local":
        from madspy.core import local

        return local.engine()
    return f"litellm {importlib.metadata.version('litellm')}"


def _ensure_provider(model: str) -> None:
    """Register the in-process llama.cpp provider on first use; reject prefixes LiteLLM does not know.

    Custom providers registered with LiteLLM (the tests' scripted one, ``madspy.testing``) pass.
    """
    provider = provider_of(model)
    if provider == "local":
        from madspy.core import local

        local.register(model)
        return
    if provider == "router":  # one name over several deployments (LiteLLM's Router, see core.routing)
        from madspy.core import routing

        routing.ensure(model)
        return
    known = {str(p.value) if hasattr(p, "value") else str(p) for p in litellm.provider_list}
    if provider not in known and provider not in litellm._custom_providers:
        raise ModelError(
            f"unknown model {model!r}: use a LiteLLM model string starting with one of "
            f"{', '.join(COMMON_PREFIXES)} (or any LiteLLM provider prefix)"
        )


def make_lm(
    model: str,
    *,
    temperature: float | None = None,
    max_tokens: int = 512,
    timeout_s: float = 120.0,
    num_retries: int = 3,
    cache: bool = True,
    api_base: str | None = None,
) -> dspy.LM:
    """Build a ``dspy.LM`` routed through LiteLLM.

    Timeouts, rate limits and server errors are retried by LiteLLM with exponential
    backoff (``num_retries``); madspy does not re-implement that. ``api_base`` points the
    model at a server (vLLM, Ollama, llama.cpp's server), as LiteLLM's ``api_base``.
    """
    _ensure_provider(model)
    return dspy.LM(
        model,
        engine="litellm",
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout_s,
        num_retries=num_retries,
        cache=cache,
        **({"api_base": api_base} if api_base else {}),
    )


def context_limit(model: str) -> int | None:
    """Input-token limit of a model, or None when LiteLLM does not know it."""
    if provider_of(model) == "local":
        from madspy.core import local

        return local.context_limit(model)
    try:
        info = litellm.get_model_info(model)
    except Exception:  # LiteLLM raises a bare Exception for models it has no card for.
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


def count_tokens(model: str, text: str) -> int:
    """Tokens of ``text`` under the model's tokenizer (LiteLLM's estimate for remote models)."""
    if provider_of(model) == "local":
        from madspy.core import local

        return local.count_tokens(model, text)
    return litellm.token_counter(model=model, text=text)


def count_prompt_tokens(model: str, messages: list[dict[str, Any]]) -> int:
    """Prompt tokens of a chat request: exact for a ``local/`` model with a chat template (what llama.cpp
    bills), LiteLLM's count (its tokenizer for the model, else an estimate) otherwise."""
    if provider_of(model) == "local":
        from madspy.core import local

        exact = local.count_prompt_tokens(model, messages)
        if exact is not None:
            return exact
    return litellm.token_counter(model=model, messages=messages)


def check_question(question: str, model: str, max_tokens: int) -> str:
    r"""Return the stripped question, or raise ``InputError`` saying what is wrong.

    >>> check_question("  What is 2+2?\n", "openai/gpt-4o-mini", 64)
    'What is 2+2?'
    >>> check_question("What is\x00 2+2?", "openai/gpt-4o-mini", 64)
    Traceback (most recent call last):
    ...
    madspy.core.errors.InputError: the question holds a control character (U+0000 at position 7); remove it
    """
    if not isinstance(question, str) or not question.strip():
        raise InputError("the question is empty")
    question = question.strip()
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(question)} characters; madspy takes at most {MAX_QUESTION_CHARS}")
    control = next(
        (i for i, ch in enumerate(question) if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r"), None
    )
    if control is not None:
        raise InputError(
            f"the question holds a control character (U+{ord(question[control]):04X} at position {control}); remove it"
        )
    limit = context_limit(model)
    if limit is None:
        return question
    room = limit - max_tokens - PROMPT_RESERVE_TOKENS
    # A byte-level tokenizer makes at most one token per UTF-8 byte: skip counting short questions.
    if len(question.encode()) > room:
        n = count_tokens(model, question)
        if n > room:
            raise InputError(
                f"the question is {n} tokens; {model} has a {limit}-token context, which leaves "
                f"{max(room, 0)} tokens for a question after {max_tokens} reply tokens and "
                f"{PROMPT_RESERVE_TOKENS} for the debate prompt"
            )
    return question
