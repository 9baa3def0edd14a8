"""The sessions of an eval folder: one line per ``madspy eval`` invocation, in ``<out>/sessions.jsonl``.

A long eval is resumed across days and machines, and two builds of one local engine can answer the same
prompt differently. So each row names the session that wrote it (``EvalRow.session``), and the session says
when and on which engine it ran (not on which host: eval folders get committed and shared). A paired
comparison can then tell pairs made in one session from pairs split across sessions (``madspy compare``
counts them).

Example:
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> first, second = start_session(out, "openai/gpt-4o-mini"), start_session(out, "openai/gpt-4o-mini")
    >>> first != second, [s.session for s in read_sessions(out)] == [first, second]
    (True, True)
    >>> read_sessions(out)[0].engine.startswith("litellm ")
    True
"""

from __future__ import annotations

import importlib.metadata
import json
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from madspy.core.models import engine_of
from madspy.rows import EvalRow, append_jsonl, jsonl_records

SESSIONS_FILE = "sessions.jsonl"


class Session(BaseModel):
    """One invocation of ``madspy eval`` on a folder."""

    session: str  # "<started>#<ordinal in the folder>": unique across folders, so rows of two folders compare
    started: str  # UTC, ISO 8601
    engine: str  # what served the model (``madspy.core.models.engine_of``)
    madspy: str  # the installed version


def read_sessions(out: str | Path) -> list[Session]:
    """The sessions recorded in eval folder ``out``, oldest first (none for a folder older than this record)."""
    file = Path(out) / SESSIONS_FILE
    return [Session.model_validate(record) for _, record in jsonl_records(file)] if file.is_file() else []


def start_session(out: str | Path, model: str) -> str:
    """Record a new session of eval folder ``out`` running ``model``; its id, for the rows it writes."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    session = Session(
        session=f"{started}#{len(read_sessions(out)) + 1}",
        started=started,
        engine=engine_of(model),
        madspy=importlib.metadata.version("madspy"),
    )
    Path(out).mkdir(parents=True, exist_ok=True)
    with append_jsonl(Path(out) / SESSIONS_FILE) as file:
        file.write(json.dumps(session.model_dump()) + "\n")
    return session.session


def session_lines(out: str | Path, rows: Sequence[EvalRow]) -> list[str]:
    """One line per session of eval folder ``out`` that wrote some of ``rows``: its id, rows and engine; and one
    for rows older than the record. None at all for a folder with no session recorded."""
    sessions = read_sessions(out)
    if not sessions:
        return []
    counts = Counter(r.session for r in rows)
    lines = [f"session {s.session}: {counts[s.session]} rows, {s.engine}" for s in sessions if counts[s.session]]
    return lines + ([f"{counts[None]} rows from before sessions were recorded"] if counts[None] else [])


__all__ = ["SESSIONS_FILE", "Session", "read_sessions", "session_lines", "start_session"]
