"""One role of several programs scored on a role dataset: the A/B test of a compiled role, one call per example.

Each example's recorded inputs go to each program's predictor of that role, called as a debate
calls it (``Debate.job``: the role's model, temperature, adapter and retries), and are scored by
the role's metric (``optimizers.role_metrics``). Rows are appended to ``<out>/rows.jsonl`` as they
finish, so a stopped run resumes where it stopped; ``<out>/settings.json`` holds each program's
fingerprint, so rows of a changed program are never mixed in and ``--record`` credits only the
version that was measured. The summary holds each program's mean score
with a 95% interval, for the critic its hit and false-alarm rates, and for every program after
the first a paired comparison with the first (McNemar on "the call was good", a bootstrap
interval of the score difference).

Example::

    summary = score_role("roles/gsm8k-test", "critic", ["debate", "compiled/gsm8k-critic.json"],
                         get_task("gsm8k"), "openai/gpt-4o-mini", out="runs/critic-ab")
    summary["programs"]["compiled/gsm8k-critic.json"]["hit_rate"]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from madspy.core.errors import EvalError
from madspy.core.progress import progress_display
from madspy.data import Task
from madspy.evaluation import ROWS_FILE, SETTINGS_FILE, build_program, program_fingerprint, read_settings
from madspy.optimizers.metrics import accuracy, critic_rates, mcnemar, paired_bootstrap
from madspy.optimizers.role_data import RoleExample, load_role_dataset
from madspy.optimizers.role_metrics import RoleMetric, flagged
from madspy.programs.calls import Job, run_jobs
from madspy.programs.debate import Debate
from madspy.rows import append_jsonl, jsonl_records
from madspy.signatures import Role

SUMMARY_FILE = "summary.json"


def example_key(e: RoleExample) -> str:
    """A stable id of one example: its question and inputs."""
    text = json.dumps([e.question_id, e.inputs], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _job(debate: Debate, role: Role, inputs: dict[str, Any]) -> Job:
    """One call of ``role`` as the debate makes it (answers: agent 0's model and temperature; the solver: its
    first, greedy program)."""
    if role == Role.SOLVER:
        return debate.solver_jobs(0, 1, **inputs)[0]
    part = debate.config.role_config(role) or debate.config.agents[0]
    return debate.job(role, None, 0, part.model, part.temperature, **inputs)


def _score_one(debate: Debate, role: Role, e: RoleExample, metric: RoleMetric) -> dict[str, Any]:
    job = _job(debate, role, e.inputs)
    outcome = run_jobs([job], 1)[0]
    call = outcome.call
    row: dict[str, Any] = {
        "question_id": e.question_id,
        "labels": e.labels,
        "output": call.output,
        "error": call.error,
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "latency_s": call.latency_s,
    }
    if outcome.prediction is None:  # a failed call scores 0, as in a debate
        return row | {"score": 0.0, "good": False, "flagged": False}
    score = metric.score(e.example(), outcome.prediction)
    good = metric.good(e.example(), outcome.prediction)
    return row | {"score": score, "good": good, "flagged": flagged(outcome.prediction)}


def _load_rows(path: Path) -> list[dict[str, Any]]:
    return [row for _, row in jsonl_records(path)] if path.is_file() else []


def score_role(
    role_data: str | Path,
    role: Role | str,
    programs: Sequence[str],
    task: Task,
    model: str,
    *,
    out: str | Path,
    limit: int | None = None,
    api_base: str | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Score ``role`` of each program (preset names or program files) on ``role_data``; rows and summary in ``out``."""
    role = Role(role)
    examples = load_role_dataset(role_data, role)[:limit]
    metric = RoleMetric(task, role)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / ROWS_FILE
    rows = _load_rows(rows_path)
    done = {(r["program"], r["example"]) for r in rows}
    debates = {p: build_program(p, task, model, api_base=api_base) for p in programs}
    _check_settings(out, {"role": str(role), "task": task.name, "model": model}, debates, {r["program"] for r in rows})
    todo = [(p, e) for e in examples for p in programs if (p, example_key(e)) not in done]
    with progress_display(progress) as (bars, say), append_jsonl(rows_path) as f:
        bar = bars.add_task(f"{role} calls", total=len(todo))
        for n, (program, e) in enumerate(todo, 1):
            row = {"program": program, "example": example_key(e)} | _score_one(debates[program], role, e, metric)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            f.flush()
            rows.append(row)
            bars.advance(bar)
            say(f"{role} {n}/{len(todo)}: {program} on {row['example']}: score {row['score']:.2f}")
    summary = summarize_role_rows(rows, role, programs, [example_key(e) for e in examples])
    summary |= {"role_data": str(role_data), "task": task.name, "model": model}
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def _check_settings(out: Path, now: dict[str, str], debates: dict[str, Debate], held: set[str]) -> None:
    """Write ``out``'s settings with each program's fingerprint, as ``madspy eval`` does for its folders.

    ``EvalError`` when ``out`` holds an A/B of another role, task or model, or rows of a program made by
    another version of it (prompts, demos or settings changed since). Rows written before role-eval
    recorded fingerprints are kept, with the fingerprint unknown (None): they cannot be recorded.
    """
    saved = read_settings(out)
    differing = sorted(k for k in now if k in saved and saved[k] != now[k])
    if differing:
        detail = ", ".join(f"{k}: {saved[k]!r} there vs {now[k]!r} now" for k in differing)
        raise EvalError(f"{out} holds a role A/B with other settings ({detail}); use another --out folder")
    known = saved.get("programs", {})
    programs = dict(known)
    for name, debate in debates.items():
        fingerprint = program_fingerprint(debate)
        if name in held and name in known and known[name] != fingerprint:
            raise EvalError(
                f"{out} holds rows of {name!r} made by a different version of it (prompts, demos or settings "
                f"changed since); use another --out folder, or delete its rows from {ROWS_FILE} to rerun them"
            )
        programs[name] = known.get(name) if name in held else fingerprint
    (out / SETTINGS_FILE).write_text(
        json.dumps(saved | now | {"programs": programs}, indent=2) + "\n", encoding="utf-8"
    )


