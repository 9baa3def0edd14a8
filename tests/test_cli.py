"""`madspy run` on good and bad input, through the same scripted LiteLLM path."""

from __future__ import annotations

import json

import pytest
from scripts import by_agent

from madspy.cli import main
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import save_program

PERSONAS = [a.persona for a in DebateConfig.default_agents(3)]


@pytest.fixture
def model(scripted):
    return scripted(by_agent(PERSONAS, [["391"], ["391"], ["401", "391"]]))


def run(capsys, *argv):
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_has_the_documented_keys(capsys, model):
    code, out, _ = run(capsys, "What is 17 * 23?", "--model", model, "--rounds", "2", "--no-cache", "--json")
    assert code == 0
    result = json.loads(out)
    assert {"answer", "confidence", "status", "stop_reason", "usage", "transcript"} <= result.keys()
    assert {"prompt_tokens", "completion_tokens", "calls"} <= result["usage"].keys()
    call = result["transcript"]["rounds"][0]["calls"][0]
    assert {"role", "agent", "prompt_tokens", "completion_tokens", "latency_s"} <= call.keys()
    assert result["answer"] == "391"


def test_show_prints_the_whole_debate(capsys, model, tmp_path):
    code, out, _ = run(
        capsys,
        "What is 17 * 23?",
        *("--model", model, "--critic", "--decisive-share", "1", "--show", "--no-cache"),
        *("--transcript", str(tmp_path / "t.json")),
    )
    assert code == 0
    for text in ("round 0", "round 1", "proposer", "critic", "resolver", "status:", "stop reason:", "tokens:"):
        assert text in out
    assert json.loads((tmp_path / "t.json").read_text())["rounds"]


def test_plain_output_is_the_answer_then_a_summary(capsys, model):
    code, out, err = run(
        capsys,
        "What is 17 * 23?",
        "--model",
        model,
        "--agents",
        "3",
        "--protocol",
        "majority",
        "--no-resolver",
        "--no-critic",
        "--no-cache",
    )
    assert code == 0 and out.strip() == "391"
    assert "status" in err and "tokens" in err


def test_file_mode_writes_one_result_per_line(capsys, model, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What is 17 * 23?"}\n\n{"question": "  "}\n')
    code, out, _ = run(capsys, "--file", str(questions), "--model", model, "--no-cache")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["line"] for r in rows] == [1, 3]
    assert rows[0]["answer"] == "391" and rows[1]["status"] == "invalid_input"


def test_program_file_is_loaded(capsys, model, tmp_path):
    path = tmp_path / "p.json"
    save_program(Debate(DebateConfig(model=model, rounds=1, protocol="majority", cache=False)), path)
    code, out, _ = run(capsys, "What is 17 * 23?", "--program", str(path), "--json")
    result = json.loads(out)
    assert code == 0 and len(result["transcript"]["rounds"]) == 1
    assert result["transcript"]["decision"]["protocol"] == "majority"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["   "], "the question is empty"),
        ([], "give a QUESTION or --file"),
        (["q", "--model", "nosuchprovider/x"], "unknown model 'nosuchprovider/x'"),
        (["q", "--model", "local/nope"], "unknown local model 'nope'"),
        (["q", "--model", "local//no/such/model.gguf"], "local model file not found"),
        (["q", "--program", "missing.json"], "program file not found"),
        (["q", "--agents", "0"], "--agents must be at least 1"),
        (["q", "--critic", "--no-critic"], "--critic and --no-critic contradict each other"),
        (["q", "--calculator", "--no-calculator"], "--calculator and --no-calculator contradict each other"),
        (["q", "--rounds", "0"], "--rounds (rounds): Input should be greater than or equal to 1"),
        (["q", "--time-budget", "0"], "--time-budget (budget_s): Input should be greater than 0"),
        (["q", "--set", "critic.deep_review_below=2"], "error: critic.deep_review_below: Input should be less than"),
        (["q", "--defenses", "spotlite=on"], "--defenses (defenses): expected on, off or NAME=on|off"),
        (["q", "--adversary-plant", "answer 7"], "--adversary-plant needs --adversary"),
        (["--file", "missing.jsonl"], "questions file not found"),
    ],
)
def test_bad_input_is_one_clear_line_and_nonzero_exit(capsys, argv, message, model):
    code, out, err = run(capsys, *argv, *([] if "--model" in argv else ["--model", model]))
    assert code == 2 and out == ""
    assert err.startswith("madspy: error:") and message in err
    assert len(err.strip().splitlines()) == 1


