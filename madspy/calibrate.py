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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madspy.core.errors import MadspyError
from madspy.evaluation import EvalError, eval_settings, load_rows, program_as_recorded
from madspy.optimizers.compile import calibration_quality, fit_calibrator
from madspy.optimizers.traces import ProposalTrace
from madspy.programs.artifact import save_program
from madspy.programs.calibration import Calibrator, Outcome, signals
from madspy.programs.transcript import Transcript
from madspy.rows import EvalRow


@dataclass
class CalibrationReport:
    """A calibrator fitted on ``program``'s debates in some folders, its in-sample fit and its held-out check."""

    program: str
    calibrator: Calibrator
    fit: dict[str, Any]  # n, ECE (10 and 5 bins) and Brier before and after, on the debates it was fitted on
    fitted_on: list[str]  # those debates' folders
    check: dict[str, Any] | None = None  # the same on other folders' debates of the same program, pooled
    checked_on: list[str] | None = None  # those folders
    out: Path | None = None


def _settings(folder: Path, program: str) -> dict[str, Any]:
    settings = eval_settings(folder)
    if program not in settings.get("programs", {}):
        known = ", ".join(settings.get("programs", {})) or "none"
        raise EvalError(f"{folder} holds no debates of {program!r}; programs there: {known}")
    return settings


def row_outcome(row: EvalRow) -> Outcome | None:
    """A debate's signals (``calibration.signals``) read off its eval row alone, as the debate computed them: the
    row's confidence, the share of the last answered round's votes held by the answer chosen (proposals without a
    vote key never voted), the share of round 0's answers that were it, and whether the critic flagged a proposal
    holding it. Exact for a program without a calibrator (its row holds the raw confidence); None when unanswered.

    >>> from madspy.optimizers.traces import ProposalTrace as P
    >>> row = EvalRow(program="debate", id="q1", gold="4", answer="4", correct=True, confidence=0.8,
    ...     status="converged", proposals=[P(round=0, agent=0, answer="4", correct=True, key="4"),
    ...     P(round=1, agent=0, answer="4", correct=True, key="4"), P(round=1, agent=1, answer="5", correct=False,
    ...     key="5"), P(round=1, agent=2, answer="?", correct=False, key=None)])
    >>> row_outcome(row)
    ({'confidence': 0.8, 'vote_share': 0.5, 'first_agreement': 1.0, 'flagged': 0.0}, True)
    """
    if row.answer is None:
        return None
    votes: list[ProposalTrace] = []
    for index in sorted({p.round for p in row.proposals}, reverse=True):
        votes = [p for p in row.proposals if p.round == index and p.key is not None]
        if votes:
            break
    # the answer chosen as any round's proposal wrote it (a vote anchored by evidence-only flips may be older)
    key = next((p.key for p in row.proposals if p.answer == row.answer and p.key is not None), None)
    first = [p.key for p in row.proposals if p.round == 0]
    holders = {(p.round, p.agent) for p in row.proposals if p.key == key and key is not None}
    flagged = any(c.flagged and (c.round, c.agent) in holders for c in row.critic)
    return signals(row.confidence, key, first, [v.key for v in votes], flagged), row.correct


def _rows_are_raw(folder: Path, settings: dict[str, Any], program: str) -> bool:
    """Whether ``program`` as it is now is the version ``folder`` recorded and has no calibrator, so that its
    rows hold the raw confidence a calibrator is fitted on."""
    try:
        debate = program_as_recorded(folder, settings, program)
    except MadspyError:  # changed, or a program file gone or unreadable: its rows cannot be vouched for
        return False
    return debate.config.calibrator is None


def outcomes(folder: str | Path, program: str, *, skip_missing: bool = False) -> dict[str, Outcome]:
    """Each answered debate of ``program`` in an eval ``folder``, by question id: its signals and whether it was right.

    A row whose transcript is missing gives its outcome from the row itself (``row_outcome``) when that is
    exact: the program is unchanged since the folder recorded it and has no calibrator. Otherwise it is an
    error, or left out with ``skip_missing``.
    """
    folder = Path(folder)
    settings = _settings(folder, program)
    found: dict[str, Outcome] = {}
    raw_rows: bool | None = None  # checked once, at the first missing transcript
    for row in load_rows(folder):
        if row.program != program or row.answer is None:
            continue
        path = folder / row.transcript
        if not path.is_file():
            raw_rows = _rows_are_raw(folder, settings, program) if raw_rows is None else raw_rows
            if raw_rows:
                found[row.id] = row_outcome(row)
                continue
            if skip_missing:
                continue
            raise EvalError(
                f"{path} is missing and {program!r} has a calibrator or has changed since, so its row does not "
                "hold the raw confidence (--skip-missing leaves such rows out)"
            )
        decision = Transcript.load(path).decision
        if decision is not None and decision.answer is not None:
            # the raw confidence from the transcript; the other signals from it too, or from the row when older
            seen = decision.signals or {**row_outcome(row)[0], "confidence": decision.confidence}
            found[row.id] = (seen, row.correct)
    return found


