"""Run role calls concurrently and record each one as a transcript ``Call``.

All calls of one debate step are submitted together, so a step takes as long as
its slowest call. Each call runs in a copy of the caller's context (so
``dspy.context`` settings reach worker threads) under its own
``dspy.track_usage()``: its tokens land on its ``Call`` record and still roll up
into any tracker the caller opened, which DSPy's own thread pool does not do.

A reply that does not parse is retried once with the parse error shown to the
model; a call that still fails, or whose model errs after LiteLLM's retries,
becomes a ``Call`` with ``error`` set instead of an exception. A reply that reached
``max_tokens`` is never read as an answer (nor retried: the retry would be cut too): its
call fails with ``finish_reason="length"``, so a cut is reported, not silently parsed.

Example::

    import dspy
    from madspy.programs.calls import Job, run_jobs
    outcomes = run_jobs([Job("proposer", 0, 0, dspy.Predict("question -> answer"), lm, adapter,
                             {"question": "2+2?"})], max_workers=4)
"""

from __future__ import annotations

import contextvars
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError
from pydantic_core import to_jsonable_python

from madspy.core.models import count_prompt_tokens, count_tokens
from madspy.core.routing import deployment_of
from madspy.programs.transcript import LENGTH, Call
from madspy.signatures import Role

UNIT_INTERVAL_FIELDS = ("confidence", "relevance", "agreement")


@dataclass
class Job:
    """One role call to make: who, which predictor, which LM, which inputs."""

    role: Role
    agent: int | None
    round: int
    predictor: dspy.Predict
    lm: dspy.LM
    adapter: dspy.Adapter
    inputs: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)  # per-call LM settings, e.g. rollout_id
    deadline: float | None = None  # perf_counter time after which the call does not start (a time budget)


@dataclass
class Outcome:
    """One job's result: its recorded call (tokens, latency, error) and its prediction (None when it failed)."""

    call: Call
    prediction: dspy.Prediction | None


