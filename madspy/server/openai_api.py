"""The OpenAI chat-completions wire format of ``madspy serve``: what a request asks, replies, chunks, errors.

A served debate program is an OpenAI "model": ``model`` names the program, the last user message is
the question and the debate's answer is ``choices[0].message.content``.

- **Messages.** Only the last ``user`` message is debated; earlier messages (system, assistant, earlier
  user turns, DSPy's demos) are ignored: a debate program brings its own role prompts. Its content is
  text, or text parts only.
- **DSPy callers.** When that message ends with DSPy's ChatAdapter request ("Respond with the
  corresponding output fields, starting with the field `[[ ## answer ## ]]` ..."), the question is its
  input fields' values without the markers (one field: its text; several: ``name: value`` paragraphs),
  and the reply is in the same format: the one output field other than ``reasoning`` holds the answer,
  ``reasoning`` (``dspy.ChainOfThought``) an account of the debate. A signature with more output fields
  is refused (400). The answer goes in as the program gave it: give the field a type it parses as (``str``
  always does); if it does not parse, DSPy retries with its JSONAdapter, whose JSON ``response_format``
  gets a 400.
- **Parameters.** ``stream`` and ``stream_options.include_usage`` are honoured. ``temperature``,
  ``top_p``, ``seed``, ``max_tokens`` and the others in ``IGNORED`` are accepted and ignored: the
  program's config sets every role's temperature and reply length. ``n`` other than 1, ``tools``,
  ``logprobs``, a ``response_format`` other than text and the others in ``REFUSED`` get a 400, as does
  any parameter not listed here. madspy's own ``budget_tokens``, ``budget_s``, ``rounds``, ``protocol``
  and ``task_kind`` work as on ``/v1/debate`` (the openai package sends them with ``extra_body``).
- **Extra field.** A reply carries ``madspy``: ``answer``, ``confidence``, ``status``, ``stop_reason``
  and ``transcript_id`` (the transcript is at ``/v1/transcripts/<id>``; the reply's ``id`` is
  ``chatcmpl-<transcript_id>``). A debate with no answer (status ``failed``) has ``content`` null.
- **Streaming.** Chunks (``chat.completion.chunk``, ``data: ...`` lines): the assistant role, one chunk
  per finished round with an empty content delta and ``madspy: {"round": ...}`` (the round as
  ``/v1/debate`` streams it; plain clients append nothing), the answer, a last chunk with
  ``finish_reason`` and the ``madspy`` field, a usage chunk when asked for, then ``data: [DONE]``. An
  error after the stream began (the server's timeout) is a ``data: {"error": ...}`` line, with no
  ``[DONE]``.
- **Errors.** ``{"error": {"message", "type", "param", "code"}}``: 400 ``invalid_request_error`` naming
  the ``param``, 401 ``invalid_api_key``, 404 ``model_not_found`` (unknown program), 413
  ``request_too_large``, 429 ``rate_limit_exceeded`` (all debate slots busy; ``Retry-After``), 504
  ``timeout`` (with ``transcript_id``, and ``x-should-retry: false`` so the openai package does not
  start the debate again), 500 ``server_error``.

Example:
    >>> ask = ask_of([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 6 * 7?"}])
    >>> ask.question, reply_content(ask, "42", account="")
    ('What is 6 * 7?', '42')
    >>> dspy_ask = ask_of([{"role": "user", "content": "[[ ## question ## ]]\\nWhat is 6 * 7?\\n\\n"
    ...     "Respond with the corresponding output fields, starting with the field `[[ ## answer ## ]]`, "
    ...     "and then ending with the marker for `[[ ## completed ## ]]`."}])
    >>> dspy_ask.question, reply_content(dspy_ask, "42", account="")
    ('What is 6 * 7?', '[[ ## answer ## ]]\\n42\\n\\n[[ ## completed ## ]]')
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from madspy.core.errors import ChatRequestError

# Accepted and ignored: a debate program sets its roles' sampling, reply length and stops itself.
IGNORED = frozenset(
    {
        "temperature",
        "top_p",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "stop",
        "max_tokens",
        "max_completion_tokens",
        "user",
        "metadata",
        "store",
        "service_tier",
        "reasoning_effort",
        "verbosity",
        "prompt_cache_key",
        "safety_identifier",
        "parallel_tool_calls",
    }
)
# Refused with a 400 unless set to the value that changes nothing (null, false, empty, or HARMLESS).
REFUSED = {
    "n": "a debate gives one answer: n must be 1",
    "tools": "a debate program calls no tools",
    "tool_choice": "a debate program calls no tools",
    "functions": "a debate program calls no functions",
    "function_call": "a debate program calls no functions",
    "logprobs": "a debate's answer has no token log-probabilities",
    "top_logprobs": "a debate's answer has no token log-probabilities",
    "response_format": "a debate answers in text (DSPy callers: use DSPy's default ChatAdapter)",
    "modalities": "a debate answers in text",
    "audio": "a debate answers in text",
    "prediction": "a debate cannot use a predicted output",
    "web_search_options": "a debate program does not search the web",
}
HARMLESS: dict[str, Any] = {"n": 1, "tool_choice": "none", "response_format": {"type": "text"}, "modalities": ["text"]}

_DSPY_REQUEST = re.compile(
    r"Respond with the corresponding output fields, starting with the field (.*?), "
    r"and then ending with the marker for `\[\[ ## completed ## \]\]`\.\s*\Z",
    re.DOTALL,
)
_FIELD = re.compile(r"`\[\[ ## (\w+) ## \]\]`")
_HEADER = re.compile(r"^\[\[ ## (\w+) ## \]\]$", re.MULTILINE)
_ERROR_TYPES = {429: "requests"}
_ERROR_CODES = {401: "invalid_api_key", 413: "request_too_large", 429: "rate_limit_exceeded", 504: "timeout"}


class ChatMessage(BaseModel):
    """One message; fields other than role and content (name, tool_calls ...) are kept and ignored."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    """OpenAI's ``stream_options``: with ``include_usage`` the last chunk of a stream carries the token usage."""

    model_config = ConfigDict(extra="ignore")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """``POST /v1/chat/completions``; other parameters land in ``model_extra`` and are checked by ``check``."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description="the served program's name (GET /v1/models)")
    messages: list[ChatMessage]
    stream: bool = False
    stream_options: StreamOptions | None = None

    def check(self, own: Collection[str]) -> dict[str, Any]:
        """Refuse what a debate cannot do; returns madspy's own parameters (names in ``own``) for the debate."""
        for name, value in (self.model_extra or {}).items():
            if name in REFUSED and value not in (None, False, [], {}, HARMLESS.get(name)):
                raise ChatRequestError(f"{name} is not supported: {REFUSED[name]}", param=name)
            if name not in REFUSED and name not in IGNORED and name not in own:
                raise ChatRequestError(f"unrecognized request argument: {name}", param=name)
        return {name: value for name, value in (self.model_extra or {}).items() if name in own}

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


