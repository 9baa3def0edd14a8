"""The sessions of an eval folder: one line per ``evaluate`` call that runs rows, in ``<out>/sessions.jsonl``.

A long eval is resumed across days and machines, and two builds of one local engine can answer the same
prompt differently. So each row names the session that wrote it (``EvalRow.session``), and the session says
when and on which engines it ran (not on which host: eval folders get committed and shared). A paired
comparison can then tell pairs made in one session from pairs split across sessions, and those from pairs
whose engines differ (``madspy compare`` counts both).

Example:
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> first, second = start_session(out, ["openai/gpt-4o-mini"]), start_session(out, ["openai/gpt-4o-mini"])
    >>> first != second, [s.session for s in read_sessions(out)] == [first, second]
    (True, True)
    >>> read_sessions(out)[0].engine.startswith("litellm ")
    True
    >>> engines_of([out])[first] == read_sessions(out)[0].engine
    True
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from madspy.core.models import engine_of
from madspy.rows import EvalRow, append_jsonl, jsonl_records

SESSIONS_FILE = "sessions.jsonl"


class Session(BaseModel):
    """One ``evaluate`` call on a folder that ran rows."""

    session: str  # "<started>#<ordinal in the folder>-<random>": unique across folders, so their rows compare
    started: str  # UTC, ISO 8601
    engine: str  # what served its models (``madspy.core.models.engine_of``), one per distinct engine, "; "-joined


def read_sessions(out: str | Path) -> list[Session]:
    """The sessions recorded in eval folder ``out``, oldest first (none for a folder older than this record)."""
    file = Path(out) / SESSIONS_FILE
    return [Session.model_validate(record) for _, record in jsonl_records(file)] if file.is_file() else []


def engines_of(folders: Iterable[str | Path]) -> dict[str, str]:
    """Session id -> engine, over the sessions of every folder in ``folders``."""
    return {s.session: s.engine for folder in folders for s in read_sessions(folder)}


def start_session(out: str | Path, models: Iterable[str]) -> str:
    """Record a new session of eval folder ``out`` calling ``models``; its id, for the rows it writes."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    session = Session(
        session=f"{started}#{len(read_sessions(out)) + 1}-{uuid.uuid4().hex[:6]}",
        started=started,
        engine="; ".join(sorted({engine_of(model) for model in models})),
    )
    Path(out).mkdir(parents=True, exist_ok=True)
    with append_jsonl(Path(out) / SESSIONS_FILE) as file:
        file.write(json.dumps(session.model_dump()) + "\n")
    return session.session


def session_lines(out: str | Path, rows: Sequence[EvalRow]) -> list[str]:
    """One line per session of eval folder ``out`` that wrote some of ``rows`` (its id, rows and engine), one for
    rows of sessions not recorded there, and one for rows older than the record; none when no row names one."""
    counts = Counter(r.session for r in rows)
    if set(counts) <= {None}:
        return []
    sessions = [s for s in read_sessions(out) if counts[s.session]]
    lines = [f"session {s.session}: {counts[s.session]} rows, {s.engine}" for s in sessions]
    unrecorded = sum(counts.values()) - counts[None] - sum(counts[s.session] for s in sessions)
    if unrecorded:
        lines.append(f"{unrecorded} rows of sessions {out}/{SESSIONS_FILE} does not record")
    return lines + ([f"{counts[None]} rows from before sessions were recorded"] if counts[None] else [])


__all__ = ["SESSIONS_FILE", "Session", "engines_of", "read_sessions", "session_lines", "start_session"]
