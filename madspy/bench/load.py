"""Server under load: ``madspy serve`` on loopback with a scripted slow model, hit by concurrent clients.

The server runs in its own process (as ``madspy serve`` would, on a scripted model that sleeps
``latency_s`` per call), with ``slots`` debate slots and a ``timeout_s`` per request. ``clients``
threads send ``requests`` debate requests in all, each retried after the server's ``Retry-After``
when it answers 429 (at most ``attempts`` times, as a well-behaved client would); the benchmark
counts answers, 429s, 5xx, requests that gave up, the transcripts it cannot fetch afterwards (every
200 and 504 names one), latency percentiles of the answered requests (their retries included) and
the server's resident memory, then stops the server. With ``replicas`` > 1, that many servers share one
transcript store (``store``: a PostgreSQL URL), the clients are spread over them, and a transcript is
lost unless every replica reads it.

Example::

    from madspy.bench.load import load_benchmark
    load_benchmark(clients=16, requests=64, slots=4)  # {'requests': 64, 'ok': ..., 'rejected_429': ..., ...}
"""

from __future__ import annotations

import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from madspy.core.errors import BackendError, InputError

API_KEY = "bench-secret"
# The server process: a scripted slow model behind a default debate, served like `madspy serve` does.
SERVER = """
import sys
from madspy.programs.debate import Debate
from madspy.programs.presets import preset
from madspy.server.app import ServeSettings, serve
from madspy.testing import register_script

port, latency, slots, timeout, db, key = sys.argv[1:]
reply = {"reasoning": "17*23=391", "answer": "391", "confidence": 0.9, "evidence_ref": "none",
         "issues": [], "verdict": "sound", "final_answer": "391", "verification": "ok", "status": "converged"}
model = register_script("load", lambda turn: dict(reply), latency_s=float(latency))
program = Debate(preset("debate-v1", model=model, rounds=2, protocol="majority", cache=False))
settings = ServeSettings(port=int(port), store=db, max_concurrent=int(slots), timeout_s=float(timeout), api_key=key)
serve({"debate": program}, settings)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def start_server(port: int, latency_s: float, slots: int, timeout_s: float, db: str | Path) -> subprocess.Popen:
    """The server process, once it answers ``/healthz``."""
    args = [sys.executable, "-c", SERVER, str(port), str(latency_s), str(slots), str(timeout_s), str(db), API_KEY]
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.1)
        if server.poll() is not None:
            break
    server.kill()
    raise BackendError("the benchmark's server did not start")


def load_benchmark(
    clients: int = 16,
    requests: int = 64,
    slots: int = 4,
    latency_s: float = 0.1,
    timeout_s: float = 2.0,
    attempts: int = 10,
    replicas: int = 1,
    store: str | None = None,
) -> dict[str, Any]:
    """``requests`` debates from ``clients`` concurrent clients against ``replicas`` servers of ``slots`` slots
    each, sharing the transcript ``store`` (default: a new SQLite file); client i talks to replica i mod
    ``replicas``, as a round-robin load balancer would send it, and every transcript is fetched from every
    replica afterwards."""
    if min(clients, requests, slots, replicas) < 1 or latency_s < 0 or timeout_s <= 0:
        raise InputError("--clients, --requests, --slots and --replicas must be >= 1, --latency >= 0, --timeout > 0")
    with tempfile.TemporaryDirectory() as tmp:
        ports = [_free_port() for _ in range(replicas)]
        db = store or Path(tmp) / "transcripts.sqlite3"
        servers = [start_server(port, latency_s, slots, timeout_s, db) for port in ports]
        try:
            return _measure(servers, ports, clients, requests, slots, timeout_s, attempts) | {
                "replicas": replicas,
                "store": "sqlite" if store is None else store.split(":", 1)[0],
            }
        finally:
            for server in servers:
                server.send_signal(signal.SIGTERM)
            for server in servers:
                try:
                    server.wait(30)
                except subprocess.TimeoutExpired:
                    server.kill()


def _measure(
    servers: list[subprocess.Popen],
    ports: list[int],
    clients: int,
    requests: int,
    slots: int,
    timeout_s: float,
    attempts: int,
) -> dict[str, Any]:
    bases, headers = [f"http://127.0.0.1:{port}" for port in ports], {"Authorization": f"Bearer {API_KEY}"}
    rss_start = sum(rss_mb(server.pid) for server in servers)
    codes: list[int] = []  # every response, 429s included
    latencies: list[float] = []  # per answered request, from its first attempt to its last response
    gave_up: list[int] = []
    ids: list[str] = []
    lock, left = threading.Lock(), iter(range(requests))

    def client(base: str) -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=timeout_s + 30) as http:
            while True:
                with lock:
                    i = next(left, None)
                if i is None:
                    return
                started = time.perf_counter()
                for _ in range(attempts):
                    r = http.post("/v1/debate", json={"question": f"What is 17 * 23? ({i})"})
                    with lock:
                        codes.append(r.status_code)
                    if r.status_code != 429:
                        break
                    time.sleep(min(5.0, float(r.headers.get("retry-after") or 1)))
                body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
                with lock:
                    (gave_up if r.status_code == 429 else latencies).append(
                        i if r.status_code == 429 else (time.perf_counter() - started) * 1000
                    )
                    if body.get("transcript_id"):
                        ids.append(body["transcript_id"])

    threads = [threading.Thread(target=client, args=(bases[i % len(bases)],)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lost = set()  # transcripts some replica cannot read
    for base in bases:
        with httpx.Client(base_url=base, headers=headers, timeout=10) as http:
            deadline = time.monotonic() + timeout_s + 30  # timed-out debates finish their step and are stored
            while http.get("/healthz").json()["running"] and time.monotonic() < deadline:
                time.sleep(0.05)
            lost |= {tid for tid in ids if http.get(f"/v1/transcripts/{tid}").status_code != 200}
    ordered = sorted(latencies) or [float("nan")]
    return {
        "requests": requests,
        "clients": clients,
        "slots": slots,
        "ok": codes.count(200),
        "rejected_429": codes.count(429),
        "errors_5xx": sum(500 <= c < 600 for c in codes),
        "of_which_timeouts_504": codes.count(504),
        "other": sum(c not in (200, 429) and not 500 <= c < 600 for c in codes),
        "gave_up": len(gave_up),
        "lost_transcripts": len(lost),
        "p50_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1),
        "rss_mb_start": rss_start,
        "rss_mb_end": sum(rss_mb(server.pid) for server in servers),
    }
