"""One eval shared by several workers through a database: each (program, question) is claimed by one worker.

Every worker of an eval registers the same (program, question) items, in the order one worker would
run them, then claims the first open item, runs it and stores its row. An item is open when no worker
holds it, or when its worker's heartbeat is older than the lease: a worker killed mid-question leaves
its item to the next claim. A claim is one ``UPDATE ... RETURNING`` on the first open item (``FOR UPDATE
SKIP LOCKED`` on PostgreSQL, so concurrent claims take different items); a row is stored once per item
even when a stalled worker finishes after its lease ran out. Heartbeats use the database's clock, so
workers' clocks need not agree. This is the queue pattern PostgreSQL documents for SKIP LOCKED; a
message broker would add a second service to run for what one table does.

Example:
    >>> work = SharedEval(":memory:", "gsm8k-fresh", {"task": "gsm8k", "n": 2}, worker="w1")
    >>> work.add([("cot", "q1"), ("cot", "q2")])
    >>> work.claim()
    ('cot', 'q1')
    >>> work.finish("cot", "q1", '{"id": "q1"}', None)
    >>> work.claim(), work.claim(), work.open_items()
    (('cot', 'q2'), None, 1)
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from madspy.core.database import error_text, open_database
from madspy.core.errors import EvalError, StoreError

DEFAULT_LEASE_S = 60.0
_META = sa.MetaData()
_EVALS = sa.Table("evals", _META, sa.Column("name", sa.Text, primary_key=True), sa.Column("settings", sa.Text))
_CLAIMS = sa.Table(
    "eval_claims",
    _META,
    *(sa.Column(name, sa.Text, primary_key=True) for name in ("eval", "program", "question")),
    sa.Column("position", sa.Integer),
    sa.Column("worker", sa.Text),
    sa.Column("heartbeat", sa.Float),
    sa.Column("attempts", sa.Integer),
    sa.Column("done", sa.Boolean),
)
_ROWS = sa.Table(
    "eval_rows",
    _META,
    *(sa.Column(name, sa.Text, primary_key=True) for name in ("eval", "program", "question")),
    sa.Column("position", sa.Integer),
    *(sa.Column(name, sa.Text) for name in ("worker", "row", "transcript")),
)


def worker_name() -> str:
    """This worker's name in claims: host, process id and a random suffix (unique across restarts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _insert_new(conn: sa.Connection, table: sa.Table, values: list[dict[str, Any]]) -> None:
    """Insert ``values``, leaving rows whose key is already there as they are."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    conn.execute(insert(table).on_conflict_do_nothing(), values)


class SharedEval:
    """The eval ``name`` in the database at ``target``, as seen by ``worker``; made with ``settings``
    (a worker whose settings differ from the first worker's is refused, as a local folder refuses them)."""

    def __init__(
        self,
        target: str | Path,
        name: str,
        settings: dict[str, Any],
        worker: str | None = None,
        lease_s: float = DEFAULT_LEASE_S,
    ):
        if lease_s <= 0:
            raise EvalError(f"the lease must be a positive number of seconds, got {lease_s:g}")
        self.name, self.worker, self.lease_s = name, worker or worker_name(), lease_s
        self._engine = open_database(target)
        given = json.dumps(settings, sort_keys=True, default=str)
        with self._engine.begin() as conn:
            _insert_new(conn, _EVALS, [{"name": name, "settings": given}])
            first = conn.execute(sa.select(_EVALS.c.settings).where(_EVALS.c.name == name)).scalar()
        if first != given:
            raise EvalError(f"shared eval {name!r} was started with other settings: {first} (this worker: {given})")

    def _now(self) -> sa.ColumnElement[float]:
        """The database's clock in seconds since the epoch."""
        if self._engine.dialect.name == "postgresql":
            return sa.func.extract("epoch", sa.func.clock_timestamp())
        return (sa.func.julianday("now") - 2440587.5) * 86400.0

    def _mine(self, program: str, question: str) -> sa.ColumnElement[bool]:
        c = _CLAIMS.c
        return sa.and_(c.eval == self.name, c.program == program, c.question == question)

    def add(self, items: Sequence[tuple[str, str]]) -> None:
        """Register (program, question) items in the order to run them (already registered ones stay)."""
        values = [
            {"eval": self.name, "program": p, "question": q, "position": i, "attempts": 0, "done": False}
            for i, (p, q) in enumerate(items)
        ]
        if values:
            with self._engine.begin() as conn:
                _insert_new(conn, _CLAIMS, values)

    def claim(self) -> tuple[str, str] | None:
        """Take the first open item: (program, question), or None when every item is done or held."""
        c = _CLAIMS.c
        first_open = (
            sa.select(c.eval, c.program, c.question)
            .where(c.eval == self.name, ~c.done, sa.or_(c.worker.is_(None), c.heartbeat < self._now() - self.lease_s))
            .order_by(c.position)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        take = (
            _CLAIMS.update()
            .where(sa.tuple_(c.eval, c.program, c.question).in_(first_open))
            .values(worker=self.worker, heartbeat=self._now(), attempts=c.attempts + 1)
            .returning(c.program, c.question)
        )
        try:
            with self._engine.begin() as conn:
                got = conn.execute(take).first()
        except sa.exc.SQLAlchemyError as e:
            raise StoreError(f"cannot claim work of shared eval {self.name!r}: {error_text(e)}") from None
        return (got.program, got.question) if got else None

    def finish(self, program: str, question: str, row: str, transcript: str | None) -> None:
        """Store the row (and transcript JSON) of a claimed item and mark it done, in one transaction; a row
        already stored stays."""
        with self._engine.begin() as conn:
            position = conn.execute(sa.select(_CLAIMS.c.position).where(self._mine(program, question))).scalar()
            values = {"eval": self.name, "program": program, "question": question, "position": position}
            _insert_new(conn, _ROWS, [values | {"worker": self.worker, "row": row, "transcript": transcript}])
            conn.execute(_CLAIMS.update().where(self._mine(program, question)).values(done=True))

    def release(self, program: str, question: str) -> None:
        """Give a claimed item back unfinished (a worker stopping cleanly), so the next claim takes it."""
        with self._engine.begin() as conn:
            mine = sa.and_(self._mine(program, question), _CLAIMS.c.worker == self.worker, ~_CLAIMS.c.done)
            conn.execute(_CLAIMS.update().where(mine).values(worker=None, heartbeat=None))

    @contextmanager
    def heartbeat(self) -> Iterator[None]:
        """While inside, refresh this worker's claims every third of the lease, so no other worker takes them."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(self.lease_s / 3):
                held = sa.and_(_CLAIMS.c.eval == self.name, _CLAIMS.c.worker == self.worker, ~_CLAIMS.c.done)
                try:
                    with self._engine.begin() as conn:
                        conn.execute(_CLAIMS.update().where(held).values(heartbeat=self._now()))
                except sa.exc.SQLAlchemyError:
                    pass  # a database that is briefly away: the next beat tries again, the lease allows for it

        thread = threading.Thread(target=beat, name="claims-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def open_items(self) -> int:
        """Items not done yet (held or not)."""
        with self._engine.connect() as conn:
            query = sa.select(sa.func.count()).where(_CLAIMS.c.eval == self.name, ~_CLAIMS.c.done)
            return conn.execute(query).scalar()

    def rows(self) -> list[tuple[str, str | None]]:
        """Every stored (row JSON, transcript JSON), in the order one worker would have run them."""
        with self._engine.connect() as conn:
            query = sa.select(_ROWS.c.row, _ROWS.c.transcript).where(_ROWS.c.eval == self.name)
            return [tuple(r) for r in conn.execute(query.order_by(_ROWS.c.position))]
