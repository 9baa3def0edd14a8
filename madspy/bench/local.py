"""Local-model benchmark: llama.cpp speed, prefix reuse per role, and what reuse saves a debate.

Measurements on one ``local/...`` model, in one process:

- raw speed: prompt-processing tokens/s (a cold ~500-token prompt) and generation tokens/s
  (64 tokens after that prompt, whose prefix is then cached), with every thread and with one;
- each program (``cot`` and ``debate`` by default) on the same questions at temperature 0 with
  the cache off, once per mode: ``reuse`` (the default: a warm context per role), ``no_reuse``
  (``MADSPY_LOCAL_CONTEXTS=1``: one context, so llama.cpp reuses only the prefix a prompt shares
  with the one before it) and, when asked, ``before`` (one context, generation on all cores but
  one, as madspy ran local models before prefix reuse); per mode the wall time per question, the
  answers and the share of prompt tokens taken from the KV cache (``prefix_hit_rate``), overall
  and per role;
- memory: resident memory per warm context, and the process's peak.

Contexts are created before the timed runs, so loading them is not timed.

Example::

    from madspy.bench.local import local_benchmark
    local_benchmark("local/smollm2-135m", questions=2)["speedup"]
"""

from __future__ import annotations

import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from madspy.core import local
from madspy.core.errors import InputError
from madspy.core.models import provider_of
from madspy.data import get_task
from madspy.programs.config import DebateConfig
from madspy.programs.debate import Debate
from madspy.programs.presets import preset
from madspy.programs.transcript import Call

SPEED_PROMPT = "Count on: " + " ".join(str(i) for i in range(1, 250))
_SETTINGS = ("MADSPY_LOCAL_CONTEXTS", "MADSPY_LOCAL_N_THREADS", "MADSPY_LOCAL_N_THREADS_BATCH")


def modes() -> dict[str, dict[str, str]]:
    """The settings each mode runs with (environment variables of ``madspy.core.local``).

    >>> sorted(modes()), modes()["no_reuse"]
    (['before', 'no_reuse', 'reuse'], {'MADSPY_LOCAL_CONTEXTS': '1'})
    """
    cores = local.n_threads()
    return {
        "reuse": {},
        "no_reuse": {"MADSPY_LOCAL_CONTEXTS": "1"},
        "before": {
            "MADSPY_LOCAL_CONTEXTS": "1",
            "MADSPY_LOCAL_N_THREADS": str(max(1, cores - 1)),
            "MADSPY_LOCAL_N_THREADS_BATCH": str(cores),
        },
    }


def at_temperature_zero(config: DebateConfig) -> DebateConfig:
    """``config`` with every agent and role sampling greedily, so two runs can be compared answer by answer.

    >>> cfg = at_temperature_zero(DebateConfig.with_agents(3))
    >>> {a.temperature for a in cfg.agents}, cfg.critic.temperature
    ({0.0}, 0.0)
    """
    zero = {"temperature": 0.0}
    return config.updated(
        agents=[a.model_dump() | zero for a in config.agents], critic=zero, resolver=zero, referee=zero, mask=zero
    )


@contextmanager
def _settings(env: Mapping[str, str]) -> Iterator[None]:
    """Models reloaded with ``env`` as their only local settings for the block, then restored."""
    saved = {name: os.environ.get(name) for name in _SETTINGS}
    local.close_all()
    for name in _SETTINGS:
        os.environ.pop(name, None)
    os.environ.update(env)
    try:
        yield
    finally:
        local.close_all()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def raw_speed(model: str, threads: int, new_tokens: int = 64) -> dict[str, float]:
    """Prompt-processing and generation tokens/s of one context on ``threads`` threads."""
    with _settings({"MADSPY_LOCAL_CONTEXTS": "1", "MADSPY_LOCAL_N_THREADS": str(threads)}):
        loaded = local._load(model)
        with loaded.lock:
            llm = loaded.context()
            llm.reset()
            started = time.perf_counter()
            cold = llm.create_completion(SPEED_PROMPT, max_tokens=1, temperature=0.0)
            prompt_s = time.perf_counter() - started
            started = time.perf_counter()  # the same prompt again: only its last token is evaluated
            warm = llm.create_completion(SPEED_PROMPT, max_tokens=new_tokens, temperature=0.0)
            generation_s = time.perf_counter() - started
    return {
        "prompt_tokens_per_s": round(cold["usage"]["prompt_tokens"] / prompt_s, 1),
        "generation_tokens_per_s": round(warm["usage"]["completion_tokens"] / generation_s, 1),
    }


def hit_rate(calls: Sequence[Call]) -> float | None:
    """Share of prompt tokens served from the KV cache (None without prompt tokens).

    >>> hit_rate([Call(role="critic", round=1, prompt_tokens=400, cached_prompt_tokens=300)])
    0.75
    """
    prompt = sum(c.prompt_tokens for c in calls)
    return round(sum(c.cached_prompt_tokens for c in calls) / prompt, 4) if prompt else None


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 3)


