"""The eval row: one program's outcome on one question, as ``madspy eval`` writes it to ``rows.jsonl``.

Every reader (summary, compare, redecide, report, A/B, port, preference pairs) takes these.

Example:
    >>> row = EvalRow(program="cot", id="q1", gold="4", answer="4", score=1.0, correct=True, status="converged")
    >>> EvalRow.model_validate_json(row.model_dump_json()) == row, row.usage.total_tokens
    (True, 0)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, model_validator

from madspy.optimizers.traces import CriticTrace, FlipTrace, ProposalTrace
from madspy.programs.transcript import Status, StopReason, Usage


class EvalRow(BaseModel):
    """One (program, question) of an eval folder."""

    model_config = ConfigDict(extra="ignore")  # rows written by a newer madspy still read

    program: str
    id: str
    gold: str
    answer: str | None = None
    readable: bool | None = None  # whether the task reads an answer in it (a number, an option); None in older rows
    score: float = 0.0
    correct: bool = False
    confidence: float = 0.0
    status: Status
    stop_reason: StopReason | None = None
    error: str | None = None  # why an invalid_input question was refused
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = 0.0
    proposals: list[ProposalTrace] = Field(default_factory=list)
    critic: list[CriticTrace] = Field(default_factory=list)
    flips: list[FlipTrace] = Field(default_factory=list)
    transcript: str | None = None  # the transcript's path inside the eval folder
    session: str | None = None  # the eval session that wrote it (``madspy.sessions``); None in older rows

    @model_validator(mode="before")
    @classmethod
    def _refusal_reason_is_an_error(cls, data: Any) -> Any:
        """Rows written before ``error`` existed kept a refused question's reason in ``stop_reason``."""
        if isinstance(data, dict) and data.get("status") == Status.INVALID_INPUT and "error" not in data:
            return {**data, "error": data.get("stop_reason"), "stop_reason": None}
        return data

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens


def jsonl_records(file: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON) of each line of an append-only JSONL file; a torn line is skipped.

    A run killed mid-write leaves its last line cut off: that row is simply run again on resume.
    """
    for n, line in enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError:
            continue


def append_jsonl(file: Path) -> TextIO:
    """``file`` opened to append JSONL rows; a line torn by a crash is ended first, so new rows stay whole."""
    if file.is_file() and file.read_bytes()[-1:] not in (b"", b"\n"):
        with open(file, "a", encoding="utf-8") as torn:
            torn.write("\n")
    return open(file, "a", encoding="utf-8")  # the caller closes it
