"""Robustness: injected faults, a killed eval or server, a server under load, and bad input of every kind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from scripts import proposal

from madspy.bench.faults import fault_benchmark
from madspy.bench.load import API_KEY, _free_port, start_server
from madspy.cli import main
from madspy.core.errors import InputError, ProgramFileError, SearchError
from madspy.evaluation import load_rows
from madspy.optimizers.search import search
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import content_digest, load_program, save_program
from madspy.programs.credit import CreditLedger

TESTS = Path(__file__).resolve().parent
AUTH = {"Authorization": f"Bearer {API_KEY}"}


def test_injected_faults_never_crash_a_debate_or_leave_it_without_a_status():
    result = fault_benchmark(debates=25, fail_rate=0.3, seed=1)
    assert result["crashed"] == 0 and result["without_status"] == 0 and result["debates"] == 25
    assert sum(result["statuses"].values()) == 25 and result["calls_failed"] > 0
    assert set(result["faults_injected"]) == {"timeout", "rate_limit", "garbage", "truncated"}
    everything = fault_benchmark(debates=3, fail_rate=1.0, seed=2)  # no call succeeds
    assert everything["crashed"] == 0 and everything["statuses"] == {"failed": 3}


def test_bench_faults_and_serve_print_the_documented_keys(capsys):
    assert main(["bench", "faults", "--debates", "4", "--json"]) == 0
    faults = json.loads(capsys.readouterr().out)
    assert {"debates", "crashed", "without_status", "statuses", "calls_failed"} <= faults.keys()
    assert main(["bench", "serve", "--slots", "2", "--requests", "12", "--latency", "0.05", "--json"]) == 0
    load = json.loads(capsys.readouterr().out)
    keys = {
        "requests",
        "ok",
        "rejected_429",
        "errors_5xx",
        "lost_transcripts",
        "p50_ms",
        "p99_ms",
        "rss_mb_start",
        "rss_mb_end",
    }
    assert keys <= load.keys() and load["requests"] == 12 and load["clients"] == 8
    assert load["ok"] + load["gave_up"] + load["errors_5xx"] == 12 and load["ok"] >= 2
    assert load["lost_transcripts"] == 0 and load["rss_mb_end"] > 0


EVAL = """
import sys
sys.path.insert(0, {tests!r})
from madspy.testing import register_script
from madspy.evaluation import evaluate
from scripts import proposal
model = register_script("slow", lambda turn: proposal("7"), latency_s=0.05)
evaluate(["cot", "sc:3"], "arithmetic", model, out={out!r}, n=12, concurrency=2, cache=False, progress=False)
"""


def test_an_eval_killed_mid_run_resumes_without_losing_or_duplicating_a_row(tmp_path):
    out = tmp_path / "ev"
    code = EVAL.format(tests=str(TESTS), out=str(out))
    killed = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    rows = out / "rows.jsonl"
    while time.monotonic() < deadline and (not rows.is_file() or len(rows.read_bytes().splitlines()) < 5):
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    done_before = len(load_rows(out))
    assert 5 <= done_before < 24  # killed part-way
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, capture_output=True)
    keys = [(r.program, r.id) for r in load_rows(out)]
    assert len(keys) == len(set(keys)) == 24  # every row once


def test_the_transcript_store_survives_a_killed_server(tmp_path):
    db, port = tmp_path / "transcripts.sqlite3", _free_port()
    server = start_server(port, 0.01, 2, 10.0, db)
    try:
        ids = [
            httpx.post(
                f"http://127.0.0.1:{port}/v1/debate",
                headers=AUTH,
                timeout=30,
                json={"question": f"What is 17 * 23? ({i})"},
            ).json()["transcript_id"]
            for i in range(3)
        ]
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    port = _free_port()
    again = start_server(port, 0.01, 2, 10.0, db)
    try:
        found = [httpx.get(f"http://127.0.0.1:{port}/v1/transcripts/{tid}", headers=AUTH).status_code for tid in ids]
    finally:
        again.terminate()
        again.wait(10)
    assert found == [200, 200, 200]


def test_a_timed_out_request_starts_no_new_call_and_frees_its_slot(tmp_path):
    port = _free_port()
    # 0.7 s per call, 0.6 s per request: round 0 alone outlasts the deadline, whatever the stop gates decide.
    server = start_server(port, 0.7, 1, 0.6, tmp_path / "t.sqlite3")
    try:
        url = f"http://127.0.0.1:{port}"
        r = httpx.post(f"{url}/v1/debate", headers=AUTH, json={"question": "What is 2 * 2?"}, timeout=30)
        assert r.status_code == 504
        deadline = time.monotonic() + 10
        while httpx.get(f"{url}/healthz").json()["running"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert httpx.get(f"{url}/healthz").json()["running"] == 0  # the slot is free again
        stored = httpx.get(f"{url}/v1/transcripts/{r.json()['transcript_id']}", headers=AUTH).json()
        calls = [c for rnd in stored["rounds"] for c in rnd["calls"]]
        started = [c for c in calls if c["error"] is None or not c["error"].startswith("not started")]
        assert stored["status"] == "time_exhausted" and started
        # Round 0's calls started inside the 0.6 s; nothing after them (critique, revisions) may start.
        assert all(c["started_s"] < 0.6 for c in started) and "reviser" not in {c["role"] for c in calls}
    finally:
        server.terminate()
        server.wait(10)


# -- bad input -----------------------------------------------------------------------


@pytest.fixture
def model(scripted):
    return scripted(lambda turn: proposal("391"))


def run(capsys, *argv):
    code = main(list(argv))
    _, err = capsys.readouterr()
    return code, err


def test_a_question_over_the_size_limit_or_with_control_characters_is_one_clear_line(capsys, model):
    code, err = run(capsys, "run", "x" * 20_001, "--model", model)
    assert code == 2 and err.strip() == "madspy: error: the question is 20001 characters; madspy takes at most 20000"
    code, err = run(capsys, "run", "What is 2\x07 + 2?", "--model", model)
    assert code == 2 and "control character (U+0007 at position 9)" in err and len(err.splitlines()) == 1


def test_a_questions_file_with_invalid_utf8_names_the_line_and_runs_nothing(capsys, model, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"question": "ok"}\n{"question": "caf\xe9"}\n')
    code, err = run(capsys, "run", "--file", str(path), "--model", model)
    assert code == 2 and f"{path}:2 is not valid UTF-8" in err


def test_http_bodies_that_are_not_utf8_or_have_wrong_types_get_a_4xx_naming_the_problem(tmp_path):
    from fastapi.testclient import TestClient

    from madspy.server.app import ServeSettings, create_app
    from madspy.testing import register_script

    served = register_script("robust-http", lambda turn: proposal("391"))
    debate = Debate(DebateConfig.with_agents(1, model=served, rounds=1))
    with TestClient(create_app({"d": debate}, ServeSettings(store=tmp_path / "t.sqlite3", api_key=None))) as c:
        raw = c.post("/v1/debate", content=b'{"question": "caf\xe9"}', headers={"Content-Type": "application/json"})
        assert raw.status_code in (400, 422) and "JSON" in raw.json()["error"]
        typed = c.post("/v1/debate", json={"question": 5})
        assert typed.status_code == 422 and "question" in typed.json()["error"]
        rounds = c.post("/v1/debate", json={"question": "2+2?", "rounds": "many"})
        assert rounds.status_code == 422 and "rounds" in rounds.json()["error"]
        control = c.post("/v1/debate", json={"question": "2+2?\u0000"})
        assert control.status_code == 400 and "control character" in control.json()["error"]


def _rewrite(path: Path, change) -> None:
    """Change a saved program's body and give it the hash of the new body (as a careless tool would)."""
    document = json.loads(path.read_text())
    body = change({k: v for k, v in document.items() if k != "sha256"})
    path.write_text(json.dumps({**body, "sha256": content_digest(body)}))


