"""Stance flips and the echo alarm: agents that change their answer to follow others (cf. Free-MAD, 2025).

A flip is an agent changing its answer between rounds. A flip that cites a
specific argument (the reviser's ``evidence_ref``) is an evidence flip; one that
cites nothing is conformity. Echo ratio = conformity flips / flips of a round.

Example:
    >>> from madspy.programs.flips import flip_kind, echo_ratio
    >>> flip_kind("critique 1: step 2 adds instead of multiplying"), flip_kind("none")
    ('evidence', 'conformity')
    >>> echo_ratio(["conformity", "conformity", "evidence"])
    0.6666666666666666
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

EchoReaction = Literal["none", "devils_advocate", "stop"]  # what the debate does on an echo alarm

PLACEHOLDERS = {"", "none", "n/a", "na", "null", "nothing", "no", "-", "the others", "others agree", "majority"}


class Flip(BaseModel):
    """One agent changing its answer in one round."""

    agent: int
    round: int
    before: str
    after: str
    evidence_ref: str
    kind: str  # "evidence" | "conformity"


def flip_kind(evidence_ref: str | None) -> str:
    """``evidence`` if the reference names an argument, else ``conformity``."""
    text = " ".join(str(evidence_ref or "").split()).strip(" .!").casefold()
    return "conformity" if text in PLACEHOLDERS else "evidence"


def echo_ratio(kinds: list[str]) -> float | None:
    """Share of conformity flips among a round's flips (None when nobody flipped)."""
    return kinds.count("conformity") / len(kinds) if kinds else None