def test_malformed_program_file_runs_nothing(capsys, tmp_path, model):
    path = tmp_path / "p.json"
    path.write_text('{"format": "madspy.program/1", "config": {')
    code, out, err = run(capsys, "q", "--program", str(path))
    assert code == 2 and "not valid JSON" in err and out == ""


def test_malformed_questions_file_names_the_line(capsys, tmp_path, model):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "ok"}\n{"q": 1}\n')
    code, _, err = run(capsys, "--file", str(path), "--model", model)
    assert code == 2 and "q.jsonl:2" in err


def test_presets_run_the_baselines(capsys, scripted):
    model = scripted(lambda turn: {"reasoning": "x", "answer": "391", "confidence": 0.6, "evidence_ref": "none"})
    code, out, _ = run(capsys, "q", "--preset", "sc:4", "--model", model, "--json")
    rounds = json.loads(out)["transcript"]["rounds"]
    assert code == 0 and len(rounds) == 1 and len(rounds[0]["calls"]) == 4
    code, out, _ = run(capsys, "q", "--preset", "du-mad", "--model", model, "--json")
    rounds = json.loads(out)["transcript"]["rounds"]
    assert len(rounds) == 2 and {c["role"] for r in rounds for c in r["calls"]} == {"proposer", "reviser"}
    code, _, err = run(capsys, "q", "--preset", "sc:x", "--model", model)
    assert code == 2 and "not a preset" in err


@pytest.mark.parametrize(
    ("argv", "path", "value"),
    [
        (["--protocol", "free"], "protocol", "free"),
        (["--task-kind", "knowledge"], "task_kind", "knowledge"),
        (["--memory", "mask_lenient"], "memory", "mask_lenient"),
        (["--topology", "ring", "--neighbors", "1"], "neighbors", 1),
        (["--topology", "groups", "--group-size", "2"], "group_size", 2),
        (["--budget", "5000"], "budget_tokens", 5000),
        (["--time-budget", "2.5"], "budget_s", 2.5),
        (["--cascade", "0.9"], "cascade_gate", 0.9),
        (["--echo-reaction", "stop", "--echo-threshold", "0.3"], "echo", {"threshold": 0.3, "reaction": "stop"}),
        (["--agreement-gate", "0.7", "--stable-rounds", "2"], "stop", {"stable_rounds": 2, "agreement_gate": 0.7}),
        (["--isolated-critic", "--critic-checklist"], "critic.isolated", True),
        (["--referee-long"], "referee.cadence", "long"),
        ([], "critic.calculator", True),
        (["--no-calculator"], "critic.calculator", False),
        (["--answer-check"], "critic.answer_check", True),
        ([], "critic.quantity_check", True),
        (["--no-quantity-check"], "critic.quantity_check", False),
        ([], "critic.integer_check", False),
        (["--integer-check"], "critic.integer_check", True),
        (["--readable-check", "--doubt-below", "0.9"], "critic.readable_check", True),
        (["--doubt-below", "0.9"], "critic.doubt_below", 0.9),
        (["--referee", "--referee-every", "2"], "referee.every", 2),
        (["--set", "critic.deep_review_below=0.3", "--set", "summary_keep_rounds=2"], "critic.deep_review_below", 0.3),
    ],
)
def test_every_mechanism_is_reachable_from_run(capsys, model, tmp_path, argv, path, value):
    code, out, err = run(capsys, "q", "--model", model, "--no-cache", "--json", *argv)
    assert code == 0, err
    config = json.loads(out)["transcript"]["config"]
    for key in path.split("."):
        config = config[key]
    if isinstance(value, dict):
        assert {k: config[k] for k in value} == value
    else:
        assert config == value


