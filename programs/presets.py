"""Named debate settings, baselines included, built from the same parts.

Baselines use the same models, parsing and accounting as the debate, so a
comparison measures the method and nothing else.

Example:
    >>> from madspy.programs.presets import preset
    >>> cfg = preset("du-mad", model="openai/gpt-4o-mini")
    >>> len(cfg.agents), cfg.rounds, cfg.protocol, cfg.critic.enabled
    (3, 2, 'majority', False)
"""

from __future__ import annotations

from typing import Any

from madspy.core.errors import InputError
from madspy.programs.config import AgentConfig, DebateConfig

NEUTRAL_PERSONA = "a careful problem solver"


def _sampled(k: int, temperature: float = 0.7) -> list[dict[str, Any]]:
    """``k`` identical agents: independent samples of one prompt."""
    return [AgentConfig(persona=NEUTRAL_PERSONA, temperature=temperature).model_dump() for _ in range(k)]


def _plain(agents: list[dict[str, Any]], rounds: int = 1) -> dict[str, Any]:
    """Agents that only answer and revise: no critic, no judge, no early stop, majority vote."""
    return {
        "agents": agents,
        "rounds": rounds,
        "protocol": "majority",
        "critic": {"enabled": False},
        "resolver": {"enabled": False},
        "stop": {"agreement_gate": None, "stable_rounds": 0},
    }


def cot() -> dict[str, Any]:
    """Single-agent chain of thought: one answer with its reasoning steps."""
    return _plain(_sampled(1, temperature=0.0))


def self_consistency(k: int = 5) -> dict[str, Any]:
    """``k`` independent samples, majority vote (Wang et al. 2023)."""
    return _plain(_sampled(k))


def du_mad() -> dict[str, Any]:
    """Du et al. 2023: 3 agents, 2 rounds, all-to-all, majority; no critic, no judge, no early stop."""
    return _plain(_sampled(3), rounds=2)


def debate() -> dict[str, Any]:
    """madspy's default, an efficient debate: debate only where it pays, and only about the answers in dispute.

    Three agents with their own personas and temperatures answer alone; when two of them hold
    one answer (``stop.decisive_share``) the debate stops there (iMAD, 2025: most questions need
    no debate). Otherwise one round of debate: revisers read a digest of the distinct answers
    with their support and strongest argument (``memory="digest"``) instead of every peer's full
    text. The protocol follows the task's kind (majority on reasoning, the judge on knowledge).
    A calculator checks the arithmetic written in every proposal (``critic.calculator``, no LM
    call): a vote is not decisive while a holder of its answer miscalculates, and the holder is
    told where. On 50 held-out gsm8k questions of the bench model it answered 2 more right and
    none fewer at +1% tokens (preregistered rule: at least as accurate, at most 1.15x tokens;
    bench/RESULTS.md, 2026-12-06). No LLM critic: on the bench model it flagged 1 of 111 wrong
    held-out proposals at a quarter of the debate's tokens, and without it the debate answered as
    well at 59% of the tokens (bench/RESULTS.md, 2026-12-02). Where a critic model does flag (measure it with
    ``madspy role-eval``), turn it on: ``critic={"enabled": True}`` reviews each distinct
    answer once (``critic.per_answer``).
    """
    return {
        "rounds": 2,
        "stop": {"decisive_share": 2 / 3, "decisive_confidence": 0.0, "agreement_gate": None, "stable_rounds": 0},
        "critic": {"enabled": False, "per_answer": True, "calculator": True},
        "memory": "digest",
    }


def debate_v1() -> dict[str, Any]:
    """madspy's first default (to 2026-12): 3 rounds, a critic call per proposal, peers' full text, early stops."""
    return {}


PRESETS = {"cot": cot, "sc": self_consistency, "du-mad": du_mad, "debate": debate, "debate-v1": debate_v1}


def is_preset(name: str) -> bool:
    """Whether ``name`` names a preset (``sc:K`` with K >= 1 included).

    >>> is_preset("sc:5"), is_preset("du-mad"), is_preset("sc:0"), is_preset("cot:2")
    (True, True, False, False)
    """
    base, _, arg = name.partition(":")
    return base in PRESETS and (not arg or (base == "sc" and arg.isdigit() and int(arg) >= 1))


def preset(name: str, **changes: Any) -> DebateConfig:
    """The config of preset ``name`` (``sc`` accepts ``sc:K``), with ``changes`` merged in.

    A change out of range raises ``ConfigError`` naming the field.
    """
    if not is_preset(name):
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)} (sc:K for K samples)")
    base, _, arg = name.partition(":")
    settings = PRESETS[base](int(arg)) if arg else PRESETS[base]()
    return DebateConfig().updated(**settings).updated(**changes)
