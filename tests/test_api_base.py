"""A debate through an OpenAI-compatible server: llama-cpp-python's server on loopback, reached via --api-base."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from madspy.cli import main
from madspy.core import local
from madspy.programs import Debate, DebateConfig, Transcript

pytestmark = pytest.mark.local_model
STATUSES = {"converged", "convergence_failed", "degraded", "undetermined", "failed"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def api_base(tmp_path_factory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server with the embedded SmolLM2 as model ``smollm2``, stopped afterwards.

    Its log goes to a file: a pipe nobody reads fills up and stalls the server.
    """
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with open(log, "w") as sink:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(local.resolve(local.DEFAULT_MODEL)),
                "--model_alias",
                "smollm2",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "4096",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                    assert json.load(reply)["data"][0]["id"] == "smollm2"
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp's server did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(30)


def test_a_debate_through_the_server_counts_usage_and_keeps_its_transcript(api_base, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "unused-by-a-local-server")
    config = DebateConfig.with_agents(
        2,
        model="openai/smollm2",
        api_base=api_base,
        rounds=2,
        max_tokens=48,
        cache=False,
        num_retries=0,
        stop={"stable_rounds": 0, "agreement_gate": None},
    )
    result = Debate(config)(question="What is 2 + 3?")
    calls = result.transcript.calls()
    assert result.status in STATUSES and calls and calls[0].role == "proposer"
    # Every call reached the server and was billed, whatever the small model answered.
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls), calls
    assert result.usage["prompt_tokens"] == sum(c.prompt_tokens for c in calls)
    assert Transcript.from_json(result.transcript.to_json()) == result.transcript


def test_run_takes_api_base_from_the_command_line(api_base, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "unused-by-a-local-server")
    code = main(
        [
            "run",
            "What is 6 * 7?",
            "--model",
            "openai/smollm2",
            "--api-base",
            api_base,
            "--agents",
            "1",
            "--rounds",
            "1",
            "--max-tokens",
            "32",
            "--no-cache",
            "--json",
            "--transcript",
            str(tmp_path / "t.json"),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] in STATUSES and out["usage"]["calls"] >= 1
    assert out["usage"]["prompt_tokens"] > 0
    assert Transcript.load(tmp_path / "t.json").config["api_base"] == api_base
