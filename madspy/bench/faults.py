"""Fault injection: debates against a scripted model whose calls fail, counted for crashes and statuses.

A share of the calls (``fail_rate``) fails with one of: a timeout, a rate limit (429), a
garbage reply (not the format asked for) or a truncated one (a JSON prefix, as when
``max_tokens`` cuts a reply). The other calls answer sanely. Every debate must end with a
status and no exception: the result says how many did not.

Example::

    from madspy.bench.faults import fault_benchmark
    fault_benchmark(debates=200, fail_rate=0.3)  # {'debates': 200, 'crashed': 0, 'without_status': 0, ...}
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from typing import Any

import litellm

from madspy.core.errors import InputError
from madspy.programs.debate import Debate
from madspy.programs.presets import preset
from madspy.programs.transcript import Status
from madspy.signatures import Role
from madspy.testing import Turn, register_script

FAULTS = ("timeout", "rate_limit", "garbage", "truncated")
SANE: dict[Role, dict[str, Any]] = {
    Role.PROPOSER: {"reasoning": "17*23=391", "answer": "391", "confidence": 0.8},
    Role.REVISER: {"reasoning": "17*23=391", "answer": "391", "confidence": 0.8, "evidence_ref": "none"},
    Role.CRITIC: {"reasoning": "checked", "issues": [], "verdict": "sound"},
    Role.RESOLVER: {"final_answer": "391", "confidence": 0.8, "verification": "step 1", "status": "converged"},
    Role.REFEREE: {"relevance": 0.9, "converged": False, "off_topic_summary": "", "intervention": "", "agreement": 0.5},
    Role.MASK: {"reasoning": "checked", "label": "YES"},
}


class FaultyModel:
    """A script that fails ``fail_rate`` of its calls, each with a fault drawn from ``FAULTS`` (seeded)."""

    def __init__(self, fail_rate: float, seed: int):
        self.fail_rate, self.random, self.lock = fail_rate, random.Random(seed), threading.Lock()
        self.injected: Counter[str] = Counter()

    def __call__(self, turn: Turn) -> dict[str, Any] | str:
        with self.lock:
            fault = self.random.choice(FAULTS) if self.random.random() < self.fail_rate else None
            if fault:
                self.injected[fault] += 1
        reply = SANE.get(turn.role, {}) if turn.role else {}
        if fault == "timeout":
            raise litellm.Timeout("injected timeout", model=turn.model, llm_provider="scripted")
        if fault == "rate_limit":
            raise litellm.RateLimitError("injected 429", llm_provider="scripted", model=turn.model)
        if fault == "garbage":
            return "I'm sorry, as an AI I cannot do JSON today. {{{"
        if fault == "truncated":
            return json.dumps(reply)[: max(1, len(json.dumps(reply)) // 2)]
        return dict(reply)


def fault_benchmark(debates: int = 200, fail_rate: float = 0.3, seed: int = 0, retries: int = 0) -> dict[str, Any]:
    """Run ``debates`` debates (every role on: critic, judge, referee) with ``fail_rate`` of calls failing."""
    if debates < 1 or not 0 <= fail_rate <= 1 or retries < 0:
        raise InputError("--debates must be >= 1, --fail-rate in 0..1 and --retries >= 0")
    faulty = FaultyModel(fail_rate, seed)
    model = register_script(f"faults-{seed}-{fail_rate}", faulty)
    config = preset(
        "debate-v1",
        model=model,
        rounds=3,
        protocol="judge",
        cache=False,
        num_retries=retries,
        referee={"enabled": True},
        stop={"agreement_gate": None, "stable_rounds": 0},
    )
    debate = Debate(config)
    crashed, statuses, calls, failed = 0, Counter(), 0, 0
    errors: Counter[str] = Counter()
    for i in range(debates):
        try:
            result = debate(question=f"What is 17 * 23? (question {i})")
        except Exception as e:
            crashed += 1
            errors[type(e).__name__] += 1
            continue
        statuses[str(result.status) if result.status in set(Status) else "without_status"] += 1
        calls += result.usage["calls"]
        failed += result.usage["failed_calls"]
    return {
        "debates": debates,
        "fail_rate": fail_rate,
        "retries": retries,
        "crashed": crashed,
        "crash_types": dict(errors),
        "without_status": statuses.pop("without_status", 0),
        "statuses": dict(sorted(statuses.items())),
        "calls": calls,
        "calls_failed": failed,
        "faults_injected": dict(sorted(faulty.injected.items())),
    }