def test_artifacts_from_another_major_version_or_that_are_not_programs_are_refused(tmp_path, model):
    path = tmp_path / "p.json"
    save_program(Debate(DebateConfig.with_agents(1, model=model)), path)
    other = tmp_path / "other.json"
    other.write_text(path.read_text())
    _rewrite(
        other, lambda b: b | {"manifest": b["manifest"] | {"versions": b["manifest"]["versions"] | {"madspy": "9.0.0"}}}
    )
    with pytest.raises(ProgramFileError, match=r"saved by madspy 9\.0\.0"):
        load_program(other)
    for broken in (
        {"roles": ["propose", "critique"]},
        {"roles": {"critic": {"instructions": 3, "demos": []}}},
        {"config": "debate"},
    ):
        _rewrite(path, lambda b, broken=broken: b | broken)
        with pytest.raises(ProgramFileError):
            load_program(path)
    code = main(["run", "2+2?", "--program", str(path)])
    assert code == 2


def test_a_corrupt_credit_ledger_or_study_file_is_one_clear_line(tmp_path, capsys, model):
    ledger = tmp_path / "credit.json"
    ledger.write_text("{not json")
    with pytest.raises(InputError, match="is not a JSON object"):
        CreditLedger(ledger).weights()
    study = tmp_path / "study.db"
    study.write_bytes(os.urandom(4096))
    with pytest.raises(SearchError, match="cannot open study 's'"):
        search("arithmetic", model, trials=1, storage=f"sqlite:///{study}", study="s", train=1)
    code, err = run(
        capsys,
        "search",
        "--task",
        "arithmetic",
        "--model",
        model,
        "--trials",
        "1",
        "--train",
        "1",
        "--storage",
        f"sqlite:///{study}",
        "--study",
        "s",
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot open study" in err