def test_run_on_a_knowledge_task_kind_uses_the_debate_presets_knowledge_form(capsys, model):
    from madspy.programs.presets import NEUTRAL_PERSONA

    code, out, err = run(capsys, "q", "--model", model, "--no-cache", "--json", "--task-kind", "knowledge")
    config = json.loads(out)["transcript"]["config"]
    assert code == 0, err
    assert {a["persona"] for a in config["agents"]} == {NEUTRAL_PERSONA}
    assert config["protocol"] == "majority" and config["task_kind"] == "knowledge"
    code, out, _ = run(
        capsys, "q", "--model", model, "--no-cache", "--json", "--task-kind", "knowledge", "--agents", "4"
    )
    agents = json.loads(out)["transcript"]["config"]["agents"]
    assert len(agents) == 4 and NEUTRAL_PERSONA not in {a["persona"] for a in agents}  # what the user asked wins


def test_credit_ledger_option_and_run_budget(capsys, model, tmp_path):
    ledger = tmp_path / "credit.json"
    ledger.write_text('{"0": 3.0, "1": 0.1, "2": 0.1}')
    code, out, _ = run(
        capsys, "q", "--model", model, "--protocol", "credit", "--credit-ledger", str(ledger), "--rounds", "1", "--json"
    )
    assert code == 0 and json.loads(out)["transcript"]["decision"]["candidates"] == {"391": 3.1, "401": 0.1}
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "a"}\n{"question": "b"}\n{"question": "c"}\n')
    code, out, _ = run(capsys, "--file", str(questions), "--model", model, "--no-cache", "--run-budget", "10")
    statuses = [json.loads(line)["status"] for line in out.splitlines()]
    assert statuses == ["budget_exhausted"] * 3


def test_bad_set_and_misplaced_run_budget_are_refused(capsys, model):
    refused = run(capsys, "q", "--model", model, "--set", "nonsense")[2]
    assert refused.startswith("madspy: error: a setting is KEY=VALUE")
    code, _, err = run(capsys, "q", "--model", model, "--set", "rounds=-1")
    assert code == 2 and "rounds" in err
    code, _, err = run(capsys, "q", "--model", model, "--run-budget", "5")
    assert code == 2 and "--run-budget applies to --file" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--task", "arithmetic", "--programs", "cot", "--n", "1", "--max-tokens", "8", "--out", "{tmp}/ev"],
        ["compile", "--handwritten", "--task", "arithmetic", "--max-tokens", "8", "--out", "{tmp}/p.json"],
        ["run", "What is 2 + 2?", "--max-tokens", "8"],
    ],
)
def test_a_value_out_of_range_names_its_flag_and_range_in_every_command(capsys, model, tmp_path, argv):
    # Before, eval reported `unknown program 'cot'` for a max-tokens value pydantic refused.
    code = main([a.format(tmp=tmp_path) for a in argv] + ["--model", model])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert (
        err.strip() == "madspy: error: --max-tokens (max_tokens): Input should be greater than or equal to 16 (got 8)"
    )


def test_an_unknown_program_is_still_named_as_such(capsys, model, tmp_path):
    code = main(
        [
            "eval",
            "--task",
            "arithmetic",
            "--programs",
            "cot,sc:zero",
            "--n",
            "1",
            "--model",
            model,
            "--out",
            str(tmp_path / "ev"),
        ]
    )
    assert code == 2 and "unknown program 'sc:zero'" in capsys.readouterr().err


def test_every_setting_is_described_once_and_the_reference_is_generated_from_it():
    from pathlib import Path

    from madspy.cli import build_parser
    from madspy.cli.options import _fields, option_reference
    from madspy.programs.config import DebateConfig

    undescribed = [path for path, field in _fields(DebateConfig) if not field.description]
    assert not undescribed, f"describe these config fields (their Field description is their only help): {undescribed}"
    committed = (Path(__file__).resolve().parents[1] / "docs" / "options.md").read_text(encoding="utf-8")
    assert committed == option_reference(build_parser()), "regenerate it: madspy options > docs/options.md"
    assert "| `stop.agreement_gate` | `0.85` | `--agreement-gate` |" in committed
