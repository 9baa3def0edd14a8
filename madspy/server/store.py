"""Keep debate transcripts in one SQLite file, safe to share between threads.

Example:
    >>> from madspy.programs.transcript import Transcript
    >>> from madspy.server.store import TranscriptStore
    >>> store = TranscriptStore(":memory:")
    >>> tid = store.put(Transcript(question="2+2?"))
    >>> store.get(tid).question
    '2+2?'
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from pathlib import Path

from madspy.core.errors import StoreError
from madspy.programs.transcript import Transcript

SCHEMA = """
create table if not exists transcripts (
    id text primary key,
    created text not null,
    question text not null,
    status text not null,
    body text not null
)
"""


def new_id() -> str:
    """A fresh transcript id (32 hex digits), known before the debate ends."""
    return uuid.uuid4().hex


class TranscriptStore:
    """Transcripts by id in SQLite; one connection guarded by a lock (writes are tiny, a debate is slow)."""

    def __init__(self, path: str | Path):
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("pragma journal_mode=wal")
            self._db.execute(SCHEMA)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open transcript database {path}: {e}") from None
        self._lock = threading.Lock()

    def put(self, transcript: Transcript, tid: str | None = None) -> str:
        """Store ``transcript`` under ``tid`` (default: a new id, see ``new_id``); returns the id."""
        tid = tid or new_id()
        with self._lock:
            self._db.execute(
                "insert into transcripts values (?, ?, ?, ?, ?)",
                (tid, transcript.started_at, transcript.question, transcript.status, transcript.to_json()),
            )
        return tid

    def get(self, tid: str) -> Transcript | None:
        """The transcript stored under ``tid``, or None."""
        with self._lock:
            row = self._db.execute("select body from transcripts where id = ?", (tid,)).fetchone()
        return Transcript.from_json(row[0]) if row else None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("select count(*) from transcripts").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
