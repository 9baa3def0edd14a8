"""Role datasets from eval folders: every recorded call of every debate, labelled by the question's gold answer.

``madspy eval --split train`` (or any eval folder whose questions are not held out) records
each debate's transcript; this reads them and writes one JSONL file per role
(``optimizers.role_data``), what ``madspy compile --roles`` compiles a role on.

Example::

    counts = export_role_datasets(["runs/gsm8k-train"], "roles/gsm8k")   # {Role.PROPOSER: 120, ...}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from madspy.evaluation import CORRECT_AT, load_rows
from madspy.optimizers.role_data import RoleExample, role_examples, save_role_datasets
from madspy.pairs import eval_folder_task
from madspy.programs.transcript import Transcript
from madspy.signatures import Role


def eval_role_examples(eval_dir: str | Path) -> list[RoleExample]:
    """The labelled role calls of every transcript in one eval folder."""
    eval_dir = Path(eval_dir)
    task = eval_folder_task(eval_dir)
    found = []
    for row in sorted(load_rows(eval_dir), key=lambda r: (r.program, r.id)):  # the same file on every run
        if not row.transcript or not (eval_dir / row.transcript).is_file():
            continue
        transcript = Transcript.load(eval_dir / row.transcript)
        right = lambda answer, gold=row.gold: task.score(answer, gold) >= CORRECT_AT  # noqa: E731
        found += role_examples(transcript, row.id, row.gold, right)
    return found


def export_role_datasets(eval_dirs: Sequence[str | Path], out: str | Path) -> dict[Role, int]:
    """Write ``<out>/<role>.jsonl`` from the transcripts of ``eval_dirs``; returns the examples per role."""
    return save_role_datasets([e for d in eval_dirs for e in eval_role_examples(d)], out)
