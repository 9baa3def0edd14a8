"""Decision protocols: how the agents' final answers become one answer.

A protocol is a small object with ``decide(votes, judge)``. ``judge`` is a callable
the ``Debate`` passes in that asks the resolver (it may be None or fail; protocols
that need it fall back and say so in the decision's note).

Example:
    >>> from madspy.programs.protocols import Majority, Vote
    >>> votes = [Vote(0, "391", "391", 0.9), Vote(1, "391", "391", 0.6), Vote(2, "401", "401", 0.8)]
    >>> d = Majority().decide(votes)
    >>> d.answer, d.tally
    ('391', {'391': 2, '401': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol as _Protocol

from madspy.programs.transcript import Decision


@dataclass(frozen=True)
class Vote:
    """One agent's final answer: ``key`` is the normalized answer votes are counted on."""

    agent: int
    answer: str
    key: str
    confidence: float


Judge = Callable[[list[Vote], dict[str, int]], Decision | None]


def tally(votes: list[Vote]) -> dict[str, int]:
    """Votes per normalized answer, most votes first (ties in order of first vote)."""
    return dict(Counter(v.key for v in votes).most_common())


def _support(votes: list[Vote], key: str) -> float:
    return sum(v.confidence for v in votes if v.key == key)


def _answer_text(votes: list[Vote], key: str) -> str:
    """The surface form of the most confident vote for ``key``."""
    return max((v for v in votes if v.key == key), key=lambda v: v.confidence).answer


class Protocol(_Protocol):
    name: str

    def decide(self, votes: list[Vote], judge: Judge | None = None) -> Decision: ...


class Majority:
    """The answer with most votes; ties go to the larger summed confidence.

    Confidence is the winner's vote share times its voters' mean confidence, so a
    split vote is never reported as certain.
    """

    name = "majority"

    def decide(self, votes: list[Vote], judge: Judge | None = None) -> Decision:
        if not votes:
            return Decision(protocol=self.name, answer=None, confidence=0.0, note="no votes")
        counts = tally(votes)
        top = max(counts, key=lambda k: (counts[k], _support(votes, k)))
        share = counts[top] / len(votes)
        note = "" if share > 0.5 else "no strict majority; plurality with confidence tie-break"
        return Decision(
            protocol=self.name,
            answer=_answer_text(votes, top),
            confidence=share * _support(votes, top) / counts[top],
            tally=counts,
            note=note,
        )


class JudgeProtocol:
    """The resolver decides, given the debaters' answers and the tally.

    Falls back to ``Majority`` (noted in the decision) when the resolver is
    unavailable or its call fails.
    """

    name = "judge"

    def decide(self, votes: list[Vote], judge: Judge | None = None) -> Decision:
        counts = tally(votes)
        decision = judge(votes, counts) if judge is not None else None
        if decision is not None:
            return decision
        fallback = Majority().decide(votes)
        return fallback.model_copy(update={"note": "resolver unavailable; majority fallback"})


PROTOCOLS: dict[str, type] = {"majority": Majority, "judge": JudgeProtocol}


def get_protocol(name: str) -> Protocol:
    """The protocol registered under ``name``."""
    try:
        return PROTOCOLS[name]()
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}") from None
