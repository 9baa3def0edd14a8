"""Memory policies: which earlier answers a reviser sees (masking: MAD-M², ICLR 2026).

``previous``: peers' answers from the last round. ``full``: every earlier round.
``summary``: the latest ``keep`` rounds in full, older rounds compressed to one line
each (who answered what), so prompts stop growing with the debate. ``digest``: each
distinct answer of the last round once, with its support, its strongest argument and the
critic's finding (``madspy.programs.distinct``), the same for every reviser; older rounds
as summary lines.
``mask_strict`` / ``mask_lenient``: the mask evaluator labels each last-round
answer YES / NO / NOT_SURE; NO is dropped, NOT_SURE is dropped (strict) or kept
(lenient). ``mask_objective``: no extra call; keep the answers the model itself was
surest of (best mean token log-probability), where the backend reports them.
Dropped memories never reach the next round's prompts.

Example:
    >>> from madspy.programs.memory import keeps
    >>> keeps("NOT_SURE", "mask_strict"), keeps("NOT_SURE", "mask_lenient"), keeps("NO", "mask_lenient")
    (False, True, False)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

MemoryPolicy = Literal["previous", "full", "summary", "digest", "mask_strict", "mask_lenient", "mask_objective"]
MASKED = ("mask_strict", "mask_lenient", "mask_objective")


class MaskDecision(BaseModel):
    """The mask evaluator's label for one memory, and whether it was kept."""

    agent: int
    round: int
    label: str  # YES | NO | NOT_SURE | ERROR (evaluator failed: kept)
    kept: bool


def best_by_logprob(logprobs: dict[int, float], keep: int) -> set[int]:
    """The ``keep`` agents whose answers had the highest mean token log-probability.

    >>> sorted(best_by_logprob({0: -0.9, 1: -0.2, 2: -0.5}, 2))
    [1, 2]
    """
    return set(sorted(logprobs, key=lambda a: logprobs[a], reverse=True)[:keep])


def keeps(label: str, policy: str) -> bool:
    """Whether a memory with this label survives the policy."""
    if label == "NO":
        return False
    if label == "NOT_SURE":
        return policy == "mask_lenient"
    return True


def summary_line(round_index: int, answers: dict[int, str]) -> str:
    """One round compressed: each answer with the agents that gave it.

    >>> summary_line(0, {0: "41", 1: "41", 2: "42"})
    'round 0 summary: 41 (agents 0, 1); 42 (agent 2)'
    """
    by_answer: dict[str, list[int]] = {}
    for agent, answer in answers.items():
        by_answer.setdefault(answer, []).append(agent)
    parts = [f"{a} (agent{'s' * (len(ids) > 1)} {', '.join(map(str, ids))})" for a, ids in by_answer.items()]
    return f"round {round_index} summary: " + "; ".join(parts)


def peer_view(
    policy: str,
    visible: set[int],
    rounds: list[dict[int, str]],
    dropped: set[int],
    answers: list[dict[int, str]] | None = None,
    keep: int = 1,
) -> list[str]:
    """The answers of the ``visible`` peers, from formatted proposals per round (oldest first).

    ``answers`` (the bare answers per round) feed the ``summary`` policy's old-round lines.
    """
    if policy in ("full", "summary"):
        start = max(0, len(rounds) - keep) if policy == "summary" else 0
        old = (
            [summary_line(r, {j: a for j, a in answers[r].items() if j in visible}) for r in range(start)]
            if answers
            else []
        )
        return old + [
            f"agent {j}, round {r}: {text}"
            for r, snap in enumerate(rounds)
            if r >= start
            for j, text in snap.items()
            if j in visible
        ]
    last = rounds[-1] if rounds else {}
    return [f"agent {j}: {text}" for j, text in last.items() if j in visible and j not in dropped]
