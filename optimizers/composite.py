"""The composite metric debate programs are compiled against, with per-role feedback for GEPA.

One question's score mixes four terms of its debate:

* accuracy: ``task.score(prediction.answer, gold)`` (0..1);
* critic quality: hit rate minus false-alarm rate of this debate's critic calls
  (a rate with nothing to measure counts as perfect: 1 for hits, 0 for false
  alarms); it contributes 0 (its weight still counts) when the debate made no
  critic call;
* calibration: ``1 - (confidence - correct)^2``;
* cost: ``max(0, tokens / budget_tokens - 1)``, 0 without a budget.

``score = (acc*A + critic*C + calib*K) / (acc + critic + calib) - cost*X`` with the
weights ``acc, critic, calib, cost``; so a perfect, within-budget debate scores 1.0
(GEPA's default ``perfect_score``). Optimizers that bootstrap demos call the
metric with a ``trace``: then it answers "is the final answer correct", so demos
come only from debates that got the answer right (DSPy's convention).

Example:
    >>> from madspy.data import get_task
    >>> metric = CompositeMetric(get_task("arithmetic"), Weights.parse("acc=1,critic=0,calib=1"))
    >>> metric.weights.critic, metric.gate_demos
    (0.0, True)

    ``metric(example, debate(question=example.question))`` then scores one debate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import dspy

from madspy.core.errors import InputError
from madspy.data import CORRECT_AT, Task
from madspy.optimizers.metrics import critic_rates
from madspy.optimizers.traces import debate_trace

_PROPOSAL_ANSWER = re.compile(r"answer: (.*?) \(confidence")


@dataclass(frozen=True)
class Weights:
    """Weights of the composite metric's terms (``cost`` is subtracted)."""

    acc: float = 1.0
    critic: float = 0.3
    calib: float = 0.3
    cost: float = 0.1

    @classmethod
    def parse(cls, text: str) -> Weights:
        """Weights from ``"acc=1,critic=0.3,calib=0.3,cost=0.1"``; terms not named keep their default.

        >>> Weights.parse("acc=2, cost=0")
        Weights(acc=2.0, critic=0.3, calib=0.3, cost=0.0)
        """
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            if name.strip() not in cls.__dataclass_fields__:
                raise InputError(f"unknown weight {name.strip()!r}; use acc, critic, calib, cost")
            try:
                values[name.strip()] = float(value)
            except ValueError:
                raise InputError(f"weight {part!r} is not name=number") from None
        weights = cls(**values)
        if min(asdict(weights).values()) < 0 or weights.acc + weights.critic + weights.calib == 0:
            raise InputError("weights must be >= 0, and acc, critic, calib not all 0")
        return weights


@dataclass(frozen=True)
class Terms:
    """The composite metric's terms for one debate; ``critic`` is None without critic calls."""

    accuracy: float
    correct: bool
    critic: float | None
    calibration: float
    tokens: int
    cost: float

    def score(self, w: Weights) -> float:
        critic = self.critic if self.critic is not None else 0.0
        gain = w.acc * self.accuracy + w.critic * critic + w.calib * self.calibration
        return gain / (w.acc + w.critic + w.calib) - w.cost * self.cost


