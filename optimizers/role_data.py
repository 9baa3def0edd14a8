"""Role datasets: every recorded call of a role, with labels derived from the question's gold answer.

A debate on a training question records each role call's inputs and outputs in its transcript
(``madspy eval --split train``). Against the gold answer each call gets labels:

- proposer, reviser: ``correct`` (its answer is right); the reviser also ``before_correct`` (its
  previous answer was), so a revision that went wrong->right or right->wrong shows;
- critic: ``proposal_correct`` (the proposal under review is right, so flagging it is a false
  alarm, and passing a wrong one a miss);
- resolver: ``gold_among`` (some proposal it judged holds the gold answer) and ``correct``;
- mask: ``memory_correct`` (the remembered answer is right);
- referee: ``agreed`` (the round's answers were all the same);
- solver: ``correct`` (its program, run in the program check's sandbox, computes the gold answer).

Saved as one JSONL file per role (``save_role_datasets``; ``madspy roles`` builds them from eval folders),
so a role is compiled on its own calls without rerunning debates.

Example:
    >>> from madspy.programs.transcript import Call, Round, Transcript
    >>> t = Transcript(question="2+2?", rounds=[Round(index=0, calls=[
    ...     Call(role="proposer", agent=0, round=0, inputs={"question": "2+2?", "persona": "p"},
    ...          output={"reasoning": "2+2=5", "answer": "5", "confidence": 0.9}),
    ...     Call(role="critic", agent=0, round=0, inputs={"question": "2+2?", "proposal": "answer: 5 (confidence 0.90)",
    ...          "focus": ""}, output={"issues": [], "verdict": "sound"})])])
    >>> [(e.role.value, e.labels) for e in role_examples(t, "q1", "4", lambda a: a == "4")]
    [('proposer', {'correct': False}), ('critic', {'proposal_correct': False})]
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel

from madspy.core.errors import CompileError
from madspy.programs.answers import clean_answer
from madspy.programs.critique import focus_for
from madspy.programs.debate import format_proposal
from madspy.programs.defenses import neutralize
from madspy.programs.program_check import program_answer
from madspy.programs.steps import with_free_text
from madspy.programs.transcript import Transcript
from madspy.signatures import Role

_ANSWER = re.compile(r"answer: (.*?) \(confidence")  # how a proposal is shown to other roles


class RoleExample(BaseModel):
    """One recorded call of one role, labelled against its question's gold answer."""

    role: Role
    question_id: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    labels: dict[str, bool]
    gold: str
    rationale: list[str] = []  # the task's worked solution of the question, where it has one (never a demo)

    def example(self) -> dspy.Example:
        """As a DSPy example: the role's inputs marked as inputs; outputs, labels and gold alongside."""
        return dspy.Example(**self.inputs, **self.outputs, **self.labels, gold=self.gold).with_inputs(*self.inputs)


def shown_answer(text: str) -> str:
    """The answer in a proposal as other roles read it (``answer: 12 (confidence 0.90)`` ...).

    >>> shown_answer("agent 1: answer: 12 (confidence 0.90)\\nstep 1: 6*2")
    '12'
    """
    found = _ANSWER.search(str(text))
    return found.group(1).strip() if found else clean_answer(str(text))


def _labels(
    role: Role, inputs: dict[str, Any], output: dict[str, Any], right: Callable[[str], bool], round_answers: list[str]
) -> dict[str, bool]:
    if role in (Role.PROPOSER, Role.PROGRAMMER, Role.VERIFIER):
        return {"correct": right(clean_answer(str(output.get("answer") or "")))}
    if role == Role.REVISER:
        return {
            "correct": right(clean_answer(str(output.get("answer") or ""))),
            "before_correct": right(shown_answer(inputs.get("previous_answer", ""))),
        }
    if role == Role.CRITIC:
        return {"proposal_correct": right(shown_answer(inputs.get("proposal", "")))}
    if role == Role.RESOLVER:
        held = [shown_answer(p) for p in inputs.get("proposals") or []]
        return {"gold_among": any(right(a) for a in held), "correct": right(str(output.get("final_answer") or ""))}
    if role == Role.MASK:
        return {"memory_correct": right(shown_answer(inputs.get("memory", "")))}
    if role == Role.SOLVER:
        return {"correct": right(program_answer(output))}
    return {"agreed": len(set(round_answers)) == 1}  # the referee


