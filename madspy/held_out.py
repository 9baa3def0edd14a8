"""Held-out results recorded in a saved program's manifest, so a compiled artifact carries its own evidence.

``madspy compare --record`` writes the paired comparison of a saved program against another
(its hand-written twin, a preset) into the program's manifest, under ``held_out``; ``madspy
role-eval --record`` writes a role A/B (one role's calls on held-out role data) under ``held_out_roles``. A result is
recorded only when every eval folder that ran the program ran this version of it (the
fingerprint the folder recorded), so a manifest never credits a program with the numbers of
another version; config and roles are left as they are (``amend_manifest``), so the program
still answers and fingerprints as before.

Example::

    rows = load_rows("runs/gsm8k-seed0")
    comparison = compare(rows, "compiled/mine.json", "debate")
    record_comparison("compiled/mine.json", comparison, program_folders=["runs/gsm8k-seed0"])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from madspy.comparison import Comparison
from madspy.core.errors import EvalError
from madspy.data import recorded_task
from madspy.evaluation import (
    build_program,
    eval_folder,
    eval_settings,
    is_program_file,
    program_as_recorded,
    program_fingerprint,
    read_settings,
)
from madspy.programs.artifact import amend_manifest, load_program
from madspy.role_datasets import role_data_source
from madspy.role_scores import SUMMARY_FILE

# What makes two eval folders samples of one measurement; a planted instruction or an adversary makes another.
_SAMPLE_KEYS = ("task", "split", "model", "max_tokens", "adversary", "defenses", "inject")


def _sample(settings: dict[str, Any]) -> dict[str, Any]:
    return {key: settings.get(key) for key in _SAMPLE_KEYS}


def check_same_version(program: str, folders: Sequence[str | Path]) -> dict[str, Any]:
    """The settings (task, split, model, ...) of eval ``folders`` that all ran ``program`` as it is now.

    ``EvalError`` (one line) when ``program`` is not a program file, when a folder did not run it or ran
    another version of it (its prompts, demos or settings changed since), or when the folders differ in
    task, split, model or another eval setting (their rows are not one measurement).
    """
    if not is_program_file(program):
        raise EvalError(f"{program!r} is not a saved program: only a program file has a manifest to record in")
    shared: dict[str, Any] | None = None
    for folder in map(eval_folder, folders):
        settings = eval_settings(folder)
        program_as_recorded(folder, settings, program)
        sample = _sample(settings)
        if shared is not None and sample != shared:
            raise EvalError(f"{folder} ran {sample}, another sample than {shared}: record one measurement at a time")
        shared = sample
    if shared is None:
        raise EvalError("no eval folder given to record from")
    return shared


def record_comparison(
    program: str,
    comparison: Comparison,
    program_folders: Sequence[str | Path],
    other_folders: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """Record ``comparison`` (``program`` as side A) in ``program``'s manifest; returns the entry.

    ``program_folders`` are the eval folders ``program``'s rows came from, ``other_folders`` those of
    side B when they are others (they must hold the same task and split). An entry against the same
    program on the same samples replaces the earlier one, so recording again after a resumed eval
    updates the numbers.
    """
    sample = check_same_version(program, program_folders)
    for folder in map(eval_folder, other_folders):
        other = _sample(eval_settings(folder))
        if (other["task"], other["split"]) != (sample["task"], sample["split"]):
            raise EvalError(f"{folder} ran {other['task']}/{other['split']}, not {sample['task']}/{sample['split']}")
    d, test = comparison.difference, comparison.mcnemar
    entry = {
        "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **sample,
        "against": comparison.b,
        "samples": sorted({str(f) for f in [*program_folders, *other_folders]}),
        "n": comparison.n,
        "accuracy": round(comparison.accuracy_a, 4),
        "accuracy_against": round(comparison.accuracy_b, 4),
        "difference": round(d.mean_difference, 4),
        "difference_ci95": [round(d.low, 4), round(d.high, 4)],
        "only_this_right": test.a_only,
        "only_against_right": test.b_only,
        "mcnemar_p": round(test.p_value, 6),
        "tokens_per_question": round(comparison.tokens_a, 1),
        "tokens_per_question_against": round(comparison.tokens_b, 1),
    }
    kept = [
        e
        for e in load_program(program).manifest.get("held_out", [])
        if (e.get("against"), e.get("samples")) != (entry["against"], entry["samples"])
    ]
    amend_manifest(program, {"held_out": [*kept, entry]})
    return entry


def role_data_split(role_data: str | Path) -> str:
    """The one split a role-data folder's examples come from; ``EvalError`` when it does not say (or holds several)."""
    splits = role_data_source(role_data).get("splits", [])
    if len(splits) != 1:
        raise EvalError(
            f"{role_data} does not say which one split its examples come from: rebuild it with madspy roles"
        )
    return splits[0]


