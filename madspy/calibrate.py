"""Fit a program's confidence calibrator on an eval's recorded debates, with no LM call.

``compile`` fits a calibrator on dev debates it runs itself. An eval folder already holds
debates with known outcomes, and a calibrator only maps the debate's final confidence (it
changes nothing the debate does), so it can be fitted on one eval's rows (say, the train
split) and checked on another's (the test split) exactly: the calibrated program would
have run the same debates and reported the calibrated confidence. The saved program is
the one the folder ran (its fingerprint is checked) with the calibrator in its config.

Example::

    report = calibrate("runs/gsm8k-train", "debate", out="compiled/debate-calibrated.json",
                       check="runs/gsm8k-test")
    report.fit["ece_10_after"], report.check["ece_10_after"]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madspy.data import get_task
from madspy.evaluation import EvalError, build_program, eval_settings, load_rows, program_fingerprint
from madspy.optimizers.compile import calibration_quality, fit_calibrator
from madspy.programs.artifact import save_program
from madspy.programs.calibration import Calibrator
from madspy.programs.transcript import Transcript

Outcome = tuple[float, float, bool]  # (raw confidence, winning answer's vote share, right)


@dataclass
class CalibrationReport:
    """A calibrator fitted on one folder's debates of ``program``, its in-sample fit and its held-out check."""

    program: str
    calibrator: Calibrator
    fit: dict[str, Any]  # n, ECE (10 and 5 bins) and Brier before and after, on the debates it was fitted on
    check: dict[str, Any] | None = None  # the same on another folder's debates of the same program
    out: Path | None = None


def _settings(folder: Path, program: str) -> dict[str, Any]:
    settings = eval_settings(folder)
    if program not in settings.get("programs", {}):
        known = ", ".join(settings.get("programs", {})) or "none"
        raise EvalError(f"{folder} holds no debates of {program!r}; programs there: {known}")
    return settings


def outcomes(folder: str | Path, program: str, *, skip_missing: bool = False) -> list[Outcome]:
    """Each answered debate of ``program`` in an eval ``folder``: raw confidence, vote share, right or not.

    A row whose transcript is missing is an error, or left out with ``skip_missing``.
    """
    folder = Path(folder)
    _settings(folder, program)
    found = []
    for row in load_rows(folder):
        if row.program != program or row.answer is None:
            continue
        path = folder / row.transcript
        if not path.is_file():
            if skip_missing:
                continue
            raise EvalError(
                f"{path} is missing: its debate's confidence and vote share are unknown "
                "(--skip-missing leaves such rows out)"
            )
        decision = Transcript.load(path).decision
        if decision is not None and decision.answer is not None:
            found.append((decision.confidence, decision.vote_share or 0.0, row.correct))
    return found


def calibrate(
    folder: str | Path,
    program: str,
    *,
    out: str | Path | None = None,
    check: str | Path | None = None,
    skip_missing: bool = False,
) -> CalibrationReport:
    """Fit a calibrator on ``program``'s debates in ``folder``; check it on ``check``'s; save the program to ``out``.

    ``check`` must hold debates of the same program (same fingerprint). ``skip_missing`` leaves out the rows
    of either folder whose transcripts are missing (the reports' ``n`` count what was used). Raises
    ``EvalError`` with one line when a folder is not an eval folder, lacks the program or holds too few
    outcomes to fit.
    """
    folder = Path(folder)
    settings = _settings(folder, program)
    calibrator, fit = fit_calibrator(outcomes(folder, program, skip_missing=skip_missing))
    if calibrator is None:
        raise EvalError(f"cannot calibrate {program!r} on {folder}: {fit['reason']} (found {fit['n']})")
    report = CalibrationReport(program=program, calibrator=calibrator, fit=fit)
    if check is not None:
        check = Path(check)
        fingerprint = _settings(check, program)["programs"][program]
        if fingerprint != settings["programs"][program]:
            raise EvalError(f"{check} ran another version of {program!r} than {folder} (fingerprints differ)")
        held = outcomes(check, program, skip_missing=skip_missing)
        if not held:
            raise EvalError(f"{check} holds no answered debate of {program!r} to check the calibrator on")
        report.check = calibration_quality(calibrator, held)
    if out is not None:
        report.out = _save(folder, settings, program, calibrator, Path(out))
    return report


def _save(folder: Path, settings: dict[str, Any], program: str, calibrator: Calibrator, out: Path) -> Path:
    """The program ``folder`` ran, rebuilt as eval built it, with ``calibrator``; refused if it has changed since."""
    if settings.get("adversary") or settings.get("defenses"):
        raise EvalError(f"{folder} ran with an adversary or replaced defenses: calibrate on a plain eval")
    task = get_task(settings["task"])
    debate = build_program(program, task, settings["model"], max_tokens=settings.get("max_tokens"))
    if program_fingerprint(debate) != settings["programs"][program]:
        raise EvalError(
            f"{program!r} has changed since {folder} was recorded (prompts, demos or settings): "
            "its debates no longer describe it; run the eval again"
        )
    debate.config = debate.config.updated(calibrator=calibrator)
    save_program(debate, out)
    return out
