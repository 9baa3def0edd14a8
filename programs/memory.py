"""Memory policies: which earlier answers a reviser sees (seed 003, MAD-M²).

``previous``: peers' answers from the last round. ``full``: every earlier round.
``mask_strict`` / ``mask_lenient``: the mask evaluator labels each last-round
answer YES / NO / NOT_SURE; NO is dropped, NOT_SURE is dropped (strict) or kept
(lenient). Dropped memories never reach the next round's prompts.

Example:
    >>> from madspy.programs.memory import keeps
    >>> keeps("NOT_SURE", "mask_strict"), keeps("NOT_SURE", "mask_lenient"), keeps("NO", "mask_lenient")
    (False, True, False)
"""

from __future__ import annotations

from pydantic import BaseModel

MASKED = ("mask_strict", "mask_lenient")


class MaskDecision(BaseModel):
    """The mask evaluator's label for one memory, and whether it was kept."""

    agent: int
    round: int
    label: str  # YES | NO | NOT_SURE | ERROR (evaluator failed: kept)
    kept: bool


def keeps(label: str, policy: str) -> bool:
    """Whether a memory with this label survives the policy."""
    if label == "NO":
        return False
    if label == "NOT_SURE":
        return policy == "mask_lenient"
    return True


def peer_view(policy: str, receiver: int, rounds: list[dict[int, str]], dropped: set[int]) -> list[str]:
    """The peer answers ``receiver`` sees, from formatted proposals per round (oldest first)."""
    if policy == "full":
        return [f"agent {j}, round {r}: {text}" for r, snap in enumerate(rounds) for j, text in snap.items()
                if j != receiver]
    last = rounds[-1] if rounds else {}
    return [f"agent {j}: {text}" for j, text in last.items() if j != receiver and j not in dropped]