def record_role_comparison(folder: str | Path, program: str) -> dict[str, Any]:
    """Record the role A/B in ``madspy role-eval`` folder ``folder`` (``program`` against the folder's first
    program) in ``program``'s manifest, under ``held_out_roles``; returns the entry.

    ``EvalError`` (one line) unless ``program`` is a program file scored there in its present version (the
    fingerprint role-eval recorded) and the role data say which split they come from (``madspy roles``
    writes that). An entry of the same role against the same program from the same folder is replaced.

    Example::

        record_role_comparison("runs/critic-ab", "compiled/gsm8k-critic.json")
    """
    folder = Path(folder)
    settings = read_settings(folder)
    if not (folder / SUMMARY_FILE).is_file() or "programs" not in settings:
        raise EvalError(f"{folder} is not a role-eval folder with settings (run madspy role-eval --out {folder})")
    summary = json.loads((folder / SUMMARY_FILE).read_text(encoding="utf-8"))
    if not is_program_file(program):
        raise EvalError(f"{program!r} is not a saved program: only a program file has a manifest to record in")
    first, *others = summary["programs"]
    if program not in others:
        raise EvalError(f"{folder} holds no A/B of {program!r} against another program (its first is {first!r})")
    recorded = settings["programs"].get(program)
    now = program_fingerprint(build_program(program, recorded_task(settings), settings["model"]))
    if recorded != now:
        why = "its rows predate role-eval's fingerprints" if recorded is None else "it has changed since"
        raise EvalError(f"cannot record {folder} in {program}: {why}; run the role A/B again into a new folder")
    mine, theirs = summary["programs"][program], summary["programs"][first]
    versus = mine["vs_first"]
    entry = {
        "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "role": summary["role"],
        "task": settings["task"],
        "split": role_data_split(summary["role_data"]),
        "model": settings["model"],
        "folder": str(folder),
        "role_data": summary["role_data"],
        "examples": summary["examples"],
        "against": first,
        "good": mine["good"],
        "good_against": theirs["good"],
        "score": round(mine["score"], 4),
        "score_against": round(theirs["score"], 4),
        "only_this_good": versus["only_this_good"],
        "only_against_good": versus["only_first_good"],
        "mcnemar_p": round(versus["mcnemar_p"], 6),
        "difference": round(versus["score_difference"], 4),
        "difference_ci": [round(x, 4) for x in versus["difference_ci"]],
        "prompt_tokens": mine["prompt_tokens"],
        "prompt_tokens_against": theirs["prompt_tokens"],
    }
    for key in ("hit_rate", "false_alarm_rate"):
        if key in mine:
            entry[key], entry[f"{key}_against"] = mine[key], theirs[key]
    kept = [
        e
        for e in load_program(program).manifest.get("held_out_roles", [])
        if (e.get("role"), e.get("against"), e.get("folder")) != (entry["role"], first, entry["folder"])
    ]
    amend_manifest(program, {"held_out_roles": [*kept, entry]})
    return entry