def _clamp_unit(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(x) else min(1.0, max(0.0, x))


def _clean(prediction: dspy.Prediction) -> dspy.Prediction:
    """Clamp 0..1 scores: DSPy shows bounds to the model but does not enforce them."""
    for name in UNIT_INTERVAL_FIELDS:
        if name in prediction:
            prediction[name] = _clamp_unit(prediction[name])
    return prediction


def _with_parse_feedback(predictor: dspy.Predict, error: AdapterParseError) -> dspy.Predict:
    """The same role with its parse error appended to the instructions (demos kept)."""
    reason = str(error).strip().splitlines()[0][:300]
    signature = predictor.signature.with_instructions(
        f"{predictor.signature.instructions}\n\nYour previous reply could not be parsed: {reason}. "
        "Reply again with every output field, exactly in the format described."
    )
    retry = dspy.Predict(signature)
    retry.demos = predictor.demos
    return retry


def mean_logprob(logprobs: Any) -> float | None:
    """Mean token log-probability of an OpenAI-style ``logprobs`` block (None if absent)."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else getattr(logprobs, "content", None)
    values = [t.get("logprob") if isinstance(t, dict) else getattr(t, "logprob", None) for t in content or []]
    values = [float(v) for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _sum_usage(usages: Any) -> tuple[int, int, int]:
    """Prompt, completion and cached prompt tokens (LiteLLM's ``prompt_tokens_details.cached_tokens``)."""
    usages = [u or {} for u in usages]
    return (
        sum(int(u.get("prompt_tokens") or 0) for u in usages),
        sum(int(u.get("completion_tokens") or 0) for u in usages),
        sum(int((u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0) for u in usages),
    )


def _estimate(lm: dspy.LM) -> tuple[int, int]:
    """Tokens of replies DSPy served from its cache, which keeps no usage: counted again, with the model's
    own tokenizer and chat template for a ``local/`` model (what it billed the first time), else LiteLLM's."""
    prompt = completion = 0
    for entry in lm.history:
        prompt += count_prompt_tokens(lm.model, entry.get("messages") or [])
        completion += sum(
            count_tokens(lm.model, str(o.get("text", o) if isinstance(o, dict) else o))
            for o in entry.get("outputs") or []
        )
    return prompt, completion


def _cut(lm: dspy.LM) -> bool:
    """Whether ``lm``'s last reply reached max_tokens (finish reason ``length``)."""
    response = lm.history[-1].get("response") if lm.history else None
    return any(getattr(c, "finish_reason", None) == LENGTH for c in getattr(response, "choices", None) or [])


def _predict(job: Job, lm: dspy.LM) -> tuple[dspy.Prediction, int]:
    """The job's prediction and the attempts it took: a reply that does not parse is asked again once, with
    its error shown, unless it was cut by max_tokens."""
    try:
        return job.predictor(**job.inputs, config=job.config), 1
    except AdapterParseError as parse_error:
        if _cut(lm):
            raise
        return _with_parse_feedback(job.predictor, parse_error)(**job.inputs, config=job.config), 2


def _last_reply(lm: dspy.LM) -> str | None:
    """The text of ``lm``'s last reply, if it made one."""
    outputs = (lm.history[-1].get("outputs") or []) if lm.history else []
    first = outputs[0] if outputs else None
    return str(first.get("text") if isinstance(first, dict) else first) if first is not None else None


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text[:500]}"


NOT_STARTED = "not started: the time budget was spent"


def _cut_error(limit: int | None, completion_tokens: int) -> str:
    """Why a cut reply failed: it reached max_tokens, or (``local/`` models) it was stopped sooner for looping.

    >>> _cut_error(1024, 310)
    'length: the reply began repeating itself and was stopped after 310 tokens (max_tokens=1024), before its last field'
    """
    if limit and 0 < completion_tokens < limit:
        return (
            f"{LENGTH}: the reply began repeating itself and was stopped after {completion_tokens} tokens "
            f"(max_tokens={limit}), before its last field"
        )
    return f"{LENGTH}: the reply reached max_tokens={limit} before its last field"


def _run(job: Job, t0: float) -> Outcome:
    started = time.perf_counter()
    if job.deadline is not None and started >= job.deadline:
        call = Call(
            role=job.role,
            agent=job.agent,
            round=job.round,
            error=NOT_STARTED,
            attempts=0,
            inputs=to_jsonable_python(job.inputs),
            started_s=round(started - t0, 4),
        )
        return Outcome(call, None)
    prediction, error, attempts = None, None, 1
    # A private copy (shared client, own history) shows whether this call was served from DSPy's
    # cache, which bills nothing and keeps no usage; the question still used those tokens.
    lm = job.lm.copy()
    with dspy.context(lm=lm, adapter=job.adapter), dspy.track_usage() as tracker:
        try:
            prediction, attempts = _predict(job, lm)
        except Exception as e:
            error = _one_line(e)
            attempts = len(lm.history) or 1
    billed = _sum_usage(tracker.get_total_tokens().values())
    finish_reason = LENGTH if _cut(lm) else None
    if finish_reason:
        prediction, error = None, _cut_error(lm.kwargs.get("max_tokens"), billed[1])
    cached = bool(lm.history) and not any(entry.get("usage") for entry in lm.history)
    prompt_tokens, completion_tokens, cached_prompt_tokens = (*_estimate(lm), 0) if cached else billed
    logprob = None
    if prediction is not None and "logprobs" in prediction:
        logprob = mean_logprob(prediction["logprobs"])
        del prediction["logprobs"]  # per-token data would swamp the transcript; its mean is kept
    output = to_jsonable_python(_clean(prediction).toDict()) if prediction is not None else None
    call = Call(
        role=job.role,
        agent=job.agent,
        round=job.round,
        inputs=to_jsonable_python(job.inputs),
        output=output,
        error=error,
        reply=_last_reply(lm) if error else None,
        attempts=attempts,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached_prompt_tokens=cached_prompt_tokens,
        cached=cached,
        mean_logprob=logprob,
        finish_reason=finish_reason,
        deployment=deployment_of(lm.history[-1].get("response")) if lm.history else None,
        started_s=round(started - t0, 4),
        latency_s=round(time.perf_counter() - started, 4),
    )
    return Outcome(call, prediction)


def run_jobs(jobs: list[Job], max_workers: int, t0: float | None = None) -> list[Outcome]:
    """Run ``jobs`` concurrently (at most ``max_workers`` at once); outcomes in job order."""
    if not jobs:
        return []
    t0 = time.perf_counter() if t0 is None else t0
    if len(jobs) == 1 or max_workers == 1:
        return [_run(job, t0) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(jobs))) as pool:
        futures = [pool.submit(contextvars.copy_context().run, _run, job, t0) for job in jobs]
        return [f.result() for f in futures]
