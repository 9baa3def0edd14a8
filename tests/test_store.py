"""The transcript store on SQLite and on a real PostgreSQL: migrations, bad URLs, replicas sharing one store."""

from __future__ import annotations

import sqlite3
import threading

import httpx
import pytest
import sqlalchemy as sa
from servers import running
from test_serve import AUTH, program, settings  # noqa: F401  (the served program fixture)

from madspy.core.database import MIGRATIONS, open_database, schema_version
from madspy.core.errors import StoreError
from madspy.programs.transcript import Transcript
from madspy.server.app import create_app
from madspy.server.store import TranscriptStore

# The schema madspy's store had before migrations (its one table, created by the store itself).
VERSION_0 = "create table transcripts (id text primary key, created text not null, question text not null, "
VERSION_0 += "status text not null, body text not null)"


def test_a_database_of_the_previous_version_is_migrated_and_keeps_its_transcripts(tmp_path):
    path = tmp_path / "old.sqlite3"
    old = Transcript(question="What is 2+2?")
    with sqlite3.connect(path) as db:
        db.execute(VERSION_0)
        db.execute(
            "insert into transcripts values ('t1', ?, ?, ?, ?)", (old.started_at, old.question, "x", old.to_json())
        )
    store = TranscriptStore(path)
    assert store.get("t1").question == "What is 2+2?" and len(store) == 1
    assert schema_version(open_database(path)) == len(MIGRATIONS)
    assert {"evals", "eval_claims", "eval_rows"} <= set(sa.inspect(open_database(path)).get_table_names())


def test_a_database_of_a_newer_madspy_and_bad_urls_are_clear_errors(tmp_path):
    path = tmp_path / "new.sqlite3"
    open_database(path)
    with sqlite3.connect(path) as db:
        db.execute("insert into madspy_schema values (?)", (len(MIGRATIONS) + 1,))
    with pytest.raises(StoreError, match="newer madspy"):
        TranscriptStore(path)
    with pytest.raises(StoreError, match="cannot use database"):
        TranscriptStore("nosuchdb://x/y")
    with pytest.raises(StoreError, match="cannot open database postgresql"):
        TranscriptStore("postgresql://madspy:secret@127.0.0.1:1/none")
    with pytest.raises(StoreError) as error:
        TranscriptStore("postgresql://madspy:secret@127.0.0.1:1/none")
    assert "secret" not in str(error.value)


@pytest.mark.parametrize("previous", [False, True], ids=["empty", "previous-version"])
def test_postgresql_migrates_an_empty_and_a_previous_version_database(postgres_url, previous):
    if previous:
        with sa.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://")).begin() as conn:
            conn.exec_driver_sql(VERSION_0)
            conn.exec_driver_sql(
                "insert into transcripts values ('t1', 'then', 'old?', 'x', '{\"question\": \"old?\"}')"
            )
    openers = [threading.Thread(target=open_database, args=(postgres_url,)) for _ in range(4)]
    for t in openers:  # replicas starting together apply each migration once
        t.start()
    for t in openers:
        t.join()
    assert schema_version(open_database(postgres_url)) == len(MIGRATIONS)
    store = TranscriptStore(postgres_url)
    assert len(store) == int(previous)
    tid = store.put(Transcript(question="new?"))
    assert TranscriptStore(postgres_url).get(tid).question == "new?"


def test_two_replicas_on_one_postgresql_read_each_others_transcripts(program, tmp_path, postgres_url):  # noqa: F811
    path = program()
    one, two = (create_app(path, settings(tmp_path, store=postgres_url)) for _ in range(2))
    with (
        running(one) as url_one,
        running(two) as url_two,
        httpx.Client(base_url=url_one, headers=AUTH) as a,
        httpx.Client(base_url=url_two, headers=AUTH) as b,
    ):
        asked = [a.post("/v1/debate", json={"question": f"What is 17 * {n}?"}) for n in (23, 24)]
        asked.append(b.post("/v1/debate", json={"question": "What is 17 * 25?"}))
        ids = [r.json()["transcript_id"] for r in asked]
        for client in (a, b):
            questions = [client.get(f"/v1/transcripts/{tid}").json()["question"] for tid in ids]
            assert questions == ["What is 17 * 23?", "What is 17 * 24?", "What is 17 * 25?"]
    assert len(TranscriptStore(postgres_url)) == 3


@pytest.mark.parametrize("on", ["sqlite", "postgresql"])
def test_a_credit_ledger_in_a_database_keeps_every_workers_updates(tmp_path, request, on):
    from madspy.programs.credit import CreditLedger

    url = f"sqlite:///{tmp_path / 'credit.sqlite3'}" if on == "sqlite" else request.getfixturevalue("postgres_url")
    recorders = [threading.Thread(target=CreditLedger(url).record, args=({0: True, 1: False},)) for _ in range(8)]
    for t in recorders:
        t.start()
    for t in recorders:
        t.join()
    in_a_file = CreditLedger(tmp_path / "credit.json")
    for _ in range(8):
        in_a_file.record({0: True, 1: False})
    assert CreditLedger(url).weights() == in_a_file.weights()  # 8 updates, none lost to a race
