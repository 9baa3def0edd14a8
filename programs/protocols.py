"""Decision protocols: how the agents' final answers become one answer.

A protocol is a small object with ``decide(votes, ctx)``: ``votes`` are the final
answers, ``ctx`` what else a protocol may use — the votes of every round, which
flips were conformity, per-agent credit, and ``judge``, a callable that asks the
resolver (it may be None or fail; protocols that need it fall back and say so).

Which protocol fits ("Voting or Consensus? Decision-Making in Multi-Agent Debate", Kaesberg et al.,
ACL Findings 2025): voting on reasoning tasks,
consensus or a judge on knowledge tasks, Free-MAD on open-ended ones.

Example:
    >>> from madspy.programs.protocols import Majority, Vote
    >>> votes = [Vote(0, "391", "391", 0.9), Vote(1, "391", "391", 0.6), Vote(2, "401", "401", 0.8)]
    >>> d = Majority().decide(votes)
    >>> d.answer, d.tally
    ('391', {'391': 2, '401': 1})
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args
from typing import Protocol as _Protocol

from madspy.core.errors import InputError
from madspy.programs.transcript import Decision


@dataclass(frozen=True)
class Vote:
    """One agent's final answer: ``key`` is the normalized answer votes are counted on."""

    agent: int
    answer: str
    key: str
    confidence: float


Judge = Callable[[list[Vote], dict[str, int]], Decision | None]


@dataclass
class DecisionContext:
    """What a protocol may use besides the final votes."""

    history: list[list[Vote]] = field(default_factory=list)  # votes after each round
    conformity: set[tuple[int, int]] = field(default_factory=set)  # (agent, round) of conformity flips
    credit: dict[int, float] = field(default_factory=dict)  # agent -> credit weight
    judge: Judge | None = None
    weights: dict[int, float] = field(default_factory=dict)  # agent -> vote weight in counted votes (default 1)


def tally(votes: list[Vote]) -> dict[str, int]:
    """Votes per normalized answer, most votes first (ties in order of first vote)."""
    return dict(Counter(v.key for v in votes).most_common())


def _held(votes: list[Vote], ctx: DecisionContext | None) -> dict[str, float]:
    """Votes per answer, each weighted by its agent's weight in ``ctx`` (1 without one)."""
    weights = ctx.weights if ctx else {}
    held: dict[str, float] = defaultdict(float)
    for v in votes:
        held[v.key] += weights.get(v.agent, 1.0)
    return dict(held)


def _answer_text(votes: list[Vote], key: str) -> str:
    """The briefest surface form of ``key`` among its votes, the most confident first among equals: a
    reviser that wrapped its answer in prose ("Therefore, Polly can stand 160 feet away.") does not
    speak for the holders that wrote "160".

    >>> _answer_text([Vote(0, "So the answer is 160 feet.", "160", 0.9), Vote(1, "160", "160", 0.6)], "160")
    '160'
    """
    return min((v for v in votes if v.key == key), key=lambda v: (len(v.answer.strip()), -v.confidence)).answer


def _weighted(votes: list[Vote], weight: Callable[[Vote], float], name: str, note: str = "") -> Decision:
    """The answer with the largest total weight; confidence is its share of all weight."""
    scores: dict[str, float] = defaultdict(float)
    for v in votes:
        scores[v.key] += weight(v)
    counts = tally(votes)
    top = max(scores, key=lambda k: (scores[k], counts[k]))
    total = sum(scores.values())
    return Decision(
        protocol=name,
        answer=_answer_text(votes, top),
        confidence=scores[top] / total if total else 0.0,
        tally=counts,
        note=note,
        candidates={k: round(s, 4) for k, s in scores.items()},
    )


class Protocol(_Protocol):
    """A decision protocol: turns the final round's votes (and the debate's context) into one ``Decision``."""

    name: str

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision: ...


class Plurality:
    """Most votes wins, whatever its share; ties go to the larger summed confidence.

    Confidence is the winner's vote share times its voters' mean confidence, so a
    split vote is never reported as certain.
    """

    name = "plurality"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        counts = tally(votes)
        held = _held(votes, ctx)
        support = {k: sum(v.confidence for v in votes if v.key == k) for k in counts}
        top = max(counts, key=lambda k: (held[k], support[k]))
        return Decision(
            protocol=self.name,
            answer=_answer_text(votes, top),
            confidence=held[top] / sum(held.values()) * support[top] / counts[top],
            tally=counts,
            candidates={k: round(w, 4) for k, w in held.items()} if ctx and ctx.weights else {},
        )


