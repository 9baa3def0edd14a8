"""The program check as a critic: its hits and false alarms on role datasets' critic examples, alone and
joined with the calculator's four checks.

Each question of the critic examples (``madspy roles --every-proposal``) is solved ``--samples`` times as a
Python program (``madspy.programs.program_check``: the first greedy, the rest at temperature 0.7), each run
in the sandbox; a proposal is flagged when its answer differs from the value at least ``m`` of the first
``k`` programs agree on, for every (k, m) of ``RULES``. The programs and their values are written to
``--solutions`` (JSON lines, one per question) and read back on a later run, so a rule is re-scored with
no LM call and the model's programs can be read.

Usage (from the repo root):
    python bench/program_check_hits.py ROLE_DATA [ROLE_DATA ...] --solutions FILE [--model MODEL --samples 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import dspy
from calculator_hits import answer_of, flagged, rates

from madspy.core.models import make_lm
from madspy.optimizers.role_data import load_role_dataset
from madspy.programs.formats import adapter_for
from madspy.programs.program_check import program_disagreement, run_program, solve_in_code
from madspy.role_scores import example_key
from madspy.signatures import Role

RULES = [(1, 1), (3, 2), (3, 3), (5, 2), (5, 3), (5, 4)]  # (programs read, programs that must agree)


def solve_missing(questions: dict[str, str], path: Path, model: str, samples: int) -> dict[str, dict]:
    """The solutions in ``path``, with every question not in it solved now and appended."""
    known = {}
    if path.is_file():
        known = {s["question_id"]: s for s in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    missing = [q for q in questions if q not in known]
    if missing:
        lm = make_lm(model, max_tokens=512)
        dspy.configure(lm=lm, adapter=adapter_for(model))
    with path.open("a", encoding="utf-8") as out:
        for n, qid in enumerate(missing, 1):
            start, calls = time.monotonic(), len(lm.history)
            programs = solve_in_code(questions[qid], samples)
            usage = [h.get("usage") or {} for h in lm.history[calls:]]
            solution = {
                "question_id": qid,
                "programs": programs,
                "values": [run_program(p) for p in programs],
                "prompt_tokens": sum(u.get("prompt_tokens", 0) for u in usage),
                "completion_tokens": sum(u.get("completion_tokens", 0) for u in usage),
                "wall_s": round(time.monotonic() - start, 2),
            }
            known[qid] = solution
            out.write(json.dumps(solution) + "\n")
            out.flush()
            print(f"{n}/{len(missing)} {qid}: {solution['values']} ({solution['wall_s']} s)", file=sys.stderr)
    return known


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role_data", nargs="+", type=Path, help="folders written by madspy roles")
    parser.add_argument("--solutions", type=Path, required=True, help="JSON lines of programs per question")
    parser.add_argument("--model", help="solve the questions not in --solutions with this model")
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    examples = {}
    for folder in args.role_data:
        examples |= {example_key(e): e for e in load_role_dataset(folder, Role.CRITIC)}
    questions = {e.question_id: str(e.inputs.get("question") or "") for e in examples.values()}
    if args.model:
        solutions = solve_missing(questions, args.solutions, args.model, args.samples)
    else:
        solutions = {s["question_id"]: s for s in map(json.loads, args.solutions.read_text().splitlines())}
    kept = [e for e in examples.values() if e.question_id in solutions]
    solved = [solutions[q] for q in dict.fromkeys(e.question_id for e in kept)]
    print(
        f"{len(kept)} critic examples on {len(solved)} questions; programs giving a number: "
        f"{sum(v is not None for s in solved for v in s['values'])} of {sum(len(s['values']) for s in solved)}; "
        f"per question {sum(s['prompt_tokens'] for s in solved) / len(solved):.0f} prompt + "
        f"{sum(s['completion_tokens'] for s in solved) / len(solved):.0f} completion tokens, "
        f"{sum(s['wall_s'] for s in solved) / len(solved):.1f} s\n"
    )
    print("| check | hits (95% CI) | false alarms (95% CI) |\n|:--|:--|:--|")
    four = {
        example_key(e): flagged(e.inputs["proposal"], "any of four", str(e.inputs.get("question") or "")) for e in kept
    }
    print(f"| any of four | {rates([(e.labels['proposal_correct'], four[example_key(e)]) for e in kept])} |")
    for k, m in RULES:
        program = {
            example_key(e): program_disagreement(
                answer_of(e.inputs["proposal"]), solutions[e.question_id]["values"][:k], agreement=m
            )
            is not None
            for e in kept
        }
        alone = [(e.labels["proposal_correct"], program[example_key(e)]) for e in kept]
        joined = [(e.labels["proposal_correct"], program[example_key(e)] or four[example_key(e)]) for e in kept]
        print(f"| program, {m} of {k} agree | {rates(alone)} |")
        print(f"| program ({m} of {k}) or any of four | {rates(joined)} |")


if __name__ == "__main__":
    main()
