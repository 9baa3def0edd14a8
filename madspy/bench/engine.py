"""Engine benchmark: how close the debate loop runs to its concurrency limit.

A scripted model sleeps a fixed latency per call. A debate's critical path is the
number of its sequential steps (each (round, role) group of concurrent calls)
times that latency, so ``wall / critical path`` is the concurrency efficiency
(1.0 is the physical limit) and ``(wall - critical path) / calls`` is madspy's
overhead per call. Throughput runs ``madspy eval``'s harness on single-agent
questions at a given concurrency.

Example::

    from madspy.bench.engine import engine_benchmark
    engine_benchmark(latency_s=0.2)["concurrency_efficiency"]  # {'3x2': 1.04, '5x3': 1.06}
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from typing import Any

from madspy.core.errors import InputError
from madspy.programs.config import DebateConfig
from madspy.programs.debate import Debate
from madspy.testing import Turn, register_script

DEBATES = {"3x2": (3, 2), "5x3": (5, 3)}  # name: (agents, rounds)


def _script(turn: Turn) -> dict[str, Any]:
    """Every role answers at once; agents agree, the critic finds nothing."""
    return {
        "reasoning": "17*23=391",
        "answer": "391",
        "confidence": 0.9,
        "evidence_ref": "none",
        "issues": [],
        "verdict": "sound",
        "final_answer": "391",
        "verification": "checked",
        "status": "converged",
    }


def _full_debate(model: str, agents: int, rounds: int) -> Debate:
    """Critic and resolver on, stop rules off: every debate runs all its rounds."""
    return Debate(
        DebateConfig.with_agents(
            agents,
            model=model,
            rounds=rounds,
            protocol="judge",
            stop={"agreement_gate": None, "stable_rounds": 0},
            concurrency=agents,
            cache=False,
            num_retries=0,
        )
    )


def _time_debate(debate: Debate, latency_s: float, repeats: int) -> dict[str, Any]:
    debate(question="What is 17 * 23? (warm-up)")
    runs = []
    for i in range(repeats):
        started = time.perf_counter()
        result = debate(question=f"What is 17 * 23? (run {i})")
        runs.append((time.perf_counter() - started, result.transcript))
    wall, transcript = sorted(runs, key=lambda run: run[0])[len(runs) // 2]  # the median run
    calls = transcript.calls()
    steps = len({(c.round, c.role) for c in calls})
    critical = steps * latency_s
    return {
        "steps": steps,
        "calls": len(calls),
        "wall_s": round(wall, 4),
        "critical_path_s": round(critical, 4),
        "efficiency": round(wall / critical, 4) if critical else None,
        "overhead_ms_per_call": round(1000 * (wall - critical) / len(calls), 3),
    }


def _throughput(model: str, latency_s: float, questions: int, concurrency: int) -> dict[str, Any]:
    from madspy.evaluation import evaluate

    with tempfile.TemporaryDirectory(prefix="madspy-bench-") as out:
        started = time.perf_counter()
        evaluate(
            ["cot"], "arithmetic", model, out=out, n=questions, concurrency=concurrency, cache=False, progress=False
        )
        wall = time.perf_counter() - started
    waves = math.ceil(questions / concurrency)
    return {
        "questions": questions,
        "concurrency": concurrency,
        "wall_s": round(wall, 4),
        "throughput_qps": round(questions / wall, 2),
        "ideal_qps": round(questions / (waves * latency_s), 2) if latency_s else None,
    }


def engine_benchmark(
    latency_s: float = 0.2, questions: int = 100, concurrency: int = 16, repeats: int = 3
) -> dict[str, Any]:
    """Concurrency efficiency of a 3-agent 2-round and a 5-agent 3-round debate, overhead, throughput.

    Example::

        result = engine_benchmark(latency_s=0.05, questions=20)
        sorted(result) -> ['concurrency_efficiency', 'cpus', 'debates', 'ideal_qps', 'latency_s', ...]
    """
    if latency_s < 0 or questions < 1 or concurrency < 1 or repeats < 1:
        raise InputError("latency must be >= 0; questions, concurrency and repeats >= 1")
    model = register_script(f"bench-engine-{latency_s}", _script, latency_s=latency_s)
    debates = {name: _time_debate(_full_debate(model, *shape), latency_s, repeats) for name, shape in DEBATES.items()}
    total_calls = sum(d["calls"] for d in debates.values())
    overhead = sum(d["wall_s"] - d["critical_path_s"] for d in debates.values()) / total_calls
    throughput = _throughput(model, latency_s, questions, concurrency)
    return {
        "latency_s": latency_s,
        "cpus": os.cpu_count(),
        "concurrency_efficiency": {name: d["efficiency"] for name, d in debates.items()},
        "overhead_ms_per_call": round(1000 * overhead, 3),
        "throughput_qps": throughput["throughput_qps"],
        "ideal_qps": throughput["ideal_qps"],
        "debates": debates,
        "throughput": throughput,
    }
