"""Stance flips and the echo alarm: agents that change their answer to follow others (cf. Free-MAD, 2025).

A flip is an agent changing its answer between rounds. A flip that cites a
specific argument (the reviser's ``evidence_ref``) is an evidence flip; one that
cites nothing, cites a critique the reviser never read, or cites only checked
arguments that contradict it (a peer's program whose output is another answer)
is conformity. Echo ratio = conformity flips / flips of a round.

Example:
    >>> from madspy.programs.flips import flip_kind, echo_ratio
    >>> flip_kind("critique 1: step 2 adds instead of multiplying", critiques_read=1), flip_kind("none")
    ('evidence', 'conformity')
    >>> echo_ratio(["conformity", "conformity", "evidence"])
    0.6666666666666666
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

EchoReaction = Literal["none", "devils_advocate", "stop"]  # what the debate does on an echo alarm

_CITED_CRITIQUE = re.compile(r"\bcritiques?\s*#?\s*(\d+)", re.IGNORECASE)
_CITED_AGENT = re.compile(r"\bagents?\s*#?\s*(\d+)", re.IGNORECASE)
PLACEHOLDERS = {"", "none", "n/a", "na", "null", "nothing", "no", "-", "the others", "others agree", "majority"}


class Flip(BaseModel):
    """One agent changing its answer in one round."""

    agent: int
    round: int
    before: str
    after: str
    evidence_ref: str
    kind: str  # "evidence" | "conformity"


def flip_kind(
    evidence_ref: str | None,
    critiques_read: int | None = None,
    after: str | None = None,
    checked: dict[int, str] | None = None,
) -> str:
    """``evidence`` if the reference names an argument, else ``conformity``.

    A reference to "critique N" names an argument only if the reviser read at least N critiques
    (``critiques_read``; None: not checked). Small models copy the reviser instruction's own example
    ("critique 1: step 2 adds instead of multiplying") into debates that have no critic; on the
    bench model that was about one gsm8k flip in five (bench/RESULTS.md). A reference to agents whose
    answers were ``checked`` (an agent in program mode: the answer its program computed in the sandbox)
    supports the flip only if one of them computed the new answer (``after``): citing a program that
    computes another number is not evidence for this one.

    >>> flip_kind("critique 1: step 2 adds instead of multiplying", critiques_read=0)
    'conformity'
    >>> flip_kind("agent 1's program", after="8", checked={1: "7"}), flip_kind("agent 1", after="7", checked={1: "7"})
    ('conformity', 'evidence')
    """
    text = " ".join(str(evidence_ref or "").split()).strip(" .!").casefold()
    if text in PLACEHOLDERS:
        return "conformity"
    cited = [int(n) for n in _CITED_CRITIQUE.findall(text)]
    if critiques_read is not None and cited and max(cited) > critiques_read:
        return "conformity"
    agents = [int(n) for n in _CITED_AGENT.findall(text)]
    if checked and agents and all(a in checked for a in agents) and after not in {checked[a] for a in agents}:
        return "conformity"
    return "evidence"


def echo_ratio(kinds: list[str]) -> float | None:
    """Share of conformity flips among a round's flips (None when nobody flipped)."""
    return kinds.count("conformity") / len(kinds) if kinds else None
