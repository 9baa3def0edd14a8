"""`madspy bench engine` runs end to end on the scripted provider (no timing targets here)."""

from __future__ import annotations

import json

from madspy.bench import engine_benchmark
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
    assert main(["bench", "engine", "--latency", "0.05", "--questions", "4", "--concurrency", "4", "--repeats", "1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["concurrency_efficiency"]["5x3"] > 0
    assert main(["bench", "engine", "--latency", "-1"]) == 2
