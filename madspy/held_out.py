"""Held-out results recorded in a saved program's manifest, so a compiled artifact carries its own evidence.

``madspy compare --record`` writes the paired comparison of a saved program against another
(its hand-written twin, a preset) into the program's manifest, under ``held_out``. A result is
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

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from madspy.core.errors import EvalError
from madspy.evaluation import Comparison, eval_folder, eval_settings, is_program_file, program_as_recorded
from madspy.programs.artifact import amend_manifest, load_program

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
