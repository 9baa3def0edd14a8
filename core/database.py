"""One database for what several processes share: a SQLite file by default, PostgreSQL past one machine.

``open_database`` takes a file path (SQLite, the embedded default), ``:memory:`` or any SQLAlchemy URL
(``postgresql://user@host/db``, ``sqlite:///x.db``) and brings its schema up to date: each entry of
``MIGRATIONS`` runs once, in order, in one transaction with the version it reaches, so a new madspy
applies its migrations on start and two processes starting together apply each one once. The
migrations are functions over Alembic's operations (portable DDL) rather than an Alembic script
directory: madspy ships its few revisions inside the package, with no ``env.py`` to install.

Tables: ``transcripts`` (the server's debates, by id), ``evals``, ``eval_claims`` (which worker holds which
(eval, program, question), see ``madspy.claims``), ``eval_rows`` (the rows workers finished) and
``credit_ledger`` (the credit protocol's per-agent credit, see ``madspy.programs.credit``).

Example:
    >>> db = open_database(":memory:")
    >>> schema_version(db) == len(MIGRATIONS)
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from sqlalchemy.pool import StaticPool

from madspy.core.errors import StoreError

_VERSION = sa.table("madspy_schema", sa.column("version", sa.Integer))
# PostgreSQL advisory lock keys: one per thing that processes sharing a database must do one at a time.
MIGRATION_LOCK, OPTUNA_SCHEMA_LOCK, CREDIT_LOCK = 7314, 7315, 7316


def _transcripts(ops: Operations) -> None:
    """Version 1: the transcripts table (a database of madspy before version 1 already has it)."""
    if not sa.inspect(ops.get_bind()).has_table("transcripts"):
        ops.create_table(
            "transcripts",
            sa.Column("id", sa.Text, primary_key=True),
            sa.Column("created", sa.Text, nullable=False),
            sa.Column("question", sa.Text, nullable=False),
            sa.Column("status", sa.Text, nullable=False),
            sa.Column("body", sa.Text, nullable=False),
        )


def _eval_work(ops: Operations) -> None:
    """Version 2: evals shared by workers (their settings, claims and finished rows)."""
    ops.create_table(
        "evals",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("settings", sa.Text, nullable=False),
    )
    ops.create_table(
        "eval_claims",
        sa.Column("eval", sa.Text, primary_key=True),
        sa.Column("program", sa.Text, primary_key=True),
        sa.Column("question", sa.Text, primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("worker", sa.Text),
        sa.Column("heartbeat", sa.Float),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("done", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    ops.create_index("eval_claims_open", "eval_claims", ["eval", "done", "position"])
    ops.create_table(
        "eval_rows",
        sa.Column("eval", sa.Text, primary_key=True),
        sa.Column("program", sa.Text, primary_key=True),
        sa.Column("question", sa.Text, primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("worker", sa.Text, nullable=False),
        sa.Column("row", sa.Text, nullable=False),
        sa.Column("transcript", sa.Text),
    )


def _credit_ledger(ops: Operations) -> None:
    """Version 3: the credit protocol's per-agent credit, shared by every process that records or reads it."""
    ops.create_table(
        "credit_ledger",
        sa.Column("agent", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("credit", sa.Float, nullable=False),
    )


MIGRATIONS: list[Callable[[Operations], None]] = [_transcripts, _eval_work, _credit_ledger]


def _serialized(engine: sa.Engine) -> sa.Engine:
    """A SQLite engine whose transactions take the write lock when they begin (``BEGIN IMMEDIATE``), so two
    processes migrating or claiming at once take turns; pysqlite would begin only at the first write, after
    both had read the same state (SQLAlchemy's documented recipe for pysqlite transactions)."""

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # pysqlite emits no BEGIN of its own
        dbapi_connection.execute("pragma journal_mode=wal")

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("begin immediate")

    return engine


def with_driver(url: str) -> sa.URL:
    """``url`` parsed, with the driver madspy installs for PostgreSQL (psycopg 3, not SQLAlchemy's default
    psycopg2); an Optuna storage URL goes through it too.

    >>> with_driver("postgresql://u@h/db").render_as_string()
    'postgresql+psycopg://u@h/db'
    """
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError as e:
        raise StoreError(f"not a database URL: {url!r} ({e})") from None
    return parsed.set(drivername="postgresql+psycopg") if parsed.drivername == "postgresql" else parsed


@contextmanager
def one_at_a_time(url: str, key: int) -> Iterator[None]:
    """Across processes on one PostgreSQL, hold advisory lock ``key`` while inside (one process at a time
    makes a schema another library creates, such as Optuna's); a no-op for any other database."""
    parsed = with_driver(url)
    if parsed.drivername != "postgresql+psycopg":
        yield
        return
    engine = sa.create_engine(parsed, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("select pg_advisory_lock(:key)"), {"key": key})
            try:
                yield
            finally:
                conn.execute(sa.text("select pg_advisory_unlock(:key)"), {"key": key})
    finally:
        engine.dispose()


def engine_for(target: str | Path) -> sa.Engine:
    """A SQLAlchemy engine for a file path, ``:memory:`` or a database URL (``postgresql://`` uses psycopg 3).

    >>> engine_for("runs/t.sqlite3").url.drivername, engine_for("postgresql://u@h/db").url.drivername
    ('sqlite', 'postgresql+psycopg')
    """
    text = str(target)
    if text == ":memory:":  # one connection for all threads, or each would see its own empty database
        return _serialized(
            sa.create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
        )
    url = with_driver(text if is_database_url(text) else f"sqlite:///{text}")
    if url.drivername.startswith("sqlite"):
        return _serialized(sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}))
    try:
        return sa.create_engine(url, pool_pre_ping=True)
    except ImportError as e:
        raise StoreError(f"{url.drivername} needs a driver: pip install 'madspy[postgres]' ({e})") from None
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as e:
        raise StoreError(f"cannot use database {url.render_as_string(hide_password=True)}: {e}") from None


