"""The distinct answers of a round: who holds each, its best-argued proposal, and the digest revisers read.

An efficient debate spends its calls on the answers in dispute, not on every agent: proposals
with the same normalized answer share one critique of their representative (the most confident
holder, then the one with most reasoning steps), and revisers read each distinct answer once, with
its support and its strongest argument, instead of every peer's full text (sparse communication in
the spirit of S2-MAD and GroupDebate, 2024). Every reviser of a round reads the same digest, so a
backend that caches prompt prefixes reuses it from one reviser to the next.

Example:
    >>> from madspy.programs.protocols import Vote
    >>> votes = [Vote(0, "391", "391", 0.9), Vote(1, "401", "401", 0.6), Vote(2, "391", "391", 0.7)]
    >>> [(a.answer, a.holders, a.representative) for a in distinct_answers(votes, {0: 2, 1: 3, 2: 4})]
    [('391', (0, 2), 0), ('401', (1,), 1)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from madspy.programs.protocols import Vote


@dataclass(frozen=True)
class DistinctAnswer:
    """One answer of a round and the agents that hold it."""

    key: str
    answer: str  # as its representative wrote it
    holders: tuple[int, ...]
    representative: int  # the best-argued holder: most confident, then most reasoning steps
    confidence: float  # the holders' mean confidence


def distinct_answers(votes: Sequence[Vote], steps: Mapping[int, int]) -> list[DistinctAnswer]:
    """The round's answers, most held first; ``steps`` is each agent's number of reasoning steps."""
    keys = list(dict.fromkeys(v.key for v in votes))
    found = []
    for key in keys:
        mine = [v for v in votes if v.key == key]
        best = max(mine, key=lambda v: (v.confidence, steps.get(v.agent, 0), -v.agent))
        found.append(
            DistinctAnswer(
                key, best.answer, tuple(v.agent for v in mine), best.agent, sum(v.confidence for v in mine) / len(mine)
            )
        )
    return sorted(found, key=lambda a: -len(a.holders))


def digest(
    answers: Sequence[DistinctAnswer], arguments: Mapping[int, str], verdicts: Mapping[int, str], debaters: int
) -> list[str]:
    """One entry per distinct answer: its support, its representative's argument and what the critic found.

    ``arguments`` holds each agent's proposal as peers read it; ``verdicts`` the critic's findings on
    a representative, one line.

    >>> entry = digest([DistinctAnswer("7", "7", (0, 2), 0, 0.8)], {0: "answer: 7\\nstep 1: 3+4=7"},
    ...                {0: "found no valid issue"}, 3)[0]
    >>> print(entry)
    7: held by 2 of 3 debaters (agents 0, 2), mean confidence 0.80; the critic found no valid issue
    its strongest argument: answer: 7
    step 1: 3+4=7
    """
    lines = []
    for a in answers:
        who = f"agent{'s' * (len(a.holders) > 1)} {', '.join(map(str, a.holders))}"
        verdict = verdicts.get(a.representative)
        head = (
            f"{a.answer}: held by {len(a.holders)} of {debaters} debaters ({who}), "
            f"mean confidence {a.confidence:.2f}" + (f"; the critic {verdict}" if verdict else "")
        )
        lines.append(f"{head}\nits strongest argument: {arguments.get(a.representative, '')}".rstrip())
    return lines
