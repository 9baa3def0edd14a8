"""Steps derived from free-text reasoning, after the fact.

Answering roles reason in free text (``reasoning``), as models are trained to; nothing caps the
number or length of their steps. Where the debate needs steps (a critic naming the step it
attacks, the calculator checking each written computation, a digest preferring the best-argued
holder), they are read off the text: its numbered or bulleted lines when it has them, else its
non-empty lines, and a single paragraph is split into sentences.

Example:
    >>> steps_of("1. 3 boxes of 4 pens: 3 * 4 = 12.\\n2. She gives away 5: 12 - 5 = 7.\\nSo 7 pens.")
    ['3 boxes of 4 pens: 3 * 4 = 12.', 'She gives away 5: 12 - 5 = 7.', 'So 7 pens.']
    >>> steps_of("Each box holds 4 pens. Three boxes hold 3 * 4 = 12 pens. She has 12.5 kg left.")
    ['Each box holds 4 pens.', 'Three boxes hold 3 * 4 = 12 pens.', 'She has 12.5 kg left.']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# "1.", "1)", "Step 1:", "- ", "* " at the start of a line: what makes a line a step of its own.
_MARKER = re.compile(r"^\s*(?:(?:step\s*)?\d+\s*[.):]|[-*•])\s+", re.IGNORECASE)
# A sentence ends at . ! or ? followed by a space and a capital letter or digit (not inside "12.5" or "e.g. x").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_STEP_NUMBER = re.compile(r"\bstep\s*(\d+)\b|^\s*(\d+)\s*$", re.IGNORECASE)


def steps_of(reasoning: str | None) -> list[str]:
    """The steps of a free-text reasoning: numbered or bulleted lines (markers removed), else lines, else
    sentences. Empty text has no steps.

    >>> steps_of(""), steps_of("- a = 2\\n- b = a + 1 = 3")
    ([], ['a = 2', 'b = a + 1 = 3'])
    >>> steps_of("First line\\n\\nSecond line")
    ['First line', 'Second line']
    """
    lines = [line.strip() for line in str(reasoning or "").splitlines() if line.strip()]
    if len(lines) > 1:
        return [_MARKER.sub("", line, count=1).strip() or line for line in lines]
    if not lines:
        return []
    return [s.strip() for s in _SENTENCE_END.split(_MARKER.sub("", lines[0], count=1)) if s.strip()]


def proposal_steps(output: Mapping[str, Any]) -> list[str]:
    """A proposal's steps: derived from its ``reasoning``, then a program's lines (an agent in program mode argues
    with its program); a transcript written before free-text reasoning holds them as ``reasoning_steps``.

    >>> proposal_steps({"reasoning": "a = 2. Then b = 3."}), proposal_steps({"reasoning_steps": ["a = 2"]})
    (['a = 2.', 'Then b = 3.'], ['a = 2'])
    >>> proposal_steps({"reasoning": "Pens in boxes.", "program": "boxes = 3\\nanswer = boxes * 4"})
    ['Pens in boxes.', 'boxes = 3', 'answer = boxes * 4']
    """
    if "reasoning" in output:
        program = [line.strip() for line in str(output.get("program") or "").splitlines() if line.strip()]
        return steps_of(output.get("reasoning")) + program
    return [str(s) for s in output.get("reasoning_steps") or []]


def step_number(location: str | None) -> int | None:
    """The step a critic's ``location`` names ("step 2", "Step 3: the sum", "2"), or None.

    >>> step_number("step 2"), step_number("In Step 10, the total"), step_number("the answer"), step_number("3")
    (2, 10, None, 3)
    """
    match = _STEP_NUMBER.search(str(location or ""))
    return None if match is None else int(match.group(1) or match.group(2))


def with_free_text(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` of a proposal recorded before free-text reasoning (a demo of an older program file, a call of an
    older transcript), its ``reasoning_steps`` list written as the numbered ``reasoning`` text that replaced it.

    >>> with_free_text({"reasoning_steps": ["a = 2", "b = a + 1 = 3"], "answer": "3"})
    {'answer': '3', 'reasoning': '1. a = 2\\n2. b = a + 1 = 3'}
    >>> with_free_text({"reasoning": "a = 2", "answer": "2"})
    {'reasoning': 'a = 2', 'answer': '2'}
    """
    if "reasoning_steps" not in fields or "reasoning" in fields:
        return dict(fields)
    out = {k: v for k, v in fields.items() if k != "reasoning_steps"}
    out["reasoning"] = "\n".join(f"{i}. {step}" for i, step in enumerate(fields["reasoning_steps"] or [], 1))
    return out