def summarize_role_rows(
    rows: Sequence[dict[str, Any]], role: Role, programs: Sequence[str], keys: Sequence[str]
) -> dict[str, Any]:
    """Per-program scores over the examples ``keys`` every program has a row for; paired tests against the first."""
    by = {(r["program"], r["example"]): r for r in rows}
    paired = [k for k in keys if all((p, k) in by for p in programs)]
    summary: dict[str, Any] = {"role": str(role), "examples": len(paired), "programs": {}}
    for p in programs:
        mine = [by[p, k] for k in paired]
        score = accuracy([r["score"] for r in mine])
        entry: dict[str, Any] = {
            "score": score.mean,
            "score_ci": [score.low, score.high],
            "good": sum(r["good"] for r in mine),
            "failed_calls": sum(r["error"] is not None for r in mine),
            "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in mine),
            "completion_tokens": sum(r["completion_tokens"] or 0 for r in mine),
        }
        if role == Role.CRITIC:
            rates = critic_rates((r["labels"]["proposal_correct"], r["flagged"]) for r in mine)
            hits = accuracy([float(r["flagged"]) for r in mine if not r["labels"]["proposal_correct"]])
            alarms = accuracy([float(r["flagged"]) for r in mine if r["labels"]["proposal_correct"]])
            entry |= asdict(rates) | {"hit_rate_ci": [hits.low, hits.high], "false_alarm_ci": [alarms.low, alarms.high]}
        if p != programs[0] and paired:
            first = [by[programs[0], k] for k in paired]
            test = mcnemar([r["good"] for r in mine], [r["good"] for r in first])
            diff = paired_bootstrap([r["score"] for r in mine], [r["score"] for r in first])
            entry["vs_first"] = {
                "only_this_good": test.a_only,
                "only_first_good": test.b_only,
                "mcnemar_p": test.p_value,
                "score_difference": diff.mean_difference,
                "difference_ci": [diff.low, diff.high],
            }
        summary["programs"][p] = entry
    return summary
