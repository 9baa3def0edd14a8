"""Who sees whom: all-to-all, ring (k neighbours) or groups (GroupDebate, Liu et al. 2024).

In a ring each agent sees its ``k`` nearest neighbours; in groups agents debate
inside blocks of ``size`` and the decision votes across groups, one vote per
group, which keeps messages O(N) instead of O(N²).

Example:
    >>> from madspy.programs.topology import visible, groups
    >>> sorted(visible(0, 5, "ring", neighbors=2)), groups(5, 2)
    ([1, 4], [[0, 1], [2, 3], [4]])
"""

from __future__ import annotations

from typing import Literal

from madspy.programs.protocols import Plurality, Vote

Topology = Literal["all", "ring", "groups"]


def groups(n: int, size: int) -> list[list[int]]:
    """Agents 0..n-1 in consecutive blocks of ``size`` (the last may be smaller)."""
    return [list(range(start, min(start + size, n))) for start in range(0, n, size)]


def visible(receiver: int, n: int, topology: str, neighbors: int = 2, group_size: int = 3) -> set[int]:
    """The agents whose answers ``receiver`` sees."""
    if topology == "ring":
        seen: list[int] = []
        for d in range(1, n):
            for j in ((receiver + d) % n, (receiver - d) % n):
                if j != receiver and j not in seen and len(seen) < neighbors:
                    seen.append(j)
        return set(seen)
    if topology == "groups":
        return next(set(g) for g in groups(n, group_size) if receiver in g) - {receiver}
    return set(range(n)) - {receiver}


def group_votes(votes: list[Vote], n: int, size: int) -> list[Vote]:
    """One vote per group: its plurality answer, cast by its most confident holder.

    The vote's confidence is the group's plurality confidence (share x mean).
    """
    out = []
    for members in groups(n, size):
        mine = [v for v in votes if v.agent in members]
        if not mine:
            continue
        d = Plurality().decide(mine)
        key = next(iter(d.tally))
        holder = max((v for v in mine if v.key == key), key=lambda v: v.confidence)
        out.append(Vote(holder.agent, holder.answer, key, d.confidence))
    return out