def role_examples(
    transcript: Transcript, question_id: str, gold: str, is_correct: Callable[[str], bool]
) -> list[RoleExample]:
    """Every successful call of a debate as a labelled role example (calls recorded in full only)."""
    found = []
    for rnd in transcript.rounds:
        answers = list(rnd.votes.values())
        for call in rnd.calls:
            if not call.ok or call.output is None:
                continue
            labels = _labels(call.role, call.inputs, call.output, is_correct, answers)
            outputs = with_free_text(call.output) if call.role.answers else dict(call.output)
            found.append(
                RoleExample(
                    role=call.role,
                    question_id=question_id,
                    inputs=call.inputs,
                    outputs=outputs,
                    labels=labels,
                    gold=gold,
                )
            )
    return found


def proposal_reviews(
    transcript: Transcript, question_id: str, gold: str, is_correct: Callable[[str], bool]
) -> list[RoleExample]:
    r"""Every answer of the debate (proposer and reviser calls) as a critic example, reviewed or not.

    The critic's input is the proposal as the debate shows it (``format_proposal``, instructions
    removed when the transcript's config treats peer text as data) with the focus its confidence
    earns; the label is whether the answer is right; there is no recorded critique (``outputs`` is
    empty). A debate critiques only some proposals (not the last round's, one per distinct answer),
    so this gives a critic several times the examples to be compiled or scored on.

    >>> from madspy.programs.transcript import Call, Round, Transcript
    >>> t = Transcript(question="2+2?", rounds=[Round(index=0, calls=[Call(role="proposer", agent=0, round=0,
    ...     inputs={"question": "2+2?", "persona": "p"}, output={"reasoning": "2+2=5", "answer": "5",
    ...     "confidence": 0.9})])])
    >>> [(e.inputs["proposal"], e.labels) for e in proposal_reviews(t, "q1", "4", lambda a: a == "4")]
    [('answer: 5 (confidence 0.90)\nstep 1: 2+2=5', {'proposal_correct': False})]
    """
    critic = transcript.config.get("critic") or {}
    as_data = bool((transcript.config.get("defenses") or {}).get("untrusted_as_data"))
    found = []
    for rnd in transcript.rounds:
        for call in rnd.calls:
            if not (call.ok and call.output and call.role.answers):
                continue
            shown = format_proposal(call.output)  # reads the confidence as a number, as the debate does
            confidence = float(call.output.get("confidence") or 0.0)
            inputs = {
                **({} if critic.get("isolated") else {"question": transcript.question}),
                "proposal": neutralize(shown) if as_data else shown,
                "focus": focus_for(confidence, critic.get("deep_review_below")),
            }
            labels = {"proposal_correct": is_correct(clean_answer(str(call.output.get("answer") or "")))}
            found.append(
                RoleExample(
                    role=Role.CRITIC, question_id=question_id, inputs=inputs, outputs={}, labels=labels, gold=gold
                )
            )
    return found


def as_demo(predictor: dspy.Predict, values: dict[str, Any]) -> dspy.Example | None:
    """``values`` cut to the fields of ``predictor``'s signature, as a demo; None when one is missing
    (``Adapter.format_demos`` would drop such a demo silently). Steps recorded as a list before free-text
    reasoning become its text (``steps.with_free_text``)."""
    fields = set(predictor.signature.input_fields) | set(predictor.signature.output_fields)
    values = with_free_text(values)
    if not fields <= values.keys():
        return None
    return dspy.Example(**{k: v for k, v in values.items() if k in fields})


def save_role_datasets(examples: Iterable[RoleExample], out: str | Path) -> dict[Role, int]:
    """Write ``<out>/<role>.jsonl``, one file per role; returns the examples per role."""
    by_role: dict[Role, list[RoleExample]] = defaultdict(list)
    for example in examples:
        by_role[example.role].append(example)
    if not by_role:
        raise CompileError("no recorded role calls to save")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for role, mine in by_role.items():
        (out / f"{role}.jsonl").write_text("".join(e.model_dump_json() + "\n" for e in mine), encoding="utf-8")
    return {role: len(mine) for role, mine in sorted(by_role.items())}


def load_role_dataset(folder: str | Path, role: Role) -> list[RoleExample]:
    """The examples of one role saved by ``build_role_datasets``."""
    path = Path(folder) / f"{role}.jsonl"
    if not path.is_file():
        raise CompileError(f"no {role} dataset at {path}: build it with madspy roles")
    try:
        return [
            RoleExample.model_validate(json.loads(line))
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    except ValueError as e:
        raise CompileError(f"{path} is not a role dataset ({str(e).splitlines()[0]})") from None
