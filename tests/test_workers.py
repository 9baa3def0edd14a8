"""Eval workers sharing one eval through a database: each question once per program, a killed worker's
question claimed again, rows identical to a one-worker run (scripted model, real worker processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_evaluation import script

from madspy.claims import SharedEval
from madspy.core.database import engine_for, open_database
from madspy.core.errors import EvalError
from madspy.evaluation import evaluate, load_rows
from madspy.testing import register_script

TESTS = Path(__file__).resolve().parent
PROGRAMS = ["cot", "sc:3"]
N = 6
WORKER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from madspy.evaluation import evaluate
    from madspy.testing import register_provider, register_script
    from test_evaluation import script
    register_provider()
    model = register_script("workers", script, latency_s=float(sys.argv[3]))
    evaluate({programs!r}, "arithmetic", model, out=sys.argv[2], n={n}, seed=0, concurrency=1, cache=False,
             progress=False, shared=sys.argv[1], lease_s=1.5)
    """
)


def start_worker(db: str, out: Path, latency_s: float) -> subprocess.Popen:
    code = WORKER.format(tests=str(TESTS), programs=PROGRAMS, n=N)
    env = os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.Popen([sys.executable, "-c", code, db, str(out), str(latency_s)], env=env, stderr=subprocess.PIPE)


def comparable(rows) -> list[dict]:
    """Rows without what differs between runs of one program: the session, the wall time and the prompt
    tokens a process's prompt cache held (the scripted provider, like llama.cpp, caches per process)."""
    dumped = [r.model_dump(exclude={"session": True, "wall_s": True, "usage": {"cached_prompt_tokens"}}) for r in rows]
    return sorted(dumped, key=lambda r: (r["id"], r["program"]))


def one_worker_rows(tmp_path) -> list[dict]:
    model = register_script("workers", script)
    ev = evaluate(PROGRAMS, "arithmetic", model, out=tmp_path / "alone", n=N, seed=0, cache=False, progress=False)
    return comparable(ev.rows)


def held_by(db: str, pid: int) -> int:
    with engine_for(db).connect() as conn:
        query = "select count(*) from eval_claims where worker like :me and not done"
        return conn.execute(sa.text(query), {"me": f"%:{pid}:%"}).scalar()


def test_two_workers_on_a_sqlite_file_split_the_questions(tmp_path):
    db = str(tmp_path / "work.sqlite3")
    workers = [start_worker(db, tmp_path / f"w{i}" / "arith", 0.05) for i in range(2)]
    for w in workers:
        assert w.wait(300) == 0, w.stderr.read().decode()[-2000:]
    for i in range(2):
        assert comparable(load_rows(tmp_path / f"w{i}" / "arith")) == one_worker_rows(tmp_path)
    with engine_for(db).connect() as conn:
        by_worker = conn.execute(sa.text("select worker, count(*) from eval_rows group by worker")).all()
    assert sum(count for _, count in by_worker) == N * len(PROGRAMS)
    assert len(by_worker) == 2  # both took part


def test_three_workers_one_killed_mid_question_answer_each_question_once(tmp_path, postgres_url):
    out = lambda i: tmp_path / f"w{i}" / "arith"  # noqa: E731  (one eval, named arith, in each worker's folder)
    open_database(postgres_url)  # its tables, before the workers come up
    workers = [start_worker(postgres_url, out(0), 0.3)]
    deadline = time.monotonic() + 120
    while held_by(postgres_url, workers[0].pid) == 0 and workers[0].poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers += [start_worker(postgres_url, out(i), 0.3) for i in (1, 2)]
    assert held_by(postgres_url, workers[0].pid) == 1, "worker 0 never held a question"
    workers[0].send_signal(signal.SIGKILL)  # mid-question: its question stays claimed until the lease runs out
    workers[0].wait()
    workers[0] = start_worker(postgres_url, out(0), 0.3)  # restarted: it joins again
    for w in workers:
        assert w.wait(300) == 0, w.stderr.read().decode()[-2000:]
    with engine_for(postgres_url).connect() as conn:
        keys = conn.execute(sa.text("select program, question from eval_rows")).all()
        retried = conn.execute(sa.text("select count(*) from eval_claims where attempts > 1")).scalar()
    assert len(keys) == len(set(keys)) == N * len(PROGRAMS)
    assert retried >= 1  # the killed worker's question, claimed again after its lease
    alone = one_worker_rows(tmp_path)
    for i in range(3):
        assert comparable(load_rows(out(i))) == alone
        assert all((out(i) / row.transcript).is_file() for row in load_rows(out(i)))


def test_a_worker_with_other_settings_or_a_folder_of_unshared_rows_is_refused(tmp_path, scripted):
    db = str(tmp_path / "work.sqlite3")
    SharedEval(db, "arith", {"n": 6})
    with pytest.raises(EvalError, match="other settings"):
        SharedEval(db, "arith", {"n": 7})
    model = scripted(script)
    evaluate(["cot"], "arithmetic", model, out=tmp_path / "alone", n=2, cache=False, progress=False)
    with pytest.raises(EvalError, match="no worker shares"):
        evaluate(["cot"], "arithmetic", model, out=tmp_path / "alone", n=2, cache=False, progress=False, shared=db)
    with pytest.raises(EvalError, match="lease"):
        SharedEval(db, "other", {}, lease_s=0)
