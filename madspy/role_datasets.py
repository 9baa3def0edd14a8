"""Role datasets from eval folders: every recorded call of every debate, labelled by the question's gold answer.

``madspy eval --split train`` (or any eval folder whose questions are not held out) records
each debate's transcript; this reads them and writes one JSONL file per role
(``optimizers.role_data``), what ``madspy compile --roles`` compiles a role on.

Example::

    counts = export_role_datasets(["runs/gsm8k-train"], "roles/gsm8k")   # {Role.PROPOSER: 120, ...}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from madspy.core.errors import MadspyError
from madspy.data import Task
from madspy.evaluation import SETTINGS_FILE, EvalError, eval_settings, load_rows
from madspy.optimizers.role_data import RoleExample, proposal_reviews, role_examples, save_role_datasets
from madspy.pairs import eval_folder_task
from madspy.programs.transcript import Transcript
from madspy.signatures import Role

SOURCE_FILE = "source.json"


def eval_role_examples(
    eval_dir: str | Path,
    every_proposal: bool = False,
    data_dir: str | Path | None = None,
    program: str | None = None,
) -> list[RoleExample]:
    """The labelled role calls of every transcript in one eval folder (of ``program``'s debates only, if given).

    With ``every_proposal``, every answer of every debate is a critic example too (``proposal_reviews``),
    except those a recorded critic call already reviewed with the same inputs.
    """
    eval_dir = Path(eval_dir)
    task = eval_folder_task(eval_dir)
    rows = load_rows(eval_dir)
    if program is not None and program not in {r.program for r in rows}:
        known = ", ".join(sorted({r.program for r in rows})) or "none"
        raise EvalError(f"{eval_dir} holds no debates of {program!r}; programs there: {known}")
    rationales = _rationales(task, eval_dir, data_dir)
    found = []
    rows = [r for r in rows if program is None or r.program == program]
    for row in sorted(rows, key=lambda r: (r.program, r.id)):  # the same file on every run
        if not row.transcript or not (eval_dir / row.transcript).is_file():
            continue
        transcript = Transcript.load(eval_dir / row.transcript)
        right = partial(task.right, gold=row.gold, question=transcript.question)  # as the debate counted it
        recorded = role_examples(transcript, row.id, row.gold, right)
        if every_proposal:  # each proposal text once per question; a recorded critique of it wins
            reviewed = {_key(e.inputs) for e in recorded if e.role == Role.CRITIC}
            for review in proposal_reviews(transcript, row.id, row.gold, right):
                if _key(review.inputs) not in reviewed:
                    reviewed.add(_key(review.inputs))
                    recorded.append(review)
        found += [e.model_copy(update={"rationale": rationales.get(row.id, [])}) for e in recorded]
    return found


def _rationales(task: Task, eval_dir: Path, data_dir: str | Path | None) -> dict[str, list[str]]:
    """Question id -> the task's gold rationale, for the split the folder was run on (empty if unreadable)."""
    settings = json.loads((eval_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    try:
        examples = task.load(settings.get("split"), data_dir=data_dir)
    except MadspyError:  # the data are not here: role examples without rationales
        return {}
    return {e.id: list(e.get("rationale") or []) for e in examples}


def _key(inputs: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in inputs.items()))


def export_role_datasets(
    eval_dirs: Sequence[str | Path],
    out: str | Path,
    every_proposal: bool = False,
    data_dir: str | Path | None = None,
    program: str | None = None,
) -> dict[Role, int]:
    """Write ``<out>/<role>.jsonl`` from the transcripts of ``eval_dirs`` (of ``program``'s debates only, if
    given: a folder holding several programs), and ``<out>/source.json`` saying where they come from
    (task, split, model: what a recorded role A/B states); returns the examples per role.

    Each example carries its question's gold rationale where the task has one (read from ``data_dir``,
    ``MADSPY_DATA_DIR`` or the Hub), what a hindsight teacher and gold-rationale demos use.
    """
    examples = [e for d in eval_dirs for e in eval_role_examples(d, every_proposal, data_dir, program)]
    counts = save_role_datasets(examples, out)
    settings = [eval_settings(Path(d)) for d in eval_dirs]
    source = {"eval_dirs": [str(d) for d in eval_dirs], "program": program, "every_proposal": every_proposal}
    for key in ("task", "split", "model"):
        source[f"{key}s"] = sorted({str(s.get(key)) for s in settings})
    (Path(out) / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    return counts


def role_data_source(folder: str | Path) -> dict:
    """Where a role-data folder's examples come from (eval folders, their tasks, splits, models); {} if not recorded."""
    file = Path(folder) / SOURCE_FILE
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
