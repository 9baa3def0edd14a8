"""The deterministic checks a debate runs on each proposal, as ``CriticConfig`` switches them on: no LM call.

Most checks live in ``calculator`` (arithmetic, answer reached, quantities used, whole answer) and
``program_check`` (the answer against what programs solving the question compute); two read no step and live
here: ``unreadable_answer`` (an answer field the task cannot read) and ``stated_doubt`` (the proposer's own
confidence below a threshold: verbalized confidence is overconfident but still ranks errors below right
answers, Xiong et al. 2024, "Can LLMs Express Their Uncertainty?"). This module is their wiring: which run, the
issues a failed one adds to the proposal's critiques (in the critic's schema), and the event each writes into the
round's transcript.

Example:
    >>> from madspy.programs.config import CriticConfig
    >>> critic = CriticConfig(calculator=True, integer_check=True)
    >>> issues, events = check_proposal(0, "4.5", ["4 + 4 = 9", "9 / 2 = 4.5"], "What is 4 + 4, halved?", critic)
    >>> [i["issue_type"] for i in issues], [e.kind.value for e in events]
    (['calculation_error', 'boundary_violation'], ['miscalculated', 'fractional_answer'])
    >>> checks_on(CriticConfig()), check_proposal(0, "4", ["8 / 2 = 4"], "Half of 8?", critic)
    (False, ([], []))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from madspy.programs.calculator import fractional_answer, unsupported_answer, unused_quantities, wrong_calculations
from madspy.programs.config import CriticConfig
from madspy.programs.program_check import program_disagreement
from madspy.programs.transcript import Event, EventKind


def checks_on(critic: CriticConfig) -> bool:
    """Whether any deterministic check is on."""
    switches = (critic.calculator, critic.answer_check, critic.quantity_check, critic.integer_check)
    return any((*switches, critic.program_check, critic.readable_check, critic.doubt_below is not None))


def unreadable_answer(answer: str, normalize: Callable[[str], str | None]) -> dict[str, Any] | None:
    """An issue when ``normalize`` (the task's) reads no answer in the answer field, else None.

    >>> from madspy.data.scoring import normalize_number
    >>> unreadable_answer("testing", normalize_number)["description"], unreadable_answer("$42", normalize_number)
    ('the answer field holds no answer the task can read', None)
    """
    if normalize(answer) is not None:
        return None
    return {
        "location": "answer",
        "issue_type": "boundary_violation",
        "description": "the answer field holds no answer the task can read",
        "evidence": f"answer field: {answer.strip()[:80]!r}; put only the final answer there",
    }


def stated_doubt(confidence: float | None, below: float) -> dict[str, Any] | None:
    """An issue when the proposer's stated ``confidence`` is below ``below``, else None (also when it stated none).

    >>> stated_doubt(0.8, 0.95)["evidence"], stated_doubt(0.99, 0.95), stated_doubt(None, 0.95)
    ('the proposer states confidence 0.80, below 0.95', None, None)
    """
    if confidence is None or confidence >= below:
        return None
    return {
        "location": "answer",
        "issue_type": "invalid_assumption",
        "description": "the proposer doubts its own answer: some step rests on something it is unsure of",
        "evidence": f"the proposer states confidence {confidence:.2f}, below {below:.2f}",
    }


def check_proposal(
    agent: int,
    answer: str,
    steps: Sequence[str],
    question: str,
    critic: CriticConfig,
    program_values: Sequence[float | None] = (),
    *,
    confidence: float | None = None,
    normalize: Callable[[str], str | None] | None = None,
) -> tuple[list[dict[str, Any]], list[Event]]:
    """The issues the checks ``critic`` turns on find in ``agent``'s proposal, and one event per failed check.

    ``program_values`` are what the solver's programs computed (``critic.program_check``; the debate runs them
    once); ``confidence`` is the one the proposal states (``critic.doubt_below``) and ``normalize`` the task's
    (``critic.readable_check``; without it nothing is judged unreadable). A miscalculation event names the
    first wrong step and counts them all.
    """
    wrong = wrong_calculations(steps) if critic.calculator else []
    events = []
    if wrong:
        first = f"{wrong[0]['location']}: {wrong[0]['evidence']}"
        events.append(Event(kind=EventKind.MISCALCULATED, agent=agent, count=len(wrong), text=first))
    answer_issues = {
        EventKind.ANSWER_UNREACHED: unsupported_answer(answer, steps) if critic.answer_check else None,
        EventKind.QUANTITY_UNUSED: unused_quantities(answer, question, steps) if critic.quantity_check else None,
        EventKind.FRACTIONAL_ANSWER: fractional_answer(answer) if critic.integer_check else None,
        EventKind.PROGRAM_DISAGREES: (
            program_disagreement(answer, program_values, critic.program_agreement) if critic.program_check else None
        ),
        EventKind.ANSWER_UNREADABLE: (
            unreadable_answer(answer, normalize) if critic.readable_check and normalize is not None else None
        ),
        EventKind.DOUBTED: stated_doubt(confidence, critic.doubt_below) if critic.doubt_below is not None else None,
    }
    found = [(kind, issue) for kind, issue in answer_issues.items() if issue]
    events += [Event(kind=kind, agent=agent, text=issue["evidence"]) for kind, issue in found]
    return wrong + [issue for _, issue in found], events


__all__ = ["check_proposal", "checks_on", "stated_doubt", "unreadable_answer"]
