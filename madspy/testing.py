"""A scripted LiteLLM provider: deterministic, offline models for tests and benchmarks.

A script is a Python function that receives a ``Turn`` (which role is asked, with
which inputs, at which temperature) and returns the role's output fields as a
dict, a raw string (to play a model that returns garbage), a ``Cut`` (a reply that
reached max_tokens: finish reason ``length``), or raises an exception
(``litellm.Timeout``, ``litellm.RateLimitError``...) to play a failing backend. A
dict may carry ``_mean_logprob``: returned as token log-probabilities when the
caller asks for them.
Registered as ``scripted/<name>``, it is reached through the same
``dspy.LM(engine="litellm")`` path as a production model.

Example:
    >>> from madspy.testing import register_script
    >>> model = register_script("always-391", lambda turn: {
    ...     "answer": "391", "reasoning": "17*23=391", "confidence": 0.9,
    ...     "evidence_ref": "none", "issues": [], "verdict": "sound", "final_answer": "391",
    ...     "verification": "checked", "status": "converged"})
    >>> model
    'scripted/always-391'
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from litellm import CustomLLM
from litellm.types.utils import ModelResponse, PromptTokensDetailsWrapper, Usage

from madspy import signatures
from madspy.programs.formats import PLAIN_SYSTEM, TEXT_EVIDENCE, TEXT_REPLY, worked_reply
from madspy.signatures import Role

# Roles are recognised by the output fields their signature asks for.
ROLE_OF_OUTPUTS: dict[frozenset[str], Role] = {
    frozenset(signatures.Propose.output_fields): Role.PROPOSER,
    frozenset(signatures.Revise.output_fields): Role.REVISER,
    frozenset(signatures.Critique.output_fields): Role.CRITIC,
    frozenset(signatures.Resolve.output_fields): Role.RESOLVER,
    frozenset(signatures.Referee.output_fields): Role.REFEREE,
    frozenset(signatures.MaskEvaluate.output_fields): Role.MASK,
    frozenset(signatures.SolveInCode.output_fields): Role.SOLVER,
    frozenset(signatures.ProposeProgram.output_fields): Role.PROGRAMMER,
    frozenset(signatures.ProposeAndVerify.output_fields): Role.VERIFIER,
}
_OUTPUTS_HEADER = "Your output fields are:"
_FIELD_NAME = re.compile(r"^\d+\. `(\w+)`", re.MULTILINE)
_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", re.DOTALL)


@dataclass
class Turn:
    """One request a scripted model receives."""

    model: str
    role: Role | None  # None: a signature that is not one of the debate's
    inputs: dict[str, str]
    outputs: list[str]
    temperature: float | None
    messages: list[dict[str, Any]] = field(repr=False, default_factory=list)

    @property
    def blind(self) -> bool:
        """Whether this is an isolated critic's call: it sees the proposal, not the question."""
        return self.role == Role.CRITIC and "question" not in self.inputs

    def input_json(self, name: str) -> Any:
        """An input field decoded from the JSON DSPy formats lists in (raw text otherwise)."""
        text = self.inputs.get(name, "")
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text


@dataclass
class Cut:
    """A reply that reached max_tokens: the text so far, with finish reason ``length``."""

    text: str


Script = Callable[[Turn], "dict[str, Any] | str | Cut"]


@dataclass
class _Entry:
    script: Script
    latency_s: float
    calls: list[Turn] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    prefixes: set[str] = field(default_factory=set)  # every message before the last, as seen so far


_SCRIPTS: dict[str, _Entry] = {}


def _turn(model: str, messages: list[dict[str, Any]], temperature: float | None) -> Turn:
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    if system == PLAIN_SYSTEM:  # the plain format: a proposer asked the question alone
        outputs = list(signatures.Propose.output_fields)
        return Turn(model, Role.PROPOSER, {"question": user}, outputs, temperature, messages)
    if TEXT_REPLY in system:  # the text format: an answering role, its inputs as paragraphs, the question last
        role = Role.REVISER if TEXT_EVIDENCE in system else Role.PROPOSER
        return Turn(model, role, _paragraph_inputs(user), list(signatures.Revise.output_fields), temperature, messages)
    outputs_part = system.split(_OUTPUTS_HEADER, 1)[1] if _OUTPUTS_HEADER in system else ""
    outputs_part = outputs_part.split("\n\n", 1)[0]
    outputs = _FIELD_NAME.findall(outputs_part)
    inputs = {k: v.strip() for k, v in _SECTION.findall(user)}
    return Turn(model, ROLE_OF_OUTPUTS.get(frozenset(outputs)), inputs, outputs, temperature, messages)


