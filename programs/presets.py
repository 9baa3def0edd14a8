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

import re
from typing import Any

from madspy.core.errors import InputError
from madspy.programs.config import AgentConfig, DebateConfig, TaskKind, set_changes

NEUTRAL_PERSONA = "a careful problem solver"


def _sampled(k: int, temperature: float = 0.7) -> list[dict[str, Any]]:
    """``k`` identical agents: independent samples of one prompt."""
    return [AgentConfig(persona=NEUTRAL_PERSONA, temperature=temperature).model_dump() for _ in range(k)]


def _independent(agents: list[dict[str, Any]], rounds: int = 1) -> dict[str, Any]:
    """Agents that only answer and revise: no critic, no judge, no early stop, majority vote."""
    return {
        "agents": agents,
        "rounds": rounds,
        "protocol": "majority",
        "critic": {"enabled": False},
        "resolver": {"enabled": False},
        "stop": {"agreement_gate": None, "stable_rounds": 0},
    }


def plain() -> dict[str, Any]:
    """The model asked directly, as a user would instead of using madspy: its own chat template, one system line
    ("reason step by step, put the final answer in \\boxed{}"), the question, greedy; the answer read from the free
    text (``formats.PlainAdapter``). It states no confidence (0)."""
    return _independent(_sampled(1, temperature=0.0)) | {"format": "plain"}


def plain_self_consistency(k: int = 5) -> dict[str, Any]:
    """``plain`` sampled ``k`` times at temperature 0.7, majority vote (Wang et al. 2023, on the plain prompt)."""
    return _independent(_sampled(k)) | {"format": "plain"}


def cot() -> dict[str, Any]:
    """Single-agent chain of thought: one answer with its free-text reasoning, greedy."""
    return _independent(_sampled(1, temperature=0.0))


def program_of_thought() -> dict[str, Any]:
    """Single-agent program of thought: one greedy program, run in the sandbox (``programs.modes``); the mode's
    baseline, as ``cot`` is free text's."""
    agents = [AgentConfig(persona=NEUTRAL_PERSONA, temperature=0.0, mode="program").model_dump()]
    return _independent(agents)


def backward_verification() -> dict[str, Any]:
    """Single-agent backward verification: one greedy reply that solves, then checks its answer against each
    condition (``programs.modes``); the verify mode's baseline."""
    agents = [AgentConfig(persona=NEUTRAL_PERSONA, temperature=0.0, mode="verify").model_dump()]
    return _independent(agents)


def self_consistency(k: int = 5) -> dict[str, Any]:
    """``k`` independent samples, majority vote (Wang et al. 2023)."""
    return _independent(_sampled(k))


def du_mad() -> dict[str, Any]:
    """Du et al. 2023: 3 agents, 2 rounds, all-to-all, majority; no critic, no judge, no early stop."""
    return _independent(_sampled(3), rounds=2)


def debate() -> dict[str, Any]:
    """madspy's default, an efficient debate: debate only where it pays, and only about the answers in dispute.

    Three agents with their own personas and temperatures answer alone; when two of them hold
    one answer (``stop.decisive_share``) the debate stops there (iMAD, 2025: most questions need
    no debate). Otherwise one round of debate: revisers read a digest of the distinct answers
    with their support and strongest argument (``memory="digest"``) instead of every peer's full
    text. The protocol follows the task's kind (majority on reasoning; the judge when no kind is
    given). On knowledge tasks the panel is self-consistency's and the vote a majority
    (``debate_for_knowledge``, chosen by ``preset(..., kind="knowledge")``).
    A calculator checks the arithmetic written in every proposal (``critic.calculator``, no LM
    call): a vote is not decisive while a holder of its answer miscalculates, and the holder is
    told where. On 50 held-out gsm8k questions of the bench model it answered 2 more right and
    none fewer at +1% tokens (preregistered rule: at least as accurate, at most 1.15x tokens;
    bench/RESULTS.md, 2026-12-06). A quantity check flags a numeric answer whose steps leave out a
    quantity the question gives (``critic.quantity_check``, no LM call; 21 of 111 wrong held-out
    proposals, 0 of 41 right): on the same 50 questions it changed no outcome at +8% tokens, which
    met its preregistered rule (the same), so it is on (bench/RESULTS.md, 2026-12-06). No LLM critic:
    on the bench model it flagged 1 of 111 wrong held-out proposals at a quarter of the debate's
    tokens, and without it the debate answered as well at 59% of the tokens (bench/RESULTS.md,
    2026-12-02). Where a critic model does flag (measure it with ``madspy role-eval``), turn it on:
    ``critic={"enabled": True}`` reviews each distinct answer once (``critic.per_answer``).
    """
    return {
        "rounds": 2,
        "stop": {"decisive_share": 2 / 3, "decisive_confidence": 0.0, "agreement_gate": None, "stable_rounds": 0},
        "critic": {"enabled": False, "per_answer": True, "calculator": True, "quantity_check": True},
        "memory": "digest",
    }