def schema_version(engine: sa.Engine) -> int:
    """The last migration applied to ``engine``'s database (0: none)."""
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table("madspy_schema"):
            return 0
        return conn.execute(sa.select(sa.func.max(_VERSION.c.version))).scalar() or 0


def hold_in_transaction(conn: sa.Connection, key: int) -> None:
    """Until ``conn``'s transaction ends, hold PostgreSQL advisory lock ``key``: processes doing the same take
    turns. On SQLite the transaction already holds the write lock from its start (``_serialized``)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("select pg_advisory_xact_lock(:key)"), {"key": key})


def error_text(error: sa.exc.SQLAlchemyError) -> str:
    """What a database error says: the driver's own message when there is one, without SQLAlchemy's wrapping."""
    return str(getattr(error, "orig", None) or error)


def _migrate(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        hold_in_transaction(conn, MIGRATION_LOCK)  # two processes starting together migrate one after the other
        ops = Operations(MigrationContext.configure(conn))
        if not sa.inspect(conn).has_table("madspy_schema"):
            ops.create_table("madspy_schema", sa.Column("version", sa.Integer, nullable=False))
        done = conn.execute(sa.select(sa.func.max(_VERSION.c.version))).scalar() or 0
        if done > len(MIGRATIONS):
            raise StoreError(
                f"this database was made by a newer madspy (schema {done}; this one knows {len(MIGRATIONS)})"
            )
        for version, migration in enumerate(MIGRATIONS[done:], start=done + 1):
            migration(ops)
            conn.execute(_VERSION.insert().values(version=version))


def is_database_url(target: str | Path) -> bool:
    """Whether ``target`` names a database by URL (``postgresql://...``, ``sqlite:///...``) rather than a file.

    >>> is_database_url("postgresql://madspy@db/madspy"), is_database_url("runs/credit.json")
    (True, False)
    """
    return "://" in str(target)


@functools.cache
def shared_database(url: str) -> sa.Engine:
    """``open_database(url)``, once per process: for what opens the same database again and again (a debate
    reading the credit ledger)."""
    return open_database(url)


def open_database(target: str | Path) -> sa.Engine:
    """An engine on ``target`` (see ``engine_for``) with every migration applied; StoreError if it cannot be."""
    engine = engine_for(target)
    try:
        _migrate(engine)
    except sa.exc.SQLAlchemyError as e:
        shown = engine.url.render_as_string(hide_password=True)
        raise StoreError(f"cannot open database {shown}: {error_text(e)}") from None
    return engine