_PARAGRAPH = re.compile(r"^([A-Z][a-z ]+):\n(.*)$", re.DOTALL)


def _paragraph_inputs(user: str) -> dict[str, str]:
    """The inputs of a text-format request: ``Name:\nvalue`` paragraphs, then the question (the rest)."""
    paragraphs, inputs = user.split("\n\n"), {}
    while paragraphs and (field := _PARAGRAPH.match(paragraphs[0])):
        inputs[field[1].lower().replace(" ", "_")] = field[2]
        paragraphs.pop(0)
    return inputs | {"question": "\n\n".join(paragraphs)}


def _render(fields: dict[str, Any], as_json: bool, free_text: bool = False) -> str:
    """Format output fields the way the adapter in use expects them (free text: the reasoning, the boxed answer,
    then the confidence and evidence lines the text format reads)."""
    if free_text:
        return worked_reply(fields)
    if as_json:
        return json.dumps(fields)
    parts = [f"[[ ## {k} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}" for k, v in fields.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


class ScriptedLLM(CustomLLM):
    """The LiteLLM handler behind ``scripted/<name>`` models."""

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        entry = _SCRIPTS.get(model)
        if entry is None:
            raise litellm.BadRequestError(f"no script registered as scripted/{model}", model, "scripted")
        params = kwargs.get("optional_params") or {}
        turn = _turn(model, messages, params.get("temperature"))
        prefix = json.dumps(messages[:-1], default=str)
        with entry.lock:
            entry.calls.append(turn)
            seen = prefix in entry.prefixes
            entry.prefixes.add(prefix)
        if entry.latency_s:
            time.sleep(entry.latency_s)
        reply = entry.script(turn)
        logprob = reply.pop("_mean_logprob", None) if isinstance(reply, dict) else None
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        as_json = "response_format" in params or "JSON object" in system
        finish_reason = "length" if isinstance(reply, Cut) else "stop"
        if isinstance(reply, Cut):
            reply = reply.text
        free_text = system == PLAIN_SYSTEM or TEXT_REPLY in system
        text = reply if isinstance(reply, str) else _render(reply, as_json, free_text)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        # Like a provider with prefix caching: a prompt whose leading messages were sent before reuses them.
        cached = sum(len(str(m.get("content") or "")) for m in messages[:-1]) // 4 if seen else 0
        completion_tokens = len(text) // 4 + 1
        if finish_reason == "length" and params.get("max_tokens"):
            completion_tokens = params["max_tokens"]  # a provider that cuts a reply at max_tokens bills max_tokens
        usage = Usage(
            prompt_tokens=prompt_chars // 4 + 1,
            completion_tokens=completion_tokens,
            total_tokens=prompt_chars // 4 + 1 + completion_tokens,
            prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=cached),
        )
        choice: dict[str, Any] = {
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish_reason,
            "index": 0,
        }
        if params.get("logprobs") and logprob is not None:
            choice["logprobs"] = {"content": [{"token": "x", "logprob": logprob, "top_logprobs": []}] * 3}
        return ModelResponse(
            choices=[choice],
            model=f"scripted/{model}",
            usage=usage,
        )

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        import asyncio

        return await asyncio.to_thread(self.completion, model, messages, *args, **kwargs)


_HANDLER = ScriptedLLM()


def register_provider() -> None:
    """Make ``scripted/...`` model strings known to LiteLLM (idempotent)."""
    if not any(p.get("provider") == "scripted" for p in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": "scripted", "custom_handler": _HANDLER},
        ]
    from litellm.utils import custom_llm_setup

    custom_llm_setup()


def register_script(name: str, script: Script, *, latency_s: float = 0.0) -> str:
    """Register ``script`` as model ``scripted/<name>`` and return that model string.

    ``latency_s`` makes every call sleep that long first (a stand-in for network
    and generation time in concurrency tests and benchmarks).
    """
    register_provider()
    _SCRIPTS[name] = _Entry(script, latency_s)
    return f"scripted/{name}"


def calls_of(model: str) -> list[Turn]:
    """The turns a scripted model has received so far, in arrival order."""
    return list(_SCRIPTS[model.split("/", 1)[-1]].calls)
