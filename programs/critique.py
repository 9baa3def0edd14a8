"""Critic discipline: valid challenges, deeper review, a checklist retry.

A challenge is valid only if it names a step (``location`` mentions "step" or a
step number) that the proposal has (its steps are derived from its free-text reasoning,
``steps.steps_of``) and has a known type (the signature enforces the type). Low-confidence
proposals get a deeper review; a critic that found nothing may be asked once more
with an explicit checklist.

Example:
    >>> from madspy.programs.critique import valid_issues
    >>> valid_issues({"issues": [{"location": "step 2", "issue_type": "calculation_error",
    ...                            "description": "7*8 is 56", "evidence": "7*8=56"},
    ...                           {"location": "overall", "issue_type": "contradiction",
    ...                            "description": "feels wrong", "evidence": ""}]})[0]["location"]
    'step 2'
"""

from __future__ import annotations

from typing import Any

from madspy.programs.steps import step_number

DEEP_REVIEW = (
    "Deep review: the proposer is unsure. Recompute every step yourself and check each "
    "number and condition it uses against the question."
)
CHECKLIST = (
    "Checklist, go through every item before answering: (1) hidden assumptions the question does "
    "not state; (2) every condition a step cites: is it really in the question, with the same "
    "numbers?; (3) jumps between steps that skip a needed condition or computation."
)
CONFIDENT_FLAGGED = "[a confident proposal the critic flagged: verify this step before trusting the proposal]"


def _as_dict(issue: Any) -> dict[str, Any]:
    return issue if isinstance(issue, dict) else issue.model_dump()


def names_step(location: str | None) -> bool:
    """Whether an issue's location points at a step."""
    text = str(location or "").casefold()
    return "step" in text or any(ch.isdigit() for ch in text)


def valid_issues(critique: Any, steps: int | None = None) -> list[dict[str, Any]]:
    """The critic's issues that name a step; with ``steps`` (how many the proposal has), one of its steps.

    >>> issue = {"location": "step 4", "issue_type": "calculation_error", "description": "", "evidence": ""}
    >>> len(valid_issues({"issues": [issue]}, steps=4)), len(valid_issues({"issues": [issue]}, steps=3))
    (1, 0)
    """
    found = [i for i in map(_as_dict, critique.get("issues") or []) if names_step(i.get("location"))]
    if steps is None:
        return found
    return [i for i in found if (n := step_number(i.get("location"))) is None or 1 <= n <= steps]


def issue_lines(issues: list[dict[str, Any]]) -> list[str]:
    """Issues as the reviser and the resolver read them, one line each."""
    return [
        f"[{i.get('issue_type')}] {i.get('location')}: {i.get('description')} (evidence: {i.get('evidence')})"
        for i in issues
    ]


def verdict_line(issues: list[dict[str, Any]]) -> str:
    """What the critic found in one proposal, as a digest reads it.

    >>> verdict_line([]), verdict_line([{"issue_type": "calculation_error", "location": "step 2"}])
    ('found no valid issue', 'flagged it: calculation_error in step 2')
    """
    if not issues:
        return "found no valid issue"
    return "flagged it: " + "; ".join(f"{i.get('issue_type')} in {i.get('location')}" for i in issues)


def focus_for(confidence: float, deep_review_below: float | None) -> str:
    """What the critic should look at especially for a proposal of this confidence."""
    return DEEP_REVIEW if deep_review_below is not None and confidence < deep_review_below else ""
