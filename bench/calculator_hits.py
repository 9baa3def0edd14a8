"""The calculator as a critic: its hits and false alarms on role datasets' critic examples, no LM call.

Each critic example (``madspy roles --every-proposal``) holds a proposal and whether its answer is
right. The calculator (``madspy.programs.calculator``) reads the proposal's steps; a proposal is
flagged by its arithmetic check (``critic.calculator``: a wrong calculation), by its answer check
(``critic.answer_check``: a numeric answer no step states or computes), by either, by its quantity check
(``critic.quantity_check``: a numeric answer whose steps leave out a quantity the question gives), by its
integer check (``critic.integer_check``: a numeric answer with a fractional part, where answers are whole
numbers), by any of the first three or by any of the four; and by the two checks that read no step
(``programs.checks``): an answer field with no number (``critic.readable_check``, numeric tasks) and a
stated confidence below ``DOUBT_BELOW`` (``critic.doubt_below``), alone and with the four ("any of six"). A hit is a
flagged wrong proposal, a false alarm a flagged right one, as ``madspy role-eval --role critic``
counts an LM critic. With ``--role-eval FOLDER`` (a role-eval of
critics on the same role data) each of its programs is shown on the same examples, alone and joined
with the calculator's two checks (flagged by either). With ``--stops FOLDER...`` (eval folders,
transcripts unpacked) it counts the debates that stopped at round 0 and those each check would have
sent to a debate round (a proposal holding the winning answer fails it), by whether the answer was right.

Usage (from the repo root):
    python bench/calculator_hits.py ROLE_DATA [ROLE_DATA ...] [--role-eval FOLDER] [--stops EVAL_FOLDER ...]
        [--new-to ROLE_DATA ...]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from madspy.data.scoring import normalize_number
from madspy.evaluation import load_rows
from madspy.optimizers.metrics import accuracy
from madspy.optimizers.role_data import load_role_dataset
from madspy.programs.calculator import fractional_answer, unsupported_answer, unused_quantities, wrong_calculations
from madspy.programs.checks import stated_doubt, unreadable_answer
from madspy.programs.transcript import Transcript
from madspy.role_scores import example_key
from madspy.signatures import Role


def steps_of(proposal: str) -> list[str]:
    """A proposal's steps as the debate formatted it ("answer: ...\\nstep 1: ...\\nstep 2: ...")."""
    return [re.sub(r"^step \d+: ", "", s) for s in re.split(r"\n(?=step \d+: )", proposal)[1:]]


# The doubt check's threshold, set on the 295 train critic examples (2026-12-07): the highest of 0.5, 0.8, 0.9,
# 0.95 and 0.99 that flagged no right proposal there (0.99 flagged 5).
DOUBT_BELOW = 0.95

# Each check: (answer, steps, question, stated confidence or None) -> flagged.
CHECKS = {
    "arithmetic": lambda answer, steps, question, confidence: bool(wrong_calculations(steps)),
    "answer": lambda answer, steps, question, confidence: unsupported_answer(answer, steps) is not None,
    "quantities": lambda answer, steps, question, confidence: unused_quantities(answer, question, steps) is not None,
    "integer": lambda answer, steps, question, confidence: fractional_answer(answer) is not None,
    "readable": lambda answer, steps, question, confidence: unreadable_answer(answer, normalize_number) is not None,
    "doubt": lambda answer, steps, question, confidence: stated_doubt(confidence, DOUBT_BELOW) is not None,
}


def _any_of(*names: str):
    """A check that flags what any of the ``CHECKS`` named flags."""
    return lambda *proposal: any(CHECKS[name](*proposal) for name in names)


CHECKS["either"] = _any_of("arithmetic", "answer")
CHECKS["any of three"] = _any_of("arithmetic", "answer", "quantities")
CHECKS["any of four"] = _any_of("arithmetic", "answer", "quantities", "integer")
CHECKS["any of six"] = _any_of("arithmetic", "answer", "quantities", "integer", "readable", "doubt")
# joined with an LLM critic's flags
JOINED = {"either": "either check", "any of three": "any of three checks", "any of four": "any of four checks"}


def question_of(example) -> str:
    """The question a critic example's proposal answers (empty when the critic was isolated from it)."""
    return str(example.inputs.get("question") or "")


def answer_of(proposal: str) -> str:
    """A formatted proposal's answer ("answer: 7 (confidence 0.90)" -> "7")."""
    head = proposal.split("\n", 1)[0]
    return re.sub(r"^answer: | \(confidence [\d.]+\)$", "", head)


def confidence_of(proposal: str) -> float | None:
    """A formatted proposal's stated confidence ("answer: 7 (confidence 0.90)" -> 0.9), None if it states none."""
    found = re.search(r" \(confidence ([\d.]+)\)$", proposal.split("\n", 1)[0])
    return float(found.group(1)) if found else None


