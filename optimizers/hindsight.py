"""Hindsight critiques: a teacher that knows the gold answer writes the critique the critic missed.

A weak critic passes almost every proposal, so its recorded calls hold few hits (a wrong
proposal flagged at the step where it goes wrong) to learn from, and bootstrapping finds none.
Here a teacher (the task model, or a stronger ``--teacher``) reads a wrong proposal together
with the question's gold answer and, where the task has one, its worked solution, and names the
flawed step: rationalization with the answer as a hint, as in STaR (Zelikman et al., 2022,
"STaR: Bootstrapping Reasoning With Reasoning"). A critique is kept as a demo only if the critic
metric calls it a hit and it does not state the gold answer (where the proposal does not already
hold it): the saved demo holds the critic's own inputs and the teacher's issues and verdict,
never the gold.

Example::

    found = hindsight_critiques(critic_predictor, wrong_examples, RoleMetric(task, "critic"), limit=2)
    found.demos, found.counts()   # the demos; asked, kept, failed, not_a_hit, stated_gold
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import dspy
from pydantic_core import to_jsonable_python

from madspy.optimizers.role_data import RoleExample, as_demo
from madspy.optimizers.role_metrics import RoleMetric

HINDSIGHT_NOTE = (
    "You are shown the correct final answer and, when available, a reference solution. The proposal "
    "under review reaches a different answer, so at least one of its steps is wrong: find the first "
    "such step and report it as an issue that names the step, with evidence from the question. Never "
    "state the correct final answer or the reference solution's result in your issues: a critic "
    "without the answer must be able to write the same critique."
)


def hindsight_signature(signature: type[dspy.Signature]) -> type[dspy.Signature]:
    """The critic's signature with the gold answer and the reference solution as extra inputs."""
    return (
        signature.append("gold_answer", dspy.InputField(desc="the correct final answer (do not state it)"), type_=str)
        .append(
            "reference_solution",
            dspy.InputField(desc="a correct worked solution; may be empty (do not quote its result)"),
            type_=str,
        )
        .with_instructions(f"{signature.instructions}\n\n{HINDSIGHT_NOTE}")
    )


def states_answer(text: str, answer: str) -> bool:
    """Whether ``answer`` occurs in ``text`` as a whole token (``12`` is in ``is 12.`` but not in ``120``).

    >>> states_answer("step 2 gives 120, it should be 12.", "12"), states_answer("120 - 5", "12")
    (True, False)
    """
    answer = answer.strip()
    if not answer:
        return False
    return re.search(rf"(?<![\w.]){re.escape(answer)}(?![\w]|\.\d)", text, flags=re.IGNORECASE) is not None


@dataclass
class Hindsight:
    """What the hindsight teacher wrote: the demos kept, and why the other critiques were not."""

    demos: list[dspy.Example] = field(default_factory=list)
    asked: int = 0
    failed: int = 0  # the reply did not parse
    not_a_hit: int = 0  # no flag, or no issue naming a step
    stated_gold: int = 0  # dropped: the critique gives the answer away

    def counts(self) -> dict[str, int]:
        return {
            "asked": self.asked,
            "kept": len(self.demos),
            "failed": self.failed,
            "not_a_hit": self.not_a_hit,
            "stated_gold": self.stated_gold,
        }


def hindsight_critiques(
    predictor: dspy.Predict,
    examples: Sequence[RoleExample],
    metric: RoleMetric,
    *,
    limit: int,
    teacher: dspy.LM | None = None,
) -> Hindsight:
    """Up to ``limit`` critic demos (one per question) of wrong proposals flagged with the gold in hindsight.

    The teacher runs under ``teacher`` (default: the current ``dspy.settings.lm``). A call that fails,
    a critique that is not a hit and a critique that states the gold answer are all skipped (and counted).
    """
    teacher_call = dspy.Predict(hindsight_signature(predictor.signature))
    found = Hindsight()
    seen: set[str] = set()
    for e in examples:
        if len(found.demos) >= limit:
            break
        if e.question_id in seen or e.labels.get("proposal_correct") is not False:
            continue
        found.asked += 1
        reference = "\n".join(e.rationale)
        try:
            with dspy.context(**({"lm": teacher} if teacher is not None else {})):
                pred = teacher_call(**e.inputs, gold_answer=e.gold, reference_solution=reference)
        except Exception:  # a teacher reply that does not parse teaches nothing
            found.failed += 1
            continue
        outputs = {name: to_jsonable_python(pred.get(name)) for name in predictor.signature.output_fields}
        shown = " ".join(str(v) for v in e.inputs.values())
        if not metric.good(e.example(), dspy.Prediction(**outputs)):
            found.not_a_hit += 1
            continue
        if states_answer(str(outputs), e.gold) and not states_answer(shown, e.gold):
            found.stated_gold += 1  # the critique would carry its question's answer into the prompt
            continue
        demo = as_demo(predictor, e.inputs | outputs)
        if demo is not None:
            found.demos.append(demo)
            seen.add(e.question_id)
    return found
