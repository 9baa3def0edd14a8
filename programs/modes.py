"""Reasoning modes: how an agent reasons when it first answers, an agent setting (``AgentConfig.mode``).

- ``cot``: free chain of thought (the ``proposer`` role): reasoning in plain text, then the answer.
- ``program``: program of thought (the ``programmer`` role; Program of Thoughts, Chen et al. 2022; PAL, Gao et al.
  2023): the agent plans in plain text and writes a short Python program; the sandbox of the program check runs
  it (``program_check.execute``: a separate process, CPU and memory limits, no imports but ``math``) and the
  number it leaves in ``answer`` is the agent's answer. The program is its argument: peers and critics read its
  lines as its steps. A program that raises, loops, imports or computes no number fails the call, with the reason.
- ``verify``: backward verification (the ``verifier`` role; Weng et al. 2023, "Large Language Models are Better
  Reasoners with Self-Verification"): the agent solves in free text, then substitutes its answer back into each
  condition of the question and corrects it where one fails, in the same reply. The substitution is its argument.

Agents of different modes make errors in different places ("Stop Overvaluing Multi-Agent Debate", 2025: a panel's
heterogeneity is what makes debate pay). In later rounds every agent revises in free text (``reviser``).

Example:
    >>> ROLE_OF_MODE["program"].value, as_answer(12.0), as_answer(0.125), as_answer(2500000.0)
    ('programmer', '12', '0.125', '2500000')
"""

from __future__ import annotations

from typing import Any, Literal

import dspy

from madspy.programs.program_check import execute
from madspy.signatures import Role

Mode = Literal["cot", "program", "verify"]
ROLE_OF_MODE: dict[str, Role] = {"cot": Role.PROPOSER, "program": Role.PROGRAMMER, "verify": Role.VERIFIER}


class ProgramFailed(RuntimeError):
    """A programmer's program computed no answer (it raised, looped, imported, or left no number)."""


def as_answer(value: float) -> str:
    """A computed number as an answer: whole numbers without a decimal point, others with up to 10 digits."""
    return str(int(value)) if float(value).is_integer() else f"{value:.10g}"


class ProgramPredict(dspy.Predict):
    """A ``dspy.Predict`` whose prediction is a program, run in the sandbox: the number it computes is added as
    ``answer``. Compiled like any role (its signature's instructions and demos); a program that computes nothing
    raises ``ProgramFailed`` with the sandbox's reason, which the debate records as a failed call."""

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        prediction = super().forward(**kwargs)
        value, why = execute(str(prediction.get("program") or ""))
        if value is None:
            raise ProgramFailed(f"the program computes no answer: {why}")
        prediction["answer"] = as_answer(value)
        return prediction