class Majority(Plurality):
    """More than half the votes wins; without a strict majority, plurality decides (noted)."""

    name = "majority"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        d = super().decide(votes, ctx)
        held = _held(votes, ctx)
        strict = max(held.values()) * 2 > sum(held.values())
        return d.model_copy(
            update={
                "protocol": self.name,
                "note": "" if strict else "no strict majority; plurality with confidence tie-break",
            }
        )


class ConfidenceWeighted:
    """Each vote weighs its agent's confidence."""

    name = "confidence"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        return _weighted(votes, lambda v: max(v.confidence, 1e-6), self.name)


class CreditWeighted:
    """Each vote weighs its agent's credit from verified past outcomes (see ``credit.CreditLedger``)."""

    name = "credit"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        credit = ctx.credit if ctx else {}
        note = "" if credit else "no credit recorded yet; equal weights"
        return _weighted(votes, lambda v: credit.get(v.agent, 1.0), self.name, note)


class Unanimity:
    """All agents must agree; otherwise fall back to ``judge`` (if available) or majority."""

    name = "unanimity"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        if len(tally(votes)) == 1:
            d = Plurality().decide(votes)
            return d.model_copy(update={"protocol": self.name, "note": "unanimous"})
        fallback = JudgeProtocol() if ctx and ctx.judge else Majority()
        d = fallback.decide(votes, ctx)
        return d.model_copy(update={"note": f"not unanimous; {fallback.name} fallback. {d.note}".strip()})


class JudgeProtocol:
    """The resolver decides, given the debaters' answers, the critiques and the tally.

    Falls back to ``Majority`` (noted) when the resolver is unavailable or fails.
    """

    name = "judge"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        decision = ctx.judge(votes, tally(votes)) if ctx and ctx.judge else None
        if decision is not None:
            return decision
        return Majority().decide(votes).model_copy(update={"note": "resolver unavailable; majority fallback"})


class FreeMad:
    """Free-MAD: no forced consensus; every final answer is scored over its trajectory.

    An answer earns each round the confidence of every agent holding it; holding it
    because of a conformity flip earns nothing that round (it echoes, it does not
    argue). The top answer is returned with the scores of all (``candidates``).
    """

    name = "free"

    def decide(self, votes: list[Vote], ctx: DecisionContext | None = None) -> Decision:
        history = ctx.history if ctx and ctx.history else [votes]
        conformity = ctx.conformity if ctx else set()
        finals = {v.key for v in votes}
        scores = dict.fromkeys(finals, 0.0)
        for r, round_votes in enumerate(history):
            for v in round_votes:
                if v.key in finals and (v.agent, r) not in conformity:
                    scores[v.key] += v.confidence
        counts = tally(votes)
        top = max(scores, key=lambda k: (scores[k], counts[k]))
        total = sum(scores.values())
        return Decision(
            protocol=self.name,
            answer=_answer_text(votes, top),
            confidence=scores[top] / total if total else 0.0,
            tally=counts,
            candidates={k: round(s, 4) for k, s in scores.items()},
            note="all final answers kept in candidates",
        )


PROTOCOLS: dict[str, type] = {
    p.name: p for p in (Majority, Plurality, ConfidenceWeighted, CreditWeighted, Unanimity, JudgeProtocol, FreeMad)
}
# A config's protocol: one of PROTOCOLS, or auto (chosen by the task's kind).
ProtocolName = Literal["auto", "majority", "plurality", "confidence", "credit", "unanimity", "judge", "free"]
assert set(get_args(ProtocolName)) == {"auto", *PROTOCOLS}, "ProtocolName and PROTOCOLS name the same protocols"
TaskKind = Literal["reasoning", "knowledge", "open_ended"]
DEFAULT_FOR_TASK_KIND: dict[TaskKind, str] = {"reasoning": "majority", "knowledge": "judge", "open_ended": "free"}


def get_protocol(name: str) -> Protocol:
    """The protocol registered under ``name``."""
    try:
        return PROTOCOLS[name]()
    except KeyError:
        raise InputError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}") from None
