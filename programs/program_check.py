"""A program check: the question solved again as a short Python program, run in a sandbox, against each answer.

The calculator's checks read what a proposal wrote; none of them sees a wrong reading of the question
computed correctly ("half of the rest" taken as half of the total). A second solution in another form
can: a model writes the question as a program, its arithmetic is done by Python, not by the model
(Program of Thoughts, Chen et al. 2022; PAL, Gao et al. 2023), and it fails in other places than prose
reasoning does. ``program_disagreement`` flags a numeric answer that differs from the value the programs
agree on (``agreement`` of them, so one program's slip is not a finding). It is an issue of type
``contradiction`` located at the answer, like the answer check.

The model's code is untrusted. ``run_program`` does not ``exec`` it: a separate Python process (``-I``:
no site, no environment) with a CPU-time and memory limit interprets it with asteval, a maintained
interpreter of a Python subset (assignments, arithmetic, loops, conditions, functions) without imports,
dunder attributes or files, given only arithmetic names (``open`` removed, ``print`` only noted: without
an ``answer`` variable, the last value printed is the answer; ``math.x`` and ``from math import x`` work).
A program that runs over its limits, raises, or computes no number gives None and flags nothing.

Example:
    >>> run_program("apples = 5\\neaten = 2\\nanswer = apples - eaten")
    3.0
    >>> run_program("import os\\nanswer = os.getcwd()") is None
    True
    >>> run_program("total = 4 * 3\\nprint(f'{total}')")  # the printed value, as a program of thought ends
    12.0
    >>> program_disagreement("4", [3.0, 3.0, 7.0], agreement=2)["evidence"]
    'a program solving the question computes 3, not 4 (2 of 3 programs agree)'
    >>> program_disagreement("3", [3.0, 3.0], agreement=2), program_disagreement("4", [3.0, 7.0], agreement=2)
    (None, None)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import dspy

from madspy.signatures import SolveInCode

CPU_SECONDS = 2
MEMORY_BYTES = 512 * 1024 * 1024
SAMPLE_TEMPERATURE = 0.7
MAX_PROGRAM = 4000  # characters: longer is not a word problem's program, and is not run
_FENCE = re.compile(r"^\s*```(?:python|py)?\s*\n?|\n?\s*```\s*$")
_MATH_IMPORT = re.compile(r"^\s*(?:import math|from math import [\w, ]+)\s*$", re.MULTILINE)
_NUMERIC = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")

# The child's whole environment: one BLAS thread, so a library imported with asteval reserves little memory.
_CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# Runs in the child process (POSIX: its limits use ``resource``): limits first, then asteval on the code read
# from stdin; one JSON line out.
_CHILD = f"""
import json, math, re, resource, sys, types
resource.setrlimit(resource.RLIMIT_CPU, ({CPU_SECONDS}, {CPU_SECONDS}))
resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_BYTES}, {MEMORY_BYTES}))
from asteval import Interpreter
allowed = ("assert", "augassign", "delete", "if", "ifexp", "for", "formattedvalue", "functiondef", "lambda",
           "listcomp", "dictcomp", "setcomp", "while")
interp = Interpreter(minimal=True, use_numpy=False, config={{name: True for name in allowed}})
for name in ("open", "print", "dir", "id", "type"):
    interp.symtable.pop(name, None)
interp.symtable["math"] = types.SimpleNamespace(**{{k: v for k, v in vars(math).items() if not k.startswith("_")}})
printed = []
interp.symtable["print"] = lambda *values, **_: printed.append(values[-1] if values else None)
interp(sys.stdin.read(), show_errors=False, raise_errors=False)
value = interp.symtable.get("answer")
if not isinstance(value, (int, float)) and printed:  # no answer variable: the last value printed is the answer
    value = printed[-1]
    if isinstance(value, str):  # "She keeps 7": the one number it holds, else none
        numbers = re.findall(r"-?\\d[\\d,]*(?:\\.\\d+)?", value)
        value = float(numbers[0].replace(",", "")) if len(numbers) == 1 else value
ok = not interp.error and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
why = None
if interp.error:
    kind, message = interp.error[0].get_error()
    lines = str(message).strip().splitlines()
    why = (lines[-1].strip() if lines else kind)[:200]
elif not ok:
    why = "it leaves no number in answer (" + type(value).__name__ + ")"
