"""`madspy serve`: real HTTP on localhost, auth, limits, streaming, restarts and metrics."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient
from scripts import critique, proposal, resolution
from servers import running

from madspy.cli import main
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import save_program
from madspy.server.app import ServeError, ServeSettings, check_bind, create_app

KEY = "s3cret"
AUTH = {"Authorization": f"Bearer {KEY}"}


def two_rounds(turn):
    """Agents agree on 391 at round 0 without confidence, then confidently at round 1."""
    if turn.role == "proposer":
        return proposal("391", confidence=0.5)
    if turn.role == "reviser":
        return proposal("391", confidence=0.95, evidence="critique 1")
    if turn.role == "critic":
        return critique(flawed=False)
    return resolution("391")


@pytest.fixture
def program(scripted, tmp_path):
    def make(latency_s: float = 0.0):
        model = scripted(two_rounds, latency_s=latency_s)
        path = tmp_path / f"{model.split('/')[-1]}.json"
        save_program(Debate(DebateConfig.with_agents(2, model=model, rounds=3, cache=False)), path)
        return path

    return make


def settings(tmp_path, **changes) -> ServeSettings:
    return ServeSettings(**{"store": tmp_path / "t.sqlite3", "api_key": KEY, **changes})


def wait_idle(client, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while client.get("/healthz").json()["running"] and time.monotonic() < deadline:
        time.sleep(0.02)


def test_http_round_trip_transcript_health_metrics_docs(program, tmp_path):
    with running(create_app(program(), settings(tmp_path))) as url, httpx.Client(base_url=url, headers=AUTH) as c:
        r = c.post("/v1/debate", json={"question": "What is 17 * 23?", "rounds": 2, "budget_tokens": 100000})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["answer"] == "391" and body["status"] == "converged"
        assert body["stop_reason"] == "confident_agreement" and body["usage"]["calls"] > 0
        t = c.get(f"/v1/transcripts/{body['transcript_id']}").json()
        assert t["question"] == "What is 17 * 23?" and len(t["rounds"]) == 2
        assert t["config"]["rounds"] == 2 and t["config"]["budget_tokens"] == 100000
        assert c.get("/v1/transcripts/nope").status_code == 404
        assert c.get("/healthz").json()["status"] == "ok"
        metrics = c.get("/metrics").text
        assert 'madspy_http_requests_total{code="200"} 3' in metrics
        assert 'madspy_http_requests_total{code="404"} 1' in metrics
        assert 'madspy_debates_total{status="converged"} 1' in metrics
        assert "madspy_http_request_seconds_count 4" in metrics and 'madspy_tokens_total{kind="prompt"}' in metrics
        assert "/v1/debate" in c.get("/openapi.json").json()["paths"]
        assert c.get("/docs").status_code == 200


def test_auth_bad_input_and_body_limits(program, tmp_path):
    client = TestClient(create_app(program(), settings(tmp_path, max_body=2000)))
    ask = {"question": "What is 17 * 23?"}
    assert client.post("/v1/debate", json=ask).status_code == 401
    wrong = client.post("/v1/debate", json=ask, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "API key" in wrong.json()["error"]
    assert client.get("/metrics").status_code == 401
    assert client.get("/healthz").status_code == 200  # liveness needs no key

    bad = client.post("/v1/debate", content=b'{"question": ', headers=AUTH | {"Content-Type": "application/json"})
    assert bad.status_code == 422 and bad.json()["error"] == "the request body is not valid JSON"
    extra = client.post("/v1/debate", json=ask | {"agents": 9}, headers=AUTH)
    assert extra.status_code == 422 and "agents" in extra.json()["error"]
    empty = client.post("/v1/debate", json={"question": "  "}, headers=AUTH)
    assert empty.status_code == 400 and empty.json() == {"error": "the question is empty"}

    big = {"question": "x" * 3000}
    assert client.post("/v1/debate", json=big, headers=AUTH).status_code == 413
    chunked = client.post("/v1/debate", content=iter([json.dumps(big).encode()]), headers=AUTH)  # no length
    assert chunked.status_code == 413 and "2000 bytes" in chunked.json()["error"]


def test_overload_429_and_timeout_504_keep_the_transcript(program, tmp_path):
    # 0.9 s: the one-step request (0.5 s) answers with 0.4 s to spare, and the second step starts before the limit
    app = create_app(program(latency_s=0.5), settings(tmp_path, max_concurrent=1, timeout_s=0.9))
    with running(app) as url, httpx.Client(base_url=url, headers=AUTH, timeout=10) as c:
        codes: list[int] = []
        quick = {"question": "2+2?", "rounds": 1, "protocol": "majority"}  # one step of 0.5 s calls

        def ask() -> None:
            codes.append(c.post("/v1/debate", json=quick).status_code)

        threads = [threading.Thread(target=ask) for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        assert sorted(codes) == [200, 429]

        slow = c.post("/v1/debate", json={"question": "2+2?"})  # three steps of 0.5 s calls > 0.9 s
        assert slow.status_code == 504 and "longer than 0.9s" in slow.json()["error"]
        wait_idle(c)
        stored = c.get(f"/v1/transcripts/{slow.json()['transcript_id']}").json()
        # The timeout is the debate's time budget: it started no third step, so its slot freed early.
        assert stored["status"] == "time_exhausted" and stored["decision"]["answer"] == "391"
        assert [call["role"] for r in stored["rounds"] for call in r["calls"]] == ["proposer"] * 2 + ["critic"] * 2


def test_request_time_budget_answers_with_a_status(program, tmp_path):
    app = create_app(program(latency_s=0.2), settings(tmp_path, timeout_s=30))
    with TestClient(app, headers=AUTH) as c:
        r = c.post("/v1/debate", json={"question": "2+2?", "budget_s": 0.1}).json()
        assert (r["answer"], r["status"], r["stop_reason"]) == ("391", "time_exhausted", "time_exhausted")
        assert c.get(f"/v1/transcripts/{r['transcript_id']}").json()["config"]["budget_s"] == 0.1
        unhurried = c.post("/v1/debate", json={"question": "2+2?"}).json()
        assert unhurried["status"] == "converged"
        assert c.get(f"/v1/transcripts/{unhurried['transcript_id']}").json()["config"]["budget_s"] == 30


def test_a_request_names_its_task_kind_and_an_auto_protocol_follows_it(program, tmp_path):
    with TestClient(create_app(program(), settings(tmp_path)), headers=AUTH) as c:

        def protocol(**fields) -> str:
            r = c.post("/v1/debate", json={"question": "17*23?", "rounds": 1, **fields}).json()
            return c.get(f"/v1/transcripts/{r['transcript_id']}").json()["decision"]["protocol"]

        assert protocol() == "judge"
        assert protocol(task_kind="reasoning") == "majority"
        assert protocol(task_kind="knowledge") == "judge"
        assert c.post("/v1/debate", json={"question": "q", "task_kind": "poetry"}).status_code == 422


def test_stream_round_events_and_client_leaving_mid_stream(program, tmp_path):
    app = create_app(program(latency_s=0.1), settings(tmp_path, max_concurrent=1))
    with running(app) as url, httpx.Client(base_url=url, headers=AUTH, timeout=10) as c:
        with c.stream("POST", "/v1/debate?stream=true", json={"question": "What is 17 * 23?"}) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            lines = list(r.iter_lines())
        kinds = [line[7:] for line in lines if line.startswith("event: ")]
        events = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
        assert kinds == ["round", "round", "result"]
        assert [e["index"] for e in events[:2]] == [0, 1] and events[0]["votes"] == {"0": "391", "1": "391"}
        assert events[-1]["answer"] == "391"
        assert c.get(f"/v1/transcripts/{events[-1]['transcript_id']}").status_code == 200

        with c.stream("POST", "/v1/debate/stream", json={"question": "What is 17 * 23?"}) as r:
            first = next(r.iter_lines())
        assert first == "event: round"  # the client hung up after the first event
        wait_idle(c)
        after = c.post("/v1/debate", json={"question": "What is 18 * 23?"})
        assert after.status_code == 200 and after.json()["answer"] == "391"
        assert 'madspy_debates_total{status="converged"} 3' in c.get("/metrics").text  # the abandoned one too


def test_restart_keeps_transcripts(program, tmp_path):
    path, config = program(), settings(tmp_path)
    tid = TestClient(create_app(path, config)).post("/v1/debate", json={"question": "17*23?"}, headers=AUTH)
    tid = tid.json()["transcript_id"]
    again = TestClient(create_app(path, config)).get(f"/v1/transcripts/{tid}", headers=AUTH)
    assert again.status_code == 200 and again.json()["decision"]["answer"] == "391"


def test_no_key_only_on_loopback(program, tmp_path, capsys, monkeypatch):
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("0.0.0.0", "key")
    with pytest.raises(ServeError, match="without an API key"):
        check_bind("0.0.0.0", None)
    monkeypatch.delenv("MADSPY_API_KEY", raising=False)
    assert main(["serve", "--program", str(program()), "--host", "0.0.0.0", "--db", str(tmp_path / "d")]) == 2
    assert "refusing to serve on 0.0.0.0 without an API key" in capsys.readouterr().err
    open_app = TestClient(create_app(program(), settings(tmp_path, api_key=None)))
    assert open_app.post("/v1/debate", json={"question": "17*23?"}).status_code == 200
