"""The deterministic checks a debate runs on each proposal, as ``CriticConfig`` switches them on: no LM call.

The checks themselves live in ``calculator`` (arithmetic, answer reached, quantities used, whole answer) and
``program_check`` (the answer against what programs solving the question compute); this module is their
wiring: which of them run, the issues a failed one adds to the proposal's critiques (in the critic's schema),
and the event each writes into the round's transcript.

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

from collections.abc import Sequence
from typing import Any

from madspy.programs.calculator import fractional_answer, unsupported_answer, unused_quantities, wrong_calculations
from madspy.programs.config import CriticConfig
from madspy.programs.program_check import program_disagreement
from madspy.programs.transcript import Event, EventKind


def checks_on(critic: CriticConfig) -> bool:
    """Whether any deterministic check is on."""
    return any(
        (critic.calculator, critic.answer_check, critic.quantity_check, critic.integer_check, critic.program_check)
    )


def check_proposal(
    agent: int,
    answer: str,
    steps: Sequence[str],
    question: str,
    critic: CriticConfig,
    program_values: Sequence[float | None] = (),
) -> tuple[list[dict[str, Any]], list[Event]]:
    """The issues the checks ``critic`` turns on find in ``agent``'s proposal, and one event per failed check.

    ``program_values`` are what the solver's programs computed (``critic.program_check``; the debate runs them
    once). A miscalculation event names the first wrong step and counts them all.
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
    }
    found = [(kind, issue) for kind, issue in answer_issues.items() if issue]
    events += [Event(kind=kind, agent=agent, text=issue["evidence"]) for kind, issue in found]
    return wrong + [issue for _, issue in found], events


__all__ = ["check_proposal", "checks_on"]