print(json.dumps({{"answer": float(value) if ok else None, "error": why}}))
"""


def clean_program(code: str) -> str:
    """The code without markdown fences and ``math`` imports (the sandbox provides ``math``).

    >>> clean_program("```python\\nimport math\\nanswer = math.ceil(2.5)\\n```")
    'answer = math.ceil(2.5)'
    """
    return _MATH_IMPORT.sub("", _FENCE.sub("", code.strip())).strip()


def run_program(code: str, timeout_s: float = 5.0) -> float | None:
    """The number a program leaves in ``answer``, run in a sandboxed child process; None if it has none.

    None too when the code is empty or longer than ``MAX_PROGRAM``, raises, imports anything but
    ``math``, or runs over ``CPU_SECONDS`` of CPU, ``MEMORY_BYTES`` of memory or ``timeout_s`` (``execute``
    says which).
    """
    return execute(code, timeout_s)[0]


def execute(code: str, timeout_s: float = 5.0) -> tuple[float | None, str | None]:
    """``run_program``'s value and, when there is none, why (one line).

    >>> execute("while True:\\n    pass")[1]
    'it ran over its limit of 2 s of CPU'
    >>> execute("answer = undefined_name + 1")[1]
    "NameError: name 'undefined_name' is not defined"
    """
    code = clean_program(code)
    if not code or len(code) > MAX_PROGRAM:
        return None, "no program" if not code else f"the program is over {MAX_PROGRAM} characters"
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD],
            input=code,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=_CHILD_ENV,
        )
    except subprocess.TimeoutExpired:
        return None, f"it ran over its time limit of {timeout_s:g} s"
    except OSError as e:
        return None, f"the sandbox did not start ({e})"
    if done.returncode != 0:
        return None, f"it ran over its limit of {CPU_SECONDS} s of CPU" if done.returncode in (-9, -24, 152) else (
            f"it ran over its limit of {MEMORY_BYTES // 2**20} MB, or crashed (exit {done.returncode})"
        )
    try:
        reply = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, "the sandbox gave no result"
    return reply["answer"], reply["error"]


def program_answer(output: Mapping[str, Any]) -> str:
    """What the solver's ``program`` output computes, written as an answer ("" when it computes nothing): how
    role datasets label a solver call and role metrics score one.

    >>> program_answer({"program": "answer = 12 / 4"}), program_answer({"program": "answer = 'x'"})
    ('3', '')
    """
    value = run_program(str(output.get("program") or ""))
    return "" if value is None else f"{value:g}"


def agreed_value(values: Sequence[float | None], agreement: int) -> tuple[float, int] | None:
    """The value at least ``agreement`` of the programs computed (the most common), with its count.

    >>> agreed_value([3.0, None, 3.0000001, 7.0], agreement=2), agreed_value([3.0, 7.0], agreement=2)
    ((3.0, 2), None)
    """
    counts = Counter(round(v, 6) for v in values if v is not None)
    if not counts:
        return None
    value, count = counts.most_common(1)[0]
    return (value, count) if count >= agreement else None


def program_disagreement(answer: str, values: Sequence[float | None], agreement: int) -> dict[str, Any] | None:
    """A critic issue when a numeric ``answer`` differs from the value ``agreement`` of the programs
    computed (``values``, None for a program that gave none); None when it agrees, when the programs do
    not agree, or when the answer holds no number."""
    agreed = agreed_value(values, agreement)
    numbers = _NUMERIC.findall(answer.replace("$", ""))
    if agreed is None or len(numbers) != 1:
        return None
    value, count = agreed
    if abs(float(numbers[0].replace(",", "")) - value) <= 1e-6 * max(1.0, abs(value)):
        return None
    return {
        "location": "answer",
        "issue_type": "contradiction",
        "description": "the answer differs from what a program solving the question computes",
        "evidence": f"a program solving the question computes {value:g}, not {answer.strip()} "
        f"({count} of {len(values)} programs agree)",
    }


def sampling(samples: int) -> list[tuple[float, dict[str, Any]]]:
    """The temperature and per-call LM settings of each of ``samples`` programs: the first greedy, the rest
    sampled at ``SAMPLE_TEMPERATURE``, each its own rollout (so a cached reply is not reused for another).

    >>> sampling(3)
    [(0.0, {}), (0.7, {'rollout_id': 1}), (0.7, {'rollout_id': 2})]
    """
    return [(0.0, {})] + [(SAMPLE_TEMPERATURE, {"rollout_id": i}) for i in range(1, samples)]


def solve_in_code(question: str, samples: int) -> list[str]:
    """``samples`` programs for ``question`` from the configured LM (``sampling``), outside a debate."""
    solve = dspy.Predict(SolveInCode)
    return [
        str(solve(question=question, config={"temperature": temperature, **config}).program)
        for temperature, config in sampling(samples)
    ]