def mode_panel() -> dict[str, Any]:
    """A panel of reasoning modes for numeric questions: three greedy agents, one each in ``cot``, ``program`` and
    ``verify`` mode (``programs.modes``), that debate only when they disagree: round 0 is the panel's answers, and a
    round of debate (the ``debate`` preset's digest and calculator) runs unless all three agree. Copies of one
    prompt agree on their mistakes; modes err in different places ("Stop Overvaluing Multi-Agent Debate", 2025), and
    a flip that cites a peer's program counts as evidence only if the program computed the new answer
    (``flips.flip_kind``). Not yet measured against self-consistency here: ``madspy panel`` measures the modes' error
    overlap on your questions.
    """
    agents = [
        AgentConfig(persona=NEUTRAL_PERSONA, temperature=0.0, mode=mode).model_dump()
        for mode in ("cot", "program", "verify")
    ]
    stop = {"decisive_share": 1.0, "decisive_confidence": 0.0, "agreement_gate": None, "stable_rounds": 0}
    return debate() | {"agents": agents, "stop": stop, "protocol": "majority"}


def debate_for_knowledge() -> dict[str, Any]:
    """The ``debate`` preset on knowledge tasks: three independent samples of one neutral prompt, a majority vote.

    Round 0 is self-consistency's panel (Wang et al. 2023); a vote of 2 of 3 stops there, and
    only a three-way split is debated, as in ``debate``. On arc_challenge with the bench model
    the personas were the weak part of round 0 (their vote 0.27 against 0.37 for three neutral
    samples, 30 validation questions) and the judge added no accuracy for 2.9k tokens per
    question (bench/RESULTS.md, 2026-12-04 and 2026-12-06).
    """
    base = debate()  # the quantity check was measured on numeric answers only and judges no letter answer
    critic = base["critic"] | {"quantity_check": False}
    return base | {"agents": _sampled(3), "protocol": "majority", "task_kind": "knowledge", "critic": critic}


def debate_v1() -> dict[str, Any]:
    """madspy's first default (to 2026-12): 3 rounds, a critic call per proposal, peers' full text, early stops."""
    return {}


PRESETS = {
    "plain": plain,
    "plain-sc": plain_self_consistency,
    "cot": cot,
    "pot": program_of_thought,
    "verify": backward_verification,
    "panel": mode_panel,
    "sc": self_consistency,
    "du-mad": du_mad,
    "debate": debate,
    "debate-v1": debate_v1,
}
SAMPLED = ("sc", "plain-sc")  # the presets that take a sample count, as NAME:K
# A preset that measured better in another form on a kind of task takes that form there.
FOR_TASK_KIND = {("debate", "knowledge"): debate_for_knowledge}


_SPEC = re.compile(r"^(?P<name>[^\[\]]+?)(?:\[(?P<settings>[^\[\]]*)\])?$")


def split_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """A program spec's preset name and the settings in its brackets (dotted ``KEY=VALUE``, comma-separated): a
    variant measured beside its preset under its own name.

    >>> split_spec("cot[format=json,stop.agreement_gate=0.9]")
    ('cot', {'format': 'json', 'stop': {'agreement_gate': 0.9}})
    >>> split_spec("sc:5")
    ('sc:5', {})
    """
    match = _SPEC.match(spec.strip())
    if match is None:
        raise InputError(f"a program spec is NAME or NAME[KEY=VALUE,...], got {spec!r}")
    settings = [item.strip() for item in (match["settings"] or "").split(",") if item.strip()]
    return match["name"].strip(), set_changes(settings)


def split_specs(text: str) -> list[str]:
    """Comma-separated program specs, the commas inside a spec's brackets kept (``--programs``).

    >>> split_specs("plain, cot[format=json,max_tokens=256],compiled/x.json")
    ['plain', 'cot[format=json,max_tokens=256]', 'compiled/x.json']
    """
    return [spec.strip() for spec in re.split(r",(?![^\[]*\])", text) if spec.strip()]


def is_preset(name: str) -> bool:
    """Whether ``name`` names a preset (``sc:K`` and ``plain-sc:K`` with K >= 1 included).

    >>> is_preset("sc:5"), is_preset("plain-sc:3"), is_preset("cot[format=json]"), is_preset("sc:0"), is_preset("cot:2")
    (True, True, True, False, False)
    """
    base, _, arg = split_spec(name)[0].partition(":")
    return base in PRESETS and (not arg or (base in SAMPLED and arg.isdigit() and int(arg) >= 1))


def preset(name: str, kind: TaskKind | None = None, **changes: Any) -> DebateConfig:
    """The config of preset ``name`` (``sc`` accepts ``sc:K``; settings in brackets, ``split_spec``, come last) for
    tasks of ``kind``, with ``changes`` merged in.

    ``kind`` picks the preset's form for that kind of task where it has one (``FOR_TASK_KIND``),
    and the config is told it (``DebateConfig.for_task_kind``: an ``auto`` protocol decides by it).
    A change out of range raises ``ConfigError`` naming the field.

    >>> preset("debate", kind="knowledge").decision_protocol, preset("debate", kind="reasoning").protocol
    ('majority', 'auto')
    """
    if not is_preset(name):
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)} (sc:K, plain-sc:K: K samples)")
    name, variant = split_spec(name)
    base, _, arg = name.partition(":")
    settings = PRESETS[base](int(arg)) if arg else FOR_TASK_KIND.get((base, kind), PRESETS[base])()
    config = DebateConfig().updated(**settings).updated(**changes).updated(**variant)
    return config.for_task_kind(kind) if kind is not None else config