def flagged(proposal: str, check: str, question: str = "") -> bool:
    """Whether ``check`` (a key of ``CHECKS``) flags a formatted proposal made for ``question``."""
    return CHECKS[check](answer_of(proposal), steps_of(proposal), question, confidence_of(proposal))


def rates(flags: list[tuple[bool, bool]]) -> str:
    """``flags``: (proposal right, flagged) pairs, as a Markdown cell pair: hit rate and false alarms."""
    hits = accuracy([float(f) for right, f in flags if not right])
    alarms = accuracy([float(f) for right, f in flags if right])
    wrong, right = sum(not r for r, _ in flags), sum(r for r, _ in flags)
    return (
        f"{sum(f for r, f in flags if not r)} of {wrong}: {hits.mean:.2f} ({hits.low:.2f}-{hits.high:.2f}) | "
        f"{sum(f for r, f in flags if r)} of {right}: {alarms.mean:.2f} ({alarms.low:.2f}-{alarms.high:.2f})"
    )


def round0_stops(folder: Path) -> dict[str, Counter]:
    """Debates of ``folder`` that stopped at round 0, per check: kept or sent on by it, right or wrong."""
    counts: dict[str, Counter] = {check: Counter() for check in CHECKS}
    for row in load_rows(folder):
        if row.transcript is None or not (folder / row.transcript).is_file():
            continue
        transcript = Transcript.model_validate_json((folder / row.transcript).read_text(encoding="utf-8"))
        if len(transcript.rounds) != 1:
            continue
        proposals = [c.output for c in transcript.rounds[0].calls if c.role == "proposer" and c.output]
        top = Counter(str(p.get("answer")) for p in proposals).most_common(1)[0][0]
        holders = [
            (str(p.get("answer")), [str(s) for s in p.get("reasoning_steps") or []], p.get("confidence"))
            for p in proposals
        ]
        holders = [(answer, steps, stated) for answer, steps, stated in holders if answer == top]
        for check, found in CHECKS.items():
            refuted = any(found(answer, steps, transcript.question, stated) for answer, steps, stated in holders)
            counts[check][("sent on" if refuted else "kept", "right" if row.correct else "wrong")] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role_data", nargs="+", type=Path, help="folders written by madspy roles")
    parser.add_argument("--role-eval", type=Path, help="a madspy role-eval --role critic folder on the same role data")
    parser.add_argument("--stops", nargs="+", type=Path, default=[], help="eval folders: round-0 stops replayed")
    parser.add_argument(
        "--new-to",
        type=Path,
        action="append",
        default=[],
        help="leave out the questions this other role data folder holds (say, an earlier held-out set's)",
    )
    args = parser.parse_args()
    seen = {e.question_id for folder in args.new_to for e in load_role_dataset(folder, Role.CRITIC)}
    for folder in args.stops:
        for check, counts in round0_stops(folder).items():
            print(
                f"{folder} ({check} check): {sum(counts.values())} stopped at round 0; "
                + ", ".join(f"{a} {b}: {n}" for (a, b), n in sorted(counts.items()))
            )
    print("| check | role data | hits (95% CI) | false alarms (95% CI) |\n|:--|:--|:--|:--|")
    examples = {}
    for folder in args.role_data:
        mine = {example_key(e): e for e in load_role_dataset(folder, Role.CRITIC) if e.question_id not in seen}
        examples |= mine
        for check in CHECKS:
            flags = [
                (e.labels["proposal_correct"], flagged(e.inputs["proposal"], check, question_of(e)))
                for e in mine.values()
            ]
            print(f"| {check} | {folder} | {rates(flags)} |")
    calculated = {
        check: {k: flagged(e.inputs["proposal"], check, question_of(e)) for k, e in examples.items()}
        for check in JOINED
    }
    if len(args.role_data) > 1:
        for check in CHECKS:
            pooled = [
                (e.labels["proposal_correct"], flagged(e.inputs["proposal"], check, question_of(e)))
                for e in examples.values()
            ]
            print(f"| {check} | all | {rates(pooled)} |")
    if args.role_eval is None:
        return
    rows = [json.loads(line) for line in (args.role_eval / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    for program in dict.fromkeys(r["program"] for r in rows):
        flags = {r["example"]: bool(r["flagged"]) for r in rows if r["program"] == program and r["example"] in examples}
        right = {k: examples[k].labels["proposal_correct"] for k in flags}
        print(f"| {program} | same examples ({len(flags)}) | {rates([(right[k], f) for k, f in flags.items()])} |")
        for check, label in JOINED.items():
            joined = [(right[k], f or calculated[check][k]) for k, f in flags.items()]
            print(f"| {program} + {label} | same examples ({len(flags)}) | {rates(joined)} |")


if __name__ == "__main__":
    main()
