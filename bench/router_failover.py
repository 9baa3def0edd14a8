"""An eval through a LiteLLM Router over two llama.cpp servers, one of them stopped mid-eval.

Starts two ``llama_cpp.server`` processes serving one GGUF (default: the embedded SmolLM2) as model
``served``, writes a router file with both as deployments of ``served``, and runs ``madspy eval --router``
on ``router/served``. Once ``--kill-after`` rows are written, server A is killed (SIGKILL, mid-request).
Reports the rows, the failed ones (none is the goal), and which deployment answered each call before and
after the kill (by when each row's transcript was written).

Usage (from the repo root; one llama.cpp job on this machine at a time):
    python bench/router_failover.py --n 12 --kill-after 3 --out bench/runs/router-failover
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

from madspy.core import local
from madspy.evaluation import load_rows
from madspy.programs.transcript import Transcript


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(gguf: Path, port: int, log: Path) -> subprocess.Popen:
    args = ["--model", str(gguf), "--model_alias", "served", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--n_ctx", "4096", "--n_threads", "1"]  # two servers on two cores
    with open(log, "w") as sink:
        server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", *args], stdout=sink, stderr=sink)
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server on {port} did not start: {log.read_text()[-1500:]}") from None
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gguf", type=Path, default=local.resolve(local.DEFAULT_MODEL))
    parser.add_argument("--task", default="arithmetic")
    parser.add_argument("--programs", default="plain")
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--kill-after", type=int, default=3, help="rows written before server A is stopped")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    ports = {"a": free_port(), "b": free_port()}
    servers = {name: start_server(args.gguf, port, args.out / f"server-{name}.log") for name, port in ports.items()}
    router = args.out / "router.yaml"
    deployments = [
        f"  - model_name: served\n    litellm_params: {{model: openai/served, api_base: 'http://127.0.0.1:{port}/v1', "
        f"api_key: none}}\n    model_info: {{id: server-{name}}}"
        for name, port in ports.items()
    ]
    settings = "router_settings: {num_retries: 3, allowed_fails: 0, cooldown_time: 600, retry_after: 0}"
    router.write_text("model_list:\n" + "\n".join(deployments) + "\n" + settings + "\n")
    folder = args.out / "eval"
    command = ["madspy", "eval", "--router", str(router), "--task", args.task, "--model", "router/served"]
    command += [
        "--programs",
        args.programs,
        "--n",
        str(args.n),
        "--no-cache",
        "--concurrency",
        "2",
        "--out",
        str(folder),
    ]
    started = time.monotonic()
    env = os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with open(args.out / "eval.log", "w") as sink:
        run = subprocess.Popen(command, stdout=sink, stderr=sink, env=env)
        killed_at = None
        while run.poll() is None:
            rows = folder / "rows.jsonl"
            done = len(rows.read_text().splitlines()) if rows.is_file() else 0
            if killed_at is None and done >= args.kill_after:
                servers["a"].send_signal(signal.SIGKILL)  # mid-request: its calls in flight fail
                servers["a"].wait(30)
                killed_at, killed_epoch = time.monotonic() - started, time.time()
            time.sleep(0.5)
    servers["b"].terminate()
    servers["b"].wait(30)
    rows = load_rows(folder)
    by_phase: dict[str, Counter] = {"before": Counter(), "after": Counter()}
    for row in rows:
        for rnd in Transcript.load(folder / row.transcript).rounds:
            for call in rnd.calls:
                written = (folder / row.transcript).stat().st_mtime
                phase = "before" if killed_at is None or written < killed_epoch else "after"
                by_phase[phase][call.deployment or ("failed" if call.error else "unknown")] += 1
    report = {
        "command": " ".join(command),
        "eval_exit_code": run.returncode,
        "rows": len(rows),
        "failed_rows": sum(r.answer is None or r.usage.failed_calls > 0 for r in rows),
        "server_a_stopped_after_s": round(killed_at, 1) if killed_at else None,
        "calls_by_deployment": {phase: dict(c) for phase, c in by_phase.items()},
        "wall_s": round(time.monotonic() - started, 1),
    }
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
