"""Keep debate transcripts in a database: a SQLite file by default, PostgreSQL shared by several replicas.

Example:
    >>> from madspy.programs.transcript import Transcript
    >>> from madspy.server.store import TranscriptStore
    >>> store = TranscriptStore(":memory:")
    >>> tid = store.put(Transcript(question="2+2?"))
    >>> store.get(tid).question
    '2+2?'
"""

from __future__ import annotations

import uuid
from pathlib import Path

import sqlalchemy as sa

from madspy.core.database import error_text, open_database
from madspy.core.errors import StoreError
from madspy.programs.transcript import Transcript

_TRANSCRIPTS = sa.table(
    "transcripts",
    *(sa.column(name, sa.Text) for name in ("id", "created", "question", "status", "body")),
)


def new_id() -> str:
    """A fresh transcript id (32 hex digits), known before the debate ends."""
    return uuid.uuid4().hex


class TranscriptStore:
    """Transcripts by id in the database at ``target`` (a file path, ``:memory:`` or a URL such as
    ``postgresql://madspy@db/madspy``); safe to share between threads, and between processes and
    machines on one PostgreSQL: a transcript one replica stores, every replica reads."""

    def __init__(self, target: str | Path):
        self._engine = open_database(target)

    def put(self, transcript: Transcript, tid: str | None = None) -> str:
        """Store ``transcript`` under ``tid`` (default: a new id, see ``new_id``); returns the id."""
        tid = tid or new_id()
        values = {
            "id": tid,
            "created": transcript.started_at,
            "question": transcript.question,
            "status": transcript.status,
            "body": transcript.to_json(),
        }
        try:
            with self._engine.begin() as conn:
                conn.execute(_TRANSCRIPTS.insert().values(**values))
        except sa.exc.SQLAlchemyError as e:
            raise StoreError(f"cannot store transcript {tid}: {error_text(e)}") from None
        return tid

    def get(self, tid: str) -> Transcript | None:
        """The transcript stored under ``tid``, or None."""
        try:
            with self._engine.connect() as conn:
                body = conn.execute(sa.select(_TRANSCRIPTS.c.body).where(_TRANSCRIPTS.c.id == tid)).scalar()
        except sa.exc.SQLAlchemyError as e:
            raise StoreError(f"cannot read transcript {tid}: {error_text(e)}") from None
        return Transcript.from_json(body) if body is not None else None

    def __len__(self) -> int:
        with self._engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(_TRANSCRIPTS)).scalar()

    def close(self) -> None:
        self._engine.dispose()