def _run_mode(debate: Debate, model: str, questions: Sequence[str]) -> dict[str, Any]:
    """One program on every question, after its contexts are loaded: times, answers, hit rates, memory."""
    before = _rss_mb()
    local.preload(model)
    per_context = (_rss_mb() - before) / local.max_contexts()
    walls, answers, calls = [], [], []
    for question in questions:
        result = debate(question=question)
        walls.append(result.transcript.wall_s)
        answers.append(result.answer)
        calls += result.transcript.calls()
    by_role: dict[str, list[Call]] = defaultdict(list)
    for call in calls:
        by_role[call.role].append(call)
    return {
        "wall_s": walls,
        "answers": answers,
        "prefix_hit_rate": hit_rate(calls),
        "prefix_hit_rate_by_role": {role: hit_rate(mine) for role, mine in sorted(by_role.items())},
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "calls": len(calls),
        "rss_mb_per_context": round(per_context),
    }


def _program(name: str, runs: dict[str, dict[str, Any]], n: int) -> dict[str, Any]:
    reuse = runs["reuse"]
    out: dict[str, Any] = {
        "wall_s": {mode: _mean(run["wall_s"]) for mode, run in runs.items()},
        "prefix_hit_rate": {mode: run["prefix_hit_rate"] for mode, run in runs.items()},
        "prefix_hit_rate_by_role": reuse["prefix_hit_rate_by_role"],
        "prompt_tokens_per_question": round(reuse["prompt_tokens"] / n, 1),
        "calls_per_question": round(reuse["calls"] / n, 2),
        "rss_mb_per_context": reuse["rss_mb_per_context"],
        "answers": {mode: run["answers"] for mode, run in runs.items()},
        "wall_s_per_question": {mode: run["wall_s"] for mode, run in runs.items()},
    }
    for mode in ("no_reuse", "before"):
        if mode in runs:
            suffix = "" if mode == "no_reuse" else "_vs_before"
            out[f"speedup{suffix}"] = round(sum(runs[mode]["wall_s"]) / sum(reuse["wall_s"]), 3)
            out[f"same_answers{suffix}"] = runs[mode]["answers"] == reuse["answers"]
    return out


def local_benchmark(
    model: str = local.DEFAULT_MODEL,
    *,
    questions: int = 3,
    task: str = "arithmetic",
    data_dir: str | None = None,
    programs: Sequence[str] = ("cot", "debate"),
    max_tokens: int = 384,
    seed: int = 0,
    compare: Sequence[str] = ("no_reuse",),
) -> dict[str, Any]:
    """Speed, prefix-hit rate and each program's wall time per question with and without prefix reuse.

    ``compare`` names the modes timed besides ``reuse`` (``no_reuse``, ``before``). The top-level
    ``debate_wall_s`` (per mode), ``speedup`` and ``same_answers`` (against ``no_reuse``; with ``before``
    also ``speedup_vs_before`` and ``same_answers_vs_before``) and ``prefix_hit_rate`` are those of the
    last program (``debate`` by default); ``programs`` holds every program's.
    """
    if provider_of(model) != "local":
        raise InputError(f"bench local measures in-process models (local/...), not {model!r}")
    if questions < 1:
        raise InputError("--questions must be at least 1")
    unknown = set(compare) - {"no_reuse", "before"}
    if unknown or not compare:
        raise InputError(f"--compare takes no_reuse and/or before, not {', '.join(sorted(unknown)) or 'nothing'}")
    chosen = get_task(task)
    asked = [chosen.ask(e.question) for e in chosen.load(data_dir=data_dir, n=questions, seed=seed)]
    threads = local.n_threads()
    speed = raw_speed(model, threads)
    result: dict[str, Any] = {
        "model": model,
        "task": task,
        "questions": len(asked),
        "threads": threads,
        "threads_batch": local.n_threads_batch(),
        "contexts": local.max_contexts(),
        **speed,
        "generation_tokens_per_s_1_thread": raw_speed(model, 1)["generation_tokens_per_s"]
        if threads > 1
        else speed["generation_tokens_per_s"],
        "programs": {},
    }
    settings = modes()
    for name in programs:
        config = at_temperature_zero(
            preset(name, kind=chosen.task_kind, model=model, cache=False, max_tokens=max_tokens)
        )
        debate = Debate(config, normalize=chosen.normalize)
        runs = {}
        for mode in ("reuse", *compare):
            with _settings(settings[mode]):
                runs[mode] = _run_mode(debate, model, asked)
        result["programs"][name] = _program(name, runs, len(asked))
    last = result["programs"][programs[-1]]
    result |= {
        "debate_wall_s": last["wall_s"],
        "prefix_hit_rate": last["prefix_hit_rate"]["reuse"],
        **{k: v for k, v in last.items() if k.startswith(("speedup", "same_answers"))},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    return result