def critic_quality(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Hit rate minus false-alarm rate over (proposal_correct, flagged) pairs; None when empty.

    >>> critic_quality([(False, True), (True, False)]), critic_quality([(True, True)]), critic_quality([])
    (1.0, 0.0, None)
    """
    if not pairs:
        return None
    rates = critic_rates(pairs)
    hit = rates.hit_rate if rates.hit_rate is not None else 1.0
    false_alarm = rates.false_alarm_rate if rates.false_alarm_rate is not None else 0.0
    return hit - false_alarm


def proposal_answer(text: str) -> str:
    """The answer in a formatted proposal (``answer: 12 (confidence 0.90)`` ...)."""
    found = _PROPOSAL_ANSWER.search(str(text))
    return found.group(1).strip() if found else str(text).strip()


class CompositeMetric:
    """DSPy metric: composite float, demo gate under bootstrap traces, GEPA feedback per role.

    Args:
        task: scores answers (``task.score``).
        weights: the terms' weights.
        budget_tokens: tokens per question above which cost grows (None: cost 0).
        gate_demos: with a ``trace`` (bootstrapping), return whether the answer is
            correct instead of the score. GEPA passes traces too: it needs False.
    """

    def __init__(
        self, task: Task, weights: Weights = Weights(), budget_tokens: int | None = None, gate_demos: bool = True
    ):
        self.task, self.weights, self.budget_tokens, self.gate_demos = task, weights, budget_tokens, gate_demos

    def correct(self, answer: Any, gold: str) -> bool:
        return self.task.score(None if answer is None else str(answer), gold) >= CORRECT_AT

    def terms(self, gold: dspy.Example, pred: dspy.Prediction) -> Terms:
        """The metric's terms for one debate result against its gold example."""
        accuracy = self.task.score(pred.answer, gold.answer)
        correct = accuracy >= CORRECT_AT
        trace = debate_trace(pred.transcript, lambda a: self.correct(a, gold.answer))
        critic = critic_quality([(c.proposal_correct, c.flagged) for c in trace.critic])
        confidence = min(1.0, max(0.0, float(pred.confidence or 0.0)))
        usage = pred.usage or {}
        tokens = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        cost = max(0.0, tokens / self.budget_tokens - 1) if self.budget_tokens else 0.0
        return Terms(accuracy, correct, critic, 1 - (confidence - correct) ** 2, tokens, cost)

    def __call__(
        self,
        gold: dspy.Example,
        pred: dspy.Prediction,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> float | bool | dspy.Prediction:
        if pred is None or getattr(pred, "transcript", None) is None:
            return dspy.Prediction(score=0.0, feedback="the debate failed to run") if pred_name else 0.0
        terms = self.terms(gold, pred)
        if pred_name is not None:
            score = terms.score(self.weights)
            return dspy.Prediction(score=score, feedback=self.feedback(gold, pred, terms, pred_name, pred_trace))
        if trace is not None and self.gate_demos:
            return terms.correct
        return terms.score(self.weights)

    # -- GEPA feedback ---------------------------------------------------------
    def feedback(self, gold: dspy.Example, pred: dspy.Prediction, terms: Terms, role: str, pred_trace: Any) -> str:
        """Text feedback for one call of ``role`` (``pred_trace`` = [(predictor, inputs, outputs)])."""
        summary = (
            f"The debate answered {pred.answer} with confidence {float(pred.confidence or 0):.2f}; "
            f"gold is {gold.answer} ({'correct' if terms.correct else 'wrong'})."
        )
        if not pred_trace:
            return summary
        _, inputs, outputs = pred_trace[0]
        explain = getattr(self, f"_on_{role}", None)
        return f"{explain(gold.answer, dict(inputs), outputs, pred)} {summary}" if explain else summary

    def _agent(self, persona: str, pred: dspy.Prediction) -> str:
        agents = pred.transcript.config.get("agents", [])
        index = next((i for i, a in enumerate(agents) if a.get("persona") == persona), None)
        return f"proposer {index}" if index is not None else "the proposer"

    def _on_proposer(self, gold: str, inputs: dict, outputs: Any, pred: dspy.Prediction) -> str:
        who, answer = self._agent(inputs.get("persona", ""), pred), outputs.get("answer")
        confidence = float(outputs.get("confidence") or 0.0)
        if self.correct(answer, gold):
            return f"{who} answered {answer} correctly with confidence {confidence:.2f}."
        return f"{who} answered {answer} with confidence {confidence:.2f}; gold is {gold}."

    def _on_reviser(self, gold: str, inputs: dict, outputs: Any, pred: dspy.Prediction) -> str:
        before = proposal_answer(inputs.get("previous_answer", ""))
        after = outputs.get("answer")
        move = f"kept {after}" if before == str(after).strip() else f"changed {before} to {after}"
        verdict = "right" if self.correct(after, gold) else f"wrong; gold is {gold}"
        cited = outputs.get("evidence_ref") or "none"
        return f"{self._agent(inputs.get('persona', ''), pred)} {move} (citing {cited!r}): {verdict}."

    def _on_critic(self, gold: str, inputs: dict, outputs: Any, pred: dspy.Prediction) -> str:
        answer = proposal_answer(inputs.get("proposal", ""))
        flagged = outputs.get("verdict") == "flawed"
        if self.correct(answer, gold):
            return (
                f"critic flagged a correct proposal (answered {answer}, gold {gold}): a false alarm."
                if flagged
                else f"critic rightly passed a correct proposal ({answer})."
            )
        return (
            f"critic rightly flagged a wrong proposal (answered {answer}, gold {gold})."
            if flagged
            else f"critic passed a wrong proposal (answered {answer}, gold {gold})."
        )

    def _on_resolver(self, gold: str, inputs: dict, outputs: Any, pred: dspy.Prediction) -> str:
        chosen = outputs.get("final_answer")
        if self.correct(chosen, gold):
            return f"resolver chose the correct answer {chosen}."
        for line in inputs.get("proposals") or []:
            agent, _, proposal = str(line).partition(": ")
            if self.correct(proposal_answer(proposal), gold):
                return f"resolver chose {chosen} although {agent} answered {gold} (gold {gold})."
        return f"resolver chose {chosen}; no debater had the gold answer {gold}."

    def _on_mask(self, gold: str, inputs: dict, outputs: Any, pred: dspy.Prediction) -> str:
        answer, label = proposal_answer(inputs.get("memory", "")), outputs.get("label")
        right = self.correct(answer, gold)
        expected = "YES" if right else "NO"
        verdict = "right" if label == expected else f"wrong, should be {expected}"
        return f"mask labelled answer {answer} ({'correct' if right else f'wrong, gold {gold}'}) {label}: {verdict}."