@dataclass(frozen=True)
class Ask:
    """What a chat request asks: the question to debate and, for a DSPy caller, the output fields to fill."""

    question: str
    dspy_outputs: tuple[str, ...] = ()  # empty: the reply is the answer as it is


def _text(message: ChatMessage) -> str:
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    kinds = {part.get("type") for part in message.content} - {"text"}
    if kinds:
        raise ChatRequestError(
            f"the user message may hold text only, not {', '.join(sorted(map(str, kinds)))}", param="messages"
        )
    return "\n".join(str(part.get("text", "")) for part in message.content)


def ask_of(messages: list[ChatMessage] | list[dict[str, Any]]) -> Ask:
    """The question of a chat: the last user message, unwrapped from DSPy's ChatAdapter format if it is in it."""
    parsed = [m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in messages]
    users = [m for m in parsed if m.role == "user"]
    if not users:
        raise ChatRequestError("messages hold no user message: the last user message is the question", param="messages")
    text = _text(users[-1])
    request = _DSPY_REQUEST.search(text)
    if request is None:
        return Ask(text)
    outputs = tuple(_FIELD.findall(request.group(1)))
    answers = [name for name in outputs if name != "reasoning"]
    if len(answers) != 1:
        raise ChatRequestError(
            f"a debate fills one output field (and reasoning); this DSPy signature asks for {', '.join(outputs)}",
            param="messages",
        )
    parts = _HEADER.split(text[: request.start()])  # [prefix, name, value, name, value, ...]
    fields = [(name, value.strip()) for name, value in zip(parts[1::2], parts[2::2], strict=True)]
    question = fields[0][1] if len(fields) == 1 else "\n\n".join(f"{n}: {v}" for n, v in fields)
    return Ask(question, outputs)


def reply_content(ask: Ask, answer: str | None, account: str) -> str | None:
    """The assistant message: the answer, or DSPy's field sections (``reasoning`` gets ``account``)."""
    if answer is None or not ask.dspy_outputs:
        return answer
    sections = [f"[[ ## {name} ## ]]\n{account if name == 'reasoning' else answer}" for name in ask.dspy_outputs]
    return "\n\n".join([*sections, "[[ ## completed ## ]]"])


def usage(debate_usage: dict[str, int]) -> dict[str, Any]:
    """OpenAI's usage object from a debate's token totals (summed over all its calls)."""
    prompt, completion = debate_usage["prompt_tokens"], debate_usage["completion_tokens"]
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": debate_usage.get("cached_prompt_tokens", 0)},
    }


def completion(
    tid: str, model: str, content: str | None, debate_usage: dict[str, int], extra: dict[str, Any]
) -> dict[str, Any]:
    """A ``chat.completion`` object with the ``madspy`` extra field."""
    return {
        "id": f"chatcmpl-{tid}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage(debate_usage),
        "madspy": extra,
    }


def chunk(tid: str, model: str, delta: dict[str, Any] | None, finish_reason: str | None = None, **fields: Any) -> str:
    """One ``chat.completion.chunk`` as a server-sent ``data:`` line (``delta`` None: no choices)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
    body = {
        "id": f"chatcmpl-{tid}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        **fields,
    }
    return data_line(body)


def data_line(body: dict[str, Any] | str) -> str:
    """A server-sent event with only a ``data`` field, as OpenAI streams (``[DONE]`` is a bare string)."""
    return f"data: {body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)}\n\n"


def model_card(name: str, created: int, **extra: Any) -> dict[str, Any]:
    """One entry of ``GET /v1/models``."""
    return {"id": name, "object": "model", "created": created, "owned_by": "madspy", **extra}


def error_body(
    status: int, message: str, param: str | None = None, code: str | None = None, **extra: Any
) -> dict[str, Any]:
    """OpenAI's error shape; the type and code follow the status unless given."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {
        "error": {"message": message, "type": kind, "param": param, "code": code or _ERROR_CODES.get(status), **extra}
    }