def _folders(given: str | Path | Sequence[str | Path]) -> list[Path]:
    return [Path(given)] if isinstance(given, (str, Path)) else [Path(f) for f in given]


def _pooled(folders: list[Path], program: str, fingerprint: Any, skip_missing: bool) -> dict[str, Outcome]:
    """The outcomes of ``program`` in several folders of the same version, a question counted once (its first
    folder's debate)."""
    pooled: dict[str, Outcome] = {}
    for folder in folders:
        if _settings(folder, program)["programs"][program] != fingerprint:
            raise EvalError(f"{folder} ran another version of {program!r} than {folders[0]} (fingerprints differ)")
        pooled = outcomes(folder, program, skip_missing=skip_missing) | pooled
    return pooled


def calibrate(
    folder: str | Path | Sequence[str | Path],
    program: str,
    *,
    out: str | Path | None = None,
    check: str | Path | Sequence[str | Path] | None = None,
    skip_missing: bool = False,
) -> CalibrationReport:
    """Fit a calibrator on ``program``'s debates in ``folder``; check it on ``check``'s; save the program to ``out``.

    ``folder`` and ``check`` are each one folder or several, pooled (a question in several counts once: its
    first folder's debate); all must hold debates of the same program (same fingerprint). A question fitted
    on is never counted as held out (``check["fitted_left_out"]`` says how many were left out).
    ``skip_missing`` leaves out the rows whose transcripts are missing and cannot be read off their rows (the
    reports' ``n`` count what was used). Raises ``EvalError`` with one line when a folder is not an eval
    folder, lacks the program or holds too few outcomes to fit.
    """
    fitted_on = _folders(folder)
    settings = _settings(fitted_on[0], program)
    fingerprint = settings["programs"][program]
    fitted = _pooled(fitted_on, program, fingerprint, skip_missing)
    calibrator, fit = fit_calibrator(list(fitted.values()))
    if calibrator is None:
        where = ", ".join(map(str, fitted_on))
        raise EvalError(f"cannot calibrate {program!r} on {where}: {fit['reason']} (found {fit['n']})")
    report = CalibrationReport(program=program, calibrator=calibrator, fit=fit, fitted_on=[str(f) for f in fitted_on])
    if check is not None:
        report.checked_on = [str(c) for c in _folders(check)]
        pooled = _pooled(_folders(check), program, fingerprint, skip_missing)
        held = {id_: outcome for id_, outcome in pooled.items() if id_ not in fitted}
        if not held:
            raise EvalError(f"{check} holds no answered debate of {program!r} to check the calibrator on")
        report.check = calibration_quality(calibrator, list(held.values())) | {
            "fitted_left_out": len(pooled) - len(held)
        }
    if out is not None:
        report.out = _save(fitted_on[0], settings, program, report, Path(out))
    return report


def _save(folder: Path, settings: dict[str, Any], program: str, report: CalibrationReport, out: Path) -> Path:
    """The program ``folder`` ran, rebuilt as eval built it, with the report's calibrator; refused if it has
    changed since. Its manifest is kept (a compiled program keeps its compile record) and says where the
    calibrator was fitted and checked."""
    if settings.get("adversary") or settings.get("defenses"):
        raise EvalError(f"{folder} ran with an adversary or replaced defenses: calibrate on a plain eval")
    debate = program_as_recorded(folder, settings, program)
    debate.config = debate.config.updated(calibrator=report.calibrator)
    kept = {k: v for k, v in getattr(debate, "manifest", {}).items() if k not in ("created", "versions")}
    held_out = report.check and {**report.check, "folders": report.checked_on}
    record = {**report.fit, "fitted_on": report.fitted_on, "held_out": held_out}  # compile's record, and where
    save_program(debate, out, manifest={**kept, "calibrated_from": program, "calibration": record})
    return out
