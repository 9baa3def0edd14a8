"""Stop rules: each looks at the votes so far and returns a reason to stop, or None.

The ``Debate`` checks its rules after every round, in order; the first reason
wins and is reported as the debate's ``stop_reason``. A debate always stops at its
last round (``max_rounds``), so it never loops forever.

Example:
    >>> from madspy.programs.protocols import Vote
    >>> from madspy.programs.stopping import StableAnswers
    >>> r = [Vote(0, "5", "5", 0.6), Vote(1, "6", "6", 0.6)]
    >>> print(StableAnswers(1).check([r, r]))
    stable_answers
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from madspy.programs.config import StopConfig
from madspy.programs.protocols import Vote
from madspy.programs.transcript import StopReason

History = list[list[Vote]]  # votes after each round, round 0 first


class StopRule(Protocol):
    """A stop rule: reads the vote history after a round and names why the debate stops there, or None."""

    def check(self, history: History) -> StopReason | None: ...


def _answers(votes: list[Vote]) -> dict[int, str]:
    return {v.agent: v.key for v in votes}


class StableAnswers:
    """Stop when no agent changed its answer for ``k`` consecutive rounds."""

    def __init__(self, k: int):
        self.k = k

    def check(self, history: History) -> StopReason | None:
        if len(history) <= self.k:
            return None
        recent = [_answers(votes) for votes in history[-(self.k + 1) :]]
        return StopReason.STABLE_ANSWERS if all(r == recent[0] for r in recent) else None


class ConfidentAgreement:
    """Stop when every agent gives the same answer with confidence at least ``gate``."""

    def __init__(self, gate: float):
        self.gate = gate

    def check(self, history: History) -> StopReason | None:
        votes = history[-1] if history else []
        if votes and len({v.key for v in votes}) == 1 and min(v.confidence for v in votes) >= self.gate:
            return StopReason.CONFIDENT_AGREEMENT
        return None


class DecisiveVote:
    """Stop when one answer is held by ``share`` of the ``agents`` or more, at a mean ``confidence`` or more.

    >>> votes = [Vote(0, "7", "7", 0.9), Vote(1, "7", "7", 0.7), Vote(2, "8", "8", 0.9)]
    >>> print(DecisiveVote(2 / 3, 0.8, agents=3).check([votes]), DecisiveVote(1.0, 0.0, agents=3).check([votes]))
    decisive_vote None
    """

    def __init__(self, share: float, confidence: float, agents: int):
        self.share, self.confidence, self.agents = share, confidence, agents

    def check(self, history: History) -> StopReason | None:
        votes = history[-1] if history else []
        if not votes:
            return None
        top, held = Counter(v.key for v in votes).most_common(1)[0]
        mean = sum(v.confidence for v in votes if v.key == top) / held
        return StopReason.DECISIVE_VOTE if held >= self.share * self.agents and mean >= self.confidence else None


class MaxRounds:
    """Stop after ``n`` rounds (round 0 included)."""

    def __init__(self, n: int):
        self.n = n

    def check(self, history: History) -> StopReason | None:
        return StopReason.MAX_ROUNDS if len(history) >= self.n else None


def stop_rules(stop: StopConfig, rounds: int, agents: int) -> list[StopRule]:
    """The rules a config asks for, the hard round cap last."""
    rules: list[StopRule] = []
    if stop.agreement_gate is not None:
        rules.append(ConfidentAgreement(stop.agreement_gate))
    if stop.decisive_share is not None:
        rules.append(DecisiveVote(stop.decisive_share, stop.decisive_confidence, agents))
    if stop.stable_rounds:
        rules.append(StableAnswers(stop.stable_rounds))
    rules.append(MaxRounds(rounds))
    return rules


def first_reason(rules: list[StopRule], history: History) -> StopReason | None:
    """The first rule's reason to stop, or None to go on."""
    return next((reason for rule in rules if (reason := rule.check(history))), None)
