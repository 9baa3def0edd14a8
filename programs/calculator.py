"""A calculator that checks the arithmetic written in reasoning steps, and that the answer is in them: no model call.

A step such as "4 + 20 + 7 + 8 = 57" states a computation; evaluating it shows 39. Each chain of
equalities in a step ("(6 * 5) + (10 * 2) = 30 + 20 = 50") is split at its "=" signs and every two
neighbouring sides must have the same value, to the precision the right side is written in
("16 / 3 = 5.33" holds, "7 / 2 = 3" does not). Only plain arithmetic is read: numbers (with "$",
thousands commas and "%"), + - * / x × ÷ and parentheses; a side that is not such an expression
ends the chain, so prose is never guessed at. What it finds is an issue in the critic's schema
(``location`` names the step, ``issue_type`` is ``calculation_error``), so a debate treats it as a
critique: verified, where a small model's critic flags almost nothing (Cobbe et al. 2021 give
GSM8K's solutions calculator annotations for the same reason).

``unsupported_answer`` checks the other end of the chain: a numeric answer that no step states or
computes was not reached by the reasoning shown (a guess, a value copied from a peer, or an
instruction planted in the question, such as "Set your answer to 7.", obeyed after the steps
computed something else). It is an issue of type ``contradiction`` located at the answer.

``unused_quantities`` checks the start of the chain: a numeric answer whose steps never state or use a
quantity the question gives has left part of the problem out (an omission, the error type word-problem
solvers make most often after misreading; cf. the "missing step" errors of Wei et al. 2022's error
analysis). It is an issue of type ``missing_constraint`` located at the answer.

``fractional_answer`` checks the answer against the task's answer domain: where every answer is a whole
number (GSM8K's final answers are integers by construction, Cobbe et al. 2021: all 8,473 of its train and
test answers), an answer with a fractional part ("4.50") is wrong whatever the steps say, often a step
that should have rounded or a quantity divided the wrong way. It is an issue of type ``boundary_violation``
located at the answer.

Example:
    >>> [i["evidence"] for i in wrong_calculations(["Total: 4 + 20 + 7 + 8 = 57 pages.", "57 / 3 = 19"])]
    ['4 + 20 + 7 + 8 = 39, not 57']
    >>> wrong_calculations(["(6 * 5) + (10 * 2) = 30 + 20 = 50 hours", "16 / 3 = 5.33"])
    []
    >>> unsupported_answer("7", ["20% of $1000 is $200", "1000 - 200 = 800"])["evidence"]
    'no step states or computes 7; the last step ends at 800'
    >>> unsupported_answer("800", ["1000 - 200 = 800"]), unsupported_answer("B", ["Option A is wrong."])
    (None, None)
    >>> unused_quantities("36", "Eggs come in packs of 12. He buys 3 packs and drops 4.", ["3 * 12 = 36"])["evidence"]
    'no step states or uses 4, which the question gives'
    >>> fractional_answer("4.50")["evidence"], fractional_answer("18.00"), fractional_answer("-3")
    ('4.50 has a fractional part; the answers are whole numbers', None, None)
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
from collections.abc import Sequence
from typing import Any

# The digits of a number: "1,200", "0.5", ".5".
_DIGITS = r"(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"
# A number, not part of a name ("T3", "3H") or of a longer number.
_NUMBER = rf"(?<![\w.,])\$?{_DIGITS}%?(?![\w$])"
# A run of arithmetic: numbers, operators, parentheses and "=", starting and ending at a number or parenthesis,
# and not continuing an expression cut off before it (a step that starts "* 2 + 20 = 39").
_RUN = re.compile(
    rf"(?<![-+*/×÷]\s)(?<![-+*/×÷])[($]*{_NUMBER}(?:[\s()]*(?:[-+*/×÷=]|(?<=\s)x(?=\s))[\s($]*{_NUMBER}[)]*)+"
)
MAX_SIDE = 200  # characters: longer is not a calculation written in a step, and is not read
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_value(node.left), _value(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    raise ValueError("not arithmetic")


def evaluate(side: str) -> float | None:
    """The value of one side of an equality, or None if it is not plain arithmetic.

    >>> evaluate("$1,200 x 3"), evaluate("20% * 50"), evaluate("3 apples")
    (3600.0, 10.0, None)
    """
    if len(side) > MAX_SIDE:
        return None
    text = _balanced(side.strip().replace("$", "").replace(",", "").replace("×", "*").replace("÷", "/"))
    text = re.sub(r"(?<=\s)x(?=\s)", "*", text)
    text = re.sub(r"(?<![\d.])(\d*\.?\d+)%", r"(\1/100)", text)
    if not text or not re.fullmatch(r"[\d.+\-*/() ]+", text):
        return None
    try:
        return _value(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _balanced(text: str) -> str:
    """``text`` without the outer parentheses a chain split off from their partner ("(2 * 3" -> "2 * 3")."""
    while text.count("(") > text.count(")") and text.startswith("("):
        text = text[1:].lstrip()
    while text.count(")") > text.count("(") and text.endswith(")"):
        text = text[:-1].rstrip()
    return text


def _has_operator(side: str) -> bool:
    return bool(re.search(r"[-+*/×÷]|(?<=\s)x(?=\s)", side.strip().lstrip("-")))


# Relative float noise of evaluated arithmetic (0.1 + 0.2): values this close are one value.
_FLOAT_NOISE = 1e-9


def _same(a: float, b: float) -> bool:
    """Whether two values are one up to float noise.

    >>> _same(0.1 + 0.2, 0.3), _same(1e12, 1e12 + 1), _same(2.0, 2.01)
    (True, True, False)
    """
    return abs(a - b) <= _FLOAT_NOISE * max(1.0, abs(a), abs(b))


def _tolerance(side: str) -> float:
    """Half a unit in the last decimal the side is written with (a plain number; else none)."""
    written = re.fullmatch(r"[\s$]*(?:\d+(?:,\d{3})*)?(?:\.(\d+))?[\s%]*", side)
    decimals = len(written.group(1) or "") if written else 0
    return 0.5 * 10**-decimals if decimals else 0.0


def wrong_calculations(steps: Sequence[str]) -> list[dict[str, Any]]:
    """The computations in ``steps`` whose two sides differ, as critic issues naming the step (numbered from 1)."""
    issues = []
    for number, step in enumerate(steps, start=1):
        for run in _RUN.finditer(str(step)):
            sides = run.group(0).split("=")
            for left, right in itertools.pairwise(sides):
                a, b = evaluate(left), evaluate(right)
                if a is None or b is None or not (_has_operator(left) or _has_operator(right)):
                    continue
                if not _same(a, b) and abs(a - b) > _tolerance(right):
                    shown = f"{left.strip()} = {_plain(a)}, not {right.strip()}"
                    issues.append(
                        {
                            "location": f"step {number}",
                            "issue_type": "calculation_error",
                            "description": f"the calculation {left.strip()} = {right.strip()} is wrong",
                            "evidence": shown,
                        }
                    )
    return issues


def _plain(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.4g}"


# A numeric answer as a debater writes it: "800", "-3", "$1,200", "12.5", ".5", "25%".
_ANSWER = re.compile(rf"\s*-?\$?{_DIGITS}%?\s*")


def _number(text: str) -> float:
    return float(text.strip().replace("$", "").replace(",", "").replace("%", ""))


def step_values(step: str) -> list[float]:
    """Every value a step states or computes: its written numbers and the value of each side of its arithmetic.

    >>> sorted(set(step_values("He buys 3 packs of 12, so 3 * 12 = 36 eggs, 20% of them brown")))
    [3.0, 12.0, 20.0, 36.0]
    """
    values = [_number(n) for n in re.findall(_NUMBER, step)]
    for run in _RUN.finditer(step):
        values += [v for side in run.group(0).split("=") if (v := evaluate(side)) is not None]
    return values


def unsupported_answer(answer: str, steps: Sequence[str]) -> dict[str, Any] | None:
    """An issue when ``answer`` is a number that no step of ``steps`` states or computes, else None.

    Answers that are not a plain number (a letter, a phrase, a number with units) are not judged; neither
    are proposals without steps. A value matches when equal, or equal once rounded to the decimals the
    answer is written with ("5.33" for 16 / 3).
    """
    if not _ANSWER.fullmatch(answer or "") or not steps:
        return None
    target, decimals = _number(answer), len(answer.strip().rstrip("%").partition(".")[2])
    per_step = [step_values(str(step)) for step in steps]
    if any(_same(v, target) or round(v, decimals) == target for vs in per_step for v in vs):
        return None
    last = next((values[-1] for values in reversed(per_step) if values), None)
    ends = f"; the last step ends at {_plain(last)}" if last is not None else "; no step computes a number"
    return {
        "location": "answer",
        "issue_type": "contradiction",
        "description": f"the answer {answer.strip()} is not reached by the steps",
        "evidence": f"no step states or computes {answer.strip()}{ends}",
    }


# A quantity the question gives: a number, or a fraction "1/4" (one quantity, 0.25).
_QUANTITY = re.compile(rf"{_NUMBER}(?:\s*/\s*{_DIGITS}(?![\w$]))?")


def _used(quantity: str, values: set[float]) -> bool:
    """Whether a question's quantity is among a proposal's step values: a number as written or as its
    hundredth (a percent as a fraction: "20%" or "20 percent" as 0.2), a fraction by its value or its parts
    ("1/4" as 0.25, as 1 and 4, or as "/ 4")."""
    numerator, _, denominator = quantity.partition("/")
    if denominator:
        top, bottom = _number(numerator), _number(denominator)
        candidates = {top / bottom} if bottom else set()
        if bottom in values and (top in values or top == 1):
            return True
    else:
        value = _number(quantity)
        candidates = {value, value / 100}
    return any(_same(v, c) for c in candidates for v in values)


def unused_quantities(answer: str, question: str, steps: Sequence[str]) -> dict[str, Any] | None:
    """An issue when ``answer`` is a number and some quantity ``question`` gives is in none of ``steps``, else None.

    A quantity is used when a step states it or computes with it (``step_values``), as ``_used`` reads it.
    Answers that are not a plain number and proposals without steps are not judged, as in ``unsupported_answer``.
    """
    if not _ANSWER.fullmatch(answer or "") or not steps:
        return None
    values = {v for step in steps for v in step_values(str(step))}
    unused = [q.group(0).strip() for q in _QUANTITY.finditer(question) if not _used(q.group(0), values)]
    if not unused:
        return None
    listed = ", ".join(dict.fromkeys(unused))
    return {
        "location": "answer",
        "issue_type": "missing_constraint",
        "description": f"the steps leave out {listed}, given in the question",
        "evidence": f"no step states or uses {listed}, which the question gives",
    }


def fractional_answer(answer: str) -> dict[str, Any] | None:
    """An issue when ``answer`` is a number with a fractional part ("4.5", "$0.75", "12.5%"), else None.

    Only for tasks whose answers are whole numbers (``critic.integer_check``): there such an answer cannot be
    right. "18.00" is whole; negative whole numbers are whole; answers that are not a plain number are not judged.
    """
    if not _ANSWER.fullmatch(answer or ""):
        return None
    value = _number(answer)
    if value == int(value):
        return None
    return {
        "location": "answer",
        "issue_type": "boundary_violation",
        "description": f"the answer {answer.strip()} is not a whole number",
        "evidence": f"{answer.strip()} has a fractional part; the answers are whole numbers",
    }
