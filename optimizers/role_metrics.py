"""What a good call of each role is: the metric a role is compiled against, on its own labelled calls.

- proposer / reviser: a right answer, and a confidence that says how likely it is right
  (``0.7 correct + 0.3 (1 - (confidence - correct)^2)``);
- critic: flag a wrong proposal with an issue that names a step (a hit), pass a right one (no false
  alarm): 1 or 0, so its mean over a dataset is hit rate and (1 - false-alarm rate) mixed by the
  share of wrong proposals;
- resolver: pick the gold answer when a proposal holds it, with a calibrated confidence; when none
  does, a low confidence is all it can get right;
- mask: the label the memory deserves (YES for a right answer, NO for a wrong one);
- referee: ``converged`` when, and only when, the round's answers agreed;
- solver: a program that computes the gold answer (run in the program check's sandbox).

Under a bootstrapping trace (DSPy's convention for keeping demos) a metric answers "was this call
good": a full score.

Example:
    >>> import dspy
    >>> from madspy.data import get_task
    >>> metric = RoleMetric(get_task("gsm8k"), "critic")
    >>> wrong = dspy.Example(proposal_correct=False, gold="7")
    >>> flag = dspy.Prediction(verdict="flawed", issues=[{"location": "step 2", "issue_type": "calculation_error",
    ...                                                    "description": "3+5 is 8", "evidence": "3+5=8"}])
    >>> metric(wrong, flag), metric(wrong, dspy.Prediction(verdict="sound", issues=[]))
    (1.0, 0.0)
"""

from __future__ import annotations

from typing import Any

import dspy

from madspy.data import Task
from madspy.programs.critique import valid_issues
from madspy.programs.program_check import program_answer
from madspy.signatures import Role


def _confidence(pred: Any) -> float:
    try:
        return min(1.0, max(0.0, float(pred.get("confidence") or 0.0)))
    except (TypeError, ValueError):
        return 0.0


def flagged(pred: Any) -> bool:
    """A critic flagged the proposal: verdict ``flawed`` with at least one issue that names a step."""
    return pred.get("verdict") == "flawed" and bool(valid_issues(pred))


class RoleMetric:
    """The DSPy metric of one role on its role dataset (``optimizers.role_data``)."""

    def __init__(self, task: Task, role: Role | str):
        self.task, self.role = task, Role(role)

    def right(self, answer: Any, example: dspy.Example) -> bool:
        """Whether ``answer`` is right for ``example``'s question, read as a debate counts it (an option's
        text written out is that option)."""
        return self.task.right(answer, example.gold, example.get("question") or "")

    def score(self, example: dspy.Example, pred: Any) -> float:
        """The call's score, 0..1."""
        if self.role.answers:
            correct = self.right(pred.get("answer"), example)
            return 0.7 * correct + 0.3 * (1 - (_confidence(pred) - correct) ** 2)
        if self.role == Role.CRITIC:
            return float(flagged(pred) != bool(example.proposal_correct))
        if self.role == Role.RESOLVER:
            correct = self.right(pred.get("final_answer"), example)
            calibration = 1 - (_confidence(pred) - correct) ** 2
            return 0.7 * correct + 0.3 * calibration if example.gold_among else calibration
        if self.role == Role.MASK:
            return float(pred.get("label") == ("YES" if example.memory_correct else "NO"))
        if self.role == Role.SOLVER:
            return float(self.right(program_answer(pred), example))
        return float(bool(pred.get("converged")) == bool(example.agreed))  # the referee

    def __call__(
        self, example: dspy.Example, pred: Any, trace: Any = None, pred_name: str | None = None, pred_trace: Any = None
    ) -> float | bool | dspy.Prediction:
        score = self.score(example, pred)
        if pred_name is not None:  # GEPA asks for text feedback too
            return dspy.Prediction(score=score, feedback=self.feedback(example, pred, score))
        if trace is not None:
            return self.good(example, pred)
        return score

    def good(self, example: dspy.Example, pred: Any) -> bool:
        """Whether a call is good enough to be a demo: right (answers), a hit or a clean pass (critic)..."""
        if self.role.answers:
            return self.right(pred.get("answer"), example)
        if self.role == Role.RESOLVER:
            return bool(example.gold_among) and self.right(pred.get("final_answer"), example)
        return self.score(example, pred) == 1.0

    def feedback(self, example: dspy.Example, pred: Any, score: float) -> str:
        """What went right or wrong with one call, in words, for GEPA's reflection."""
        gold = example.gold
        if self.role.answers:
            answer = pred.get("answer")
            verdict = "right" if self.right(answer, example) else f"wrong; the gold answer is {gold}"
            return f"The {self.role} answered {answer} with confidence {_confidence(pred):.2f}: {verdict}."
        if self.role == Role.CRITIC:
            raised = flagged(pred)
            if example.proposal_correct:
                return (
                    "False alarm: the proposal was right and the critic flagged it."
                    if raised
                    else "Right: the proposal was right and the critic passed it."
                )
            return (
                f"Hit: the proposal was wrong (gold {gold}) and the critic named the flawed step."
                if raised
                else f"Miss: the proposal was wrong (gold {gold}) and the critic passed it or named no step."
            )
        if self.role == Role.RESOLVER:
            chosen = pred.get("final_answer")
            if not example.gold_among:
                return f"No debater had the gold answer {gold}; a low confidence was the right call."
            verdict = "right" if self.right(chosen, example) else f"wrong: a debater had the gold answer {gold}"
            return f"The resolver chose {chosen} with confidence {_confidence(pred):.2f}: {verdict}."
        if self.role == Role.SOLVER:
            computed = program_answer(pred) or "no number"
            verdict = "right" if score == 1.0 else f"wrong; the gold answer is {gold}"
            return f"The solver's program computed {computed}: {verdict}."
        return f"Score {score:.2f}."
