"""`madspy bench engine` runs end to end on the scripted provider (no timing targets here)."""

from __future__ import annotations

import json

import pytest

from madspy.bench.engine import engine_benchmark
from madspy.cli import main


def test_engine_benchmark_reports_efficiency_overhead_and_throughput():
    result = engine_benchmark(latency_s=0.05, questions=8, concurrency=4, repeats=1)
    assert {"concurrency_efficiency", "overhead_ms_per_call", "throughput_qps", "ideal_qps"} <= result.keys()
    assert set(result["concurrency_efficiency"]) == {"3x2", "5x3"}
    assert all(e > 0 for e in result["concurrency_efficiency"].values())
    # critic every round and the resolver at the end: 2 steps per round + 1
    assert result["debates"]["3x2"]["steps"] == 5 and result["debates"]["5x3"]["steps"] == 7
    assert result["debates"]["3x2"]["calls"] == 3 * 2 * 2 + 1
    assert result["ideal_qps"] == 8 / (2 * 0.05) and result["throughput_qps"] > 0


def test_cli_bench_prints_json(capsys):
    assert (
        main(
            [
                "bench",
                "engine",
                "--latency",
                "0.05",
                "--questions",
                "4",
                "--concurrency",
                "4",
                "--repeats",
                "1",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["concurrency_efficiency"]["5x3"] > 0
    assert main(["bench", "engine", "--latency", "-1"]) == 2


@pytest.mark.local_model
def test_bench_local_times_reuse_against_no_reuse_on_the_same_questions(capsys):
    assert main(["bench", "local", "--questions", "2", "--programs", "cot", "--max-tokens", "48", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {
        "prompt_tokens_per_s",
        "generation_tokens_per_s",
        "prefix_hit_rate",
        "debate_wall_s",
        "speedup",
        "same_answers",
    } <= result.keys()
    assert set(result["debate_wall_s"]) == {"reuse", "no_reuse"} and min(result["debate_wall_s"].values()) > 0
    cot = result["programs"]["cot"]
    assert len(cot["answers"]["reuse"]) == len(cot["answers"]["no_reuse"]) == 2
    assert result["same_answers"] == (cot["answers"]["reuse"] == cot["answers"]["no_reuse"])
    # The second question's cot prompt repeats the first one's system prompt: its context still holds it.
    assert 0 < result["prefix_hit_rate"] < 1 and cot["rss_mb_per_context"] > 0


def test_bench_local_refuses_a_remote_model_and_unknown_modes(capsys):
    assert main(["bench", "local", "--model", "openai/gpt-4o-mini"]) == 2
    assert "local/..." in capsys.readouterr().err
    assert main(["bench", "local", "--compare", "fastest"]) == 2
    assert "--compare takes" in capsys.readouterr().err
