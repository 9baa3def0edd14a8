"""Compiling debate programs with DSPy optimizers, on scripted models (offline, deterministic)."""

from __future__ import annotations

import json
import re

import dspy
import pytest
from scripts import proposal

from madspy.cli import main
from madspy.core.errors import InputError
from madspy.data import get_task
from madspy.optimizers.compile import (
    CompileError,
    base_config,
    compile,
    compile_program,
    dev_verdict,
    kept_program,
    plan_compile,
    random_demo_control,
)
from madspy.optimizers.composite import CompositeMetric, Weights, critic_quality
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import load_program, program_state, save_program
from madspy.testing import Turn, calls_of

PERSONAS = [a.persona for a in DebateConfig.default_agents(2)]
TWO_AGENTS = [a.model_dump() for a in DebateConfig.default_agents(2)]
ARITHMETIC = get_task("arithmetic")


def _value(turn: Turn) -> int:
    text = turn.inputs.get("question") or turn.inputs.get("proposal", "")
    found = re.search(r"of ([\d+*-]+)\?", text)
    return eval(found.group(1)) if found else 0


def solver(turn: Turn):
    """Right answers, except the skeptic's first one unless its instructions were 'Improved'."""
    value = _value(turn)
    if turn.role in ("proposer", "reviser"):
        system = turn.messages[0]["content"]
        wrong = turn.role == "proposer" and "skeptic" in turn.inputs["persona"] and "Improved" not in system
        return proposal(str(value + 1 if wrong else value), 0.8, "critique 1")
    if turn.role == "critic":
        return {"reasoning": "checked each step", "issues": [], "verdict": "sound"}
    if turn.role == "resolver":
        return {"final_answer": str(value), "confidence": 0.9, "verification": "ok", "status": "converged"}
    if turn.role == "mask":
        return {"reasoning": "checked", "label": "YES"}
    return {name: f"Improved instruction: check every step ({name})." for name in turn.outputs}


@pytest.fixture
def model(scripted):
    return scripted(solver)


def small(model: str) -> DebateConfig:
    """Two agents, two rounds, and the judge deciding (so every role runs, whatever the task's kind)."""
    return base_config(model, "debate-v1", agents=TWO_AGENTS, rounds=2, protocol="judge")


def test_an_auto_protocol_is_compiled_and_saved_with_the_task_kind(model, tmp_path):
    result = compile_program(
        "arithmetic",
        model,
        "bootstrap",
        train=2,
        dev=1,
        seed=0,
        config=base_config(model, agents=TWO_AGENTS, rounds=2),
        out=tmp_path / "a.json",
    )
    assert load_program(tmp_path / "a.json").config.task_kind == "reasoning"
    assert result.debate.config.decision_protocol == "majority"
    assert "resolver" not in {t.role for t in calls_of(model)}  # majority needs no judge


def test_bootstrap_puts_demos_on_every_role_that_ran_and_the_artifact_round_trips(model, tmp_path):
    out = tmp_path / "arith.json"
    result = compile_program(
        "arithmetic", model, "bootstrap", train=3, dev=2, seed=1, config=small(model), out=out, keep="compiled"
    )
    demos = {name: len(p.demos) for name, p in result.debate.named_predictors()}
    # Which of a trace's proposer calls DSPy picks is seeded by the demos' hash; the skeptic's wrong ones are dropped.
    demos["proposer"] += result.manifest["demos_dropped"].get("proposer", 0)
    assert {k: demos[k] for k in ("proposer", "reviser", "critic", "resolver", "mask")} == {
        "proposer": 2,
        "reviser": 2,
        "critic": 2,
        "resolver": 2,
        "mask": 0,
    }  # this config runs no mask
    loaded = load_program(out)
    assert program_state(loaded) == json.loads(json.dumps(program_state(result.debate)))
    manifest = loaded.manifest
    assert manifest["task"] == "arithmetic" and manifest["optimizer"]["name"] == "bootstrap"
    assert set(manifest["dev"]) == {"compiled", "handwritten", "random_demos"} and manifest["dev"]["compiled"]["n"] == 2
    control = manifest["dev"]["random_demos"]
    assert control["k"] == len(loaded.proposer.demos) and 0 <= control["accuracy_low"] <= control["accuracy_high"] <= 1
    assert manifest["dev_verdict"]["verdict"] == "tie"  # two dev questions cannot tell anything apart
    assert not set(manifest["data"]["train_ids"]) & set(manifest["data"]["dev_ids"])
    assert "versions" in manifest and "created" in manifest
    assert manifest["calls"] == len(calls_of(model)) <= manifest["estimated_calls"]  # made, dev debates included


def test_bootstrap_keeps_no_wrong_answer_from_a_debate_that_ended_right(scripted):
    """The first of three agents always proposes a wrong answer; the two others outvote it."""
    analyst = DebateConfig.default_agents(3)[0].persona

    def first_agent_wrong(turn: Turn):
        if turn.role == "proposer":
            wrong = turn.inputs["persona"] == analyst
            return proposal(str(_value(turn) + wrong), 0.8, "critique 1")
        return solver(turn)

    model = scripted(first_agent_wrong)
    result = compile_program("arithmetic", model, "bootstrap", train=2, dev=0, seed=1, config=base_config(model))
    # bootstrap took two proposer calls of right debates (which, DSPy seeds by the demos' hash): the analyst's are wrong
    demos = result.debate.proposer.demos
    assert (
        result.manifest["demos_dropped"]["proposer"] >= 1
        and len(demos) + result.manifest["demos_dropped"]["proposer"] == 2
    )
    assert all(
        int(d["answer"]) == _value(Turn(model, "proposer", {"question": d["question"]}, [], None)) for d in demos
    )


def test_a_second_compile_with_the_same_seed_is_answered_from_the_cache(model, tmp_path):
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(tmp_path / "cache"))
    first = compile_program("arithmetic", model, "bootstrap", train=2, dev=1, seed=3, config=small(model))
    made = len(calls_of(model))
    second = compile_program("arithmetic", model, "bootstrap", train=2, dev=1, seed=3, config=small(model))
    assert made > 0 and len(calls_of(model)) == made
    # the manifest counts the calls made, cache hits included: the replay made as many
    assert first.manifest["calls"] == second.manifest["calls"] >= made
    assert [len(p.demos) for p in second.debate.predictors()] == [len(p.demos) for p in first.debate.predictors()]


def test_gepa_adopts_a_better_instruction_from_a_scripted_reflection_model(model):
    result = compile_program(
        "arithmetic", model, "gepa", train=3, dev=2, seed=0, config=small(model), settings={"max_metric_calls": 9}
    )
    assert "Improved" in result.optimized.proposer.signature.instructions
    assert result.dev["compiled"]["accuracy"] == 1.0


def test_mipro_runs_with_a_scripted_prompt_model(model):
    result = compile_program(
        "arithmetic",
        model,
        "mipro",
        train=3,
        dev=1,
        seed=0,
        config=small(model),
        settings={"num_candidates": 2, "num_trials": 2},
    )
    assert result.dev["compiled"]["n"] == 1 and result.manifest["optimizer"]["name"] == "mipro"


@pytest.mark.parametrize(
    "optimizer, settings",
    [("bootstrap-rs", {"num_candidate_programs": 1}), ("simba", {"bsize": 2, "num_candidates": 1, "max_steps": 1})],
)
def test_random_search_and_simba_run_on_a_debate(model, optimizer, settings):
    result = compile_program(
        "arithmetic", model, optimizer, train=2, dev=1, seed=0, config=small(model), settings=settings
    )
    assert result.dev["compiled"]["accuracy"] == 1.0
    assert all(p.lm is None for p in result.debate.predictors())  # the debate routes LMs per role


def test_call_estimate_and_refusal_above_max_calls(model):
    config = small(model)  # 2 agents x 2 rounds: 4 proposer + 4 critic + 1 resolver calls
    plan = plan_compile("bootstrap", config, 8, 8)
    assert plan.calls_per_debate == 9 and plan.calls == (8 + 3 * 8) * 9  # compiled, hand-written, random demos on dev
    with pytest.raises(CompileError, match="raise --max-calls to at least 288"):
        compile_program("arithmetic", model, "bootstrap", train=8, dev=8, config=config, max_calls=100)
    assert calls_of(model) == []


def test_cli_prints_the_estimate_and_refuses(model, capsys, tmp_path):
    code = main(
        [
            "compile",
            "--task",
            "arithmetic",
            "--model",
            model,
            "--optimizer",
            "bootstrap",
            "--agents",
            "2",
            "--rounds",
            "2",
            "--critic",
            "--max-calls",
            "10",
            "--out",
            str(tmp_path / "x.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "estimated LM calls: 288" in err and "exceeds --max-calls 10" in err
    assert not (tmp_path / "x.json").exists()


def test_cli_handwritten_program_takes_roles_from_another_program_file(model, capsys, tmp_path):
    source, voting = tmp_path / "debate.json", tmp_path / "sc3.json"
    debate = Debate(DebateConfig.with_agents(2, model=model, rounds=2, protocol="majority"))
    debate.proposer.demos = [dspy.Example(question="1+1?", persona="p", reasoning="1+1=2", answer="2")]
    save_program(debate, source)
    common = ["compile", "--handwritten", "--task", "arithmetic", "--model", model, "--preset", "sc:3"]
    assert main([*common, "--roles", "proposer", "--roles-from", str(source), "--out", str(voting)]) == 0
    program = load_program(voting)
    assert [d.answer for d in program.proposer.demos] == ["2"] and len(program.config.agents) == 3
    assert program.manifest["roles_from"]["roles"] == ["proposer"]
    capsys.readouterr()
    assert main([*common, "--roles", "proposer", "--out", str(tmp_path / "x.json")]) == 2
    assert "needs --roles-from" in capsys.readouterr().err
    assert main([*common[:1], *common[2:], "--roles-from", str(source), "--out", str(tmp_path / "x.json")]) == 2
    assert "--roles-from goes with --handwritten and --roles" in capsys.readouterr().err
    assert main([*common, "--roles", "judge", "--roles-from", str(source), "--out", str(tmp_path / "x.json")]) == 2
    assert "got judge" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def test_cli_compiled_and_handwritten_programs_run_and_evaluate(model, capsys, tmp_path):
    compiled, handwritten = tmp_path / "c.json", tmp_path / "h.json"
    common = ["--task", "arithmetic", "--model", model, "--agents", "2", "--rounds", "2", "--protocol", "majority"]
    assert (
        main(
            [
                "compile",
                *common,
                "--optimizer",
                "bootstrap",
                "--train",
                "2",
                "--dev",
                "1",
                "--keep",
                "compiled",
                "--yes",
                "--out",
                str(compiled),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "compile",
                "--handwritten",
                *common,
                "--set",
                "stop.stable_rounds=0",
                "--set",
                "memory=summary",
                "--out",
                str(handwritten),
            ]
        )
        == 0
    )
    assert load_program(handwritten).manifest["optimizer"] == {"name": "handwritten"}
    config = load_program(handwritten).config
    assert (config.stop.stable_rounds, config.stop.decisive_share, config.memory) == (
        0,
        pytest.approx(2 / 3),
        "summary",
    )
    capsys.readouterr()
    assert main(["compile", "--handwritten", *common, "--set", "memory=terse", "--out", str(handwritten)]) == 2
    assert "madspy: error: memory: Input should be 'previous'" in capsys.readouterr().err
    assert sum(len(p.demos) for p in load_program(compiled).predictors()) > 0
    capsys.readouterr()
    assert main(["run", "What is the result of 1+2*3+4-5*6?", "--program", str(compiled), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == "-19"
    assert (
        main(
            [
                "eval",
                "--task",
                "arithmetic",
                "--model",
                model,
                "--programs",
                f"{compiled},{handwritten}",
                "--n",
                "2",
                "--concurrency",
                "1",
                "--out",
                str(tmp_path / "ev"),
            ]
        )
        == 0
    )


# -- the composite metric ------------------------------------------------------

GOLD = dspy.Example(question="What is the result of 1+1*1+1-1*1?", answer="14").with_inputs("question")


def _debate_answering(scripted, answers: list[str], flag: bool, confidence: float = 0.9) -> dspy.Prediction:
    def script(turn: Turn):
        if turn.role in ("proposer", "reviser"):
            return proposal(answers[PERSONAS.index(turn.inputs["persona"])], confidence)
        if turn.role == "critic":
            return {"reasoning": "checked each step", "issues": [], "verdict": "flawed" if flag else "sound"}
        return "unexpected"

    config = DebateConfig(
        model=scripted(script),
        agents=TWO_AGENTS,
        rounds=2,
        protocol="majority",
        resolver={"enabled": False},
        stop={"agreement_gate": None, "stable_rounds": 0},
    )
    return Debate(config, normalize=ARITHMETIC.normalize)(question=GOLD.question)


def test_composite_terms_on_hand_made_debates(scripted):
    metric = CompositeMetric(ARITHMETIC, Weights(acc=1, critic=1, calib=1, cost=0))
    right = metric.terms(GOLD, _debate_answering(scripted, ["14", "14"], flag=False, confidence=1.0))
    assert (right.accuracy, right.critic, right.calibration) == (1.0, 1.0, 1.0)
    assert right.score(metric.weights) == 1.0
    wrong = metric.terms(GOLD, _debate_answering(scripted, ["12", "12"], flag=False, confidence=0.5))
    assert (wrong.accuracy, wrong.critic, wrong.calibration) == (0.0, 0.0, 0.75)  # passed every wrong proposal
    assert wrong.score(metric.weights) == pytest.approx(0.25)
    assert critic_quality([(False, True), (True, True), (True, False)]) == pytest.approx(0.5)
    assert critic_quality([]) is None


def test_cost_term_and_demo_gate(scripted):
    pred = _debate_answering(scripted, ["14", "14"], flag=False, confidence=1.0)
    tokens = pred.usage["prompt_tokens"] + pred.usage["completion_tokens"]
    budget = (tokens - 1) // 2  # strictly more than twice over budget, whatever the parity of tokens
    metric = CompositeMetric(ARITHMETIC, Weights(cost=1.0), budget_tokens=budget)
    assert metric.terms(GOLD, pred).cost == pytest.approx(tokens / budget - 1)
    assert metric(GOLD, pred, trace=[]) is True  # bootstrapping: is the answer right
    assert metric(GOLD, pred) < 0.0  # twice over budget costs more than a perfect debate earns


def test_weights_parse_and_reject():
    assert Weights.parse("acc=2,cost=0") == Weights(acc=2.0, critic=0.3, calib=0.3, cost=0.0)
    with pytest.raises(InputError, match="unknown weight 'speed'"):
        Weights.parse("speed=1")


def test_gepa_feedback_names_the_role_and_the_answers(scripted):
    pred = _debate_answering(scripted, ["12", "14"], flag=False)
    metric = CompositeMetric(ARITHMETIC, gate_demos=False)

    def feedback(role: str, inputs: dict, outputs: dict) -> str:
        out = metric(GOLD, pred, None, role, [(None, inputs, dspy.Prediction(**outputs))])
        assert out.score == metric(GOLD, pred)
        return out.feedback

    assert feedback(
        "critic", {"proposal": "answer: 12 (confidence 0.90)\nstep 1: 6*2"}, {"verdict": "sound"}
    ).startswith("critic passed a wrong proposal (answered 12, gold 14).")
    assert "false alarm" in feedback("critic", {"proposal": "answer: 14 (confidence 0.90)"}, {"verdict": "flawed"})
    assert feedback("proposer", {"persona": PERSONAS[0]}, {"answer": "12", "confidence": 0.9}).startswith(
        "proposer 0 answered 12 with confidence 0.90; gold is 14."
    )
    assert feedback(
        "resolver",
        {"proposals": ["agent 1: answer: 12 (confidence 0.90)", "agent 2: answer: 14 (confidence 0.60)"]},
        {"final_answer": "12"},
    ).startswith("resolver chose 12 although agent 2 answered 14")
    assert "changed 12 to 14" in feedback(
        "reviser",
        {"persona": PERSONAS[1], "previous_answer": "answer: 12 (confidence 0.70)"},
        {"answer": "14", "evidence_ref": "critique 1"},
    )
    assert "gold is 14" in feedback("mask", {"memory": "answer: 12 (confidence 0.5)"}, {"label": "YES"})


def test_compiles_draw_from_a_training_split_when_the_task_has_one():
    from madspy.data import get_task
    from madspy.optimizers.compile import compile_split

    assert compile_split(get_task("gsm8k")) == "train"
    assert compile_split(get_task("arc_challenge")) == "validation"
    assert compile_split(get_task("arithmetic")) == get_task("arithmetic").default_split


def test_compile_takes_a_student_and_the_users_examples_and_only_the_roles_named(model, tmp_path):
    train, dev = ARITHMETIC.load(n=3, seed=4), ARITHMETIC.load(n=2, seed=9)
    student = Debate(small(model))
    result = compile(
        student, train, dev, task=ARITHMETIC, roles=["reviser", "critic"], out=tmp_path / "c.json", keep="compiled"
    )
    demos = {name: len(p.demos) for name, p in result.debate.named_predictors()}
    assert demos["reviser"] > 0 and demos["critic"] > 0 and demos["proposer"] == demos["resolver"] == 0
    manifest = load_program(tmp_path / "c.json").manifest
    assert manifest["roles"] == ["reviser", "critic"] and manifest["data"]["train_ids"] == [e.id for e in train]
    assert not any(p.demos for p in student.predictors())  # the student is left as it was
    with pytest.raises(CompileError, match="roles to compile"):
        compile(student, train, dev, task=ARITHMETIC, roles=["judge"])


def test_the_random_demo_control_draws_only_train_examples_seeded():
    train = ARITHMETIC.load(n=10, seed=1)
    student = Debate(DebateConfig(model="openai/m"))
    first, again = (random_demo_control(student, train, 3, seed=5) for _ in range(2))
    questions = [d["question"] for d in first.proposer.demos]
    assert questions == [d["question"] for d in again.proposer.demos] and len(set(questions)) == 3
    assert set(questions) <= {e.question for e in train} and not student.proposer.demos
    other = random_demo_control(student, train, 3, seed=6)
    assert [d["question"] for d in other.proposer.demos] != questions


def test_a_dev_difference_the_test_cannot_tell_from_chance_is_a_tie_not_a_win():
    right = {"handwritten": [False] * 6, "random_demos": [True] * 6}
    scores = {"compiled": {"right": [True] * 6}} | {name: {"right": r} for name, r in right.items()}
    verdict = dev_verdict(scores)  # 6 of 6 against 0 of 6: exact McNemar p = 0.03
    assert verdict["vs"]["handwritten"]["outcome"] == "better" and verdict["vs"]["random_demos"]["outcome"] == "tie"
    assert verdict["verdict"] == "tie"  # better than hand-written alone is not better than few-shot
    scores["random_demos"]["right"] = [False] * 6
    assert dev_verdict(scores)["verdict"] == "better"


def test_a_tie_on_dev_keeps_the_simpler_program_and_says_so(model, tmp_path):
    train, dev = ARITHMETIC.load(n=3, seed=4), ARITHMETIC.load(n=2, seed=9)
    result = compile(Debate(small(model)), train, dev, task=ARITHMETIC, out=tmp_path / "c.json")
    assert result.manifest["dev_verdict"]["verdict"] == "tie"  # two dev questions tell nothing apart
    assert result.kept == "handwritten" and result.manifest["kept"] == {"program": "handwritten", "rule": "simpler"}
    assert not any(p.demos for p in result.debate.predictors())  # saved: the hand-written program
    assert any(p.demos for p in result.optimized.predictors())  # the optimizer's result is still at hand
    saved = load_program(tmp_path / "c.json")
    assert not any(p.demos for p in saved.predictors()) and saved.config.concurrency == small(model).concurrency
    with pytest.raises(CompileError, match="keep must be one of simpler, compiled"):
        compile(Debate(small(model)), train, dev, task=ARITHMETIC, keep="best")


@pytest.mark.parametrize(
    ("right", "kept"),
    [
        ({"handwritten": [False] * 7, "random_demos": [False] * 7, "compiled": [True] * 7}, "compiled"),
        ({"handwritten": [False] * 7, "random_demos": [True] * 7, "compiled": [True] * 7}, "random_demos"),
        ({"handwritten": [True] * 7, "random_demos": [True] * 7, "compiled": [True] * 7}, "handwritten"),
        ({"handwritten": [False] * 7, "random_demos": [True] * 7, "compiled": [False] * 7}, "random_demos"),
        ({"handwritten": [True] * 7, "random_demos": [False] * 7, "compiled": [False] * 7}, "handwritten"),
    ],
)
def test_compile_keeps_the_most_elaborate_program_that_beats_every_simpler_one(right, kept):
    assert kept_program({name: {"right": r} for name, r in right.items()}) == kept  # 7 of 7 against 0: p = 0.016


def test_a_users_seeded_split_is_recorded_in_the_manifest(model, tmp_path):
    from madspy.data import SeededSplit, Task

    rows = [{"question": f"What is the result of {i}+1*1+1-1*1?", "answer": str(i + 1)} for i in range(20)]
    task = Task.from_rows(rows, answer_kind="number", seeded_split=SeededSplit(0.5, 0.2, 0.3, seed=4), name="plus")
    result = compile(Debate(small(model)), task.load("train")[:2], task.load("dev")[:1], task=task)
    assert result.manifest["task"] == "plus"
    assert result.manifest["task_split"] == {"train": 0.5, "dev": 0.2, "test": 0.3, "seed": 4}


def test_a_teacher_runs_the_train_debates_and_its_demos_come_from_train_only(scripted, tmp_path):
    """The student is always wrong, the teacher always right: the demos are the teacher's, none a dev question."""

    def answering(right: bool):
        def script(turn):
            gold = eval(re.search(r"What is the result of (.*?)\?", turn.inputs["question"]).group(1))
            return proposal(str(gold if right else gold + 1), confidence=0.9)

        return script

    student_model, teacher_model = scripted(answering(False)), scripted(answering(True))
    config = base_config(student_model, "cot")
    train, dev = ARITHMETIC.load(n=3, seed=4), ARITHMETIC.load(n=2, seed=9)
    result = compile(Debate(config), train, dev, task=ARITHMETIC, teacher=teacher_model, keep="compiled")
    demos = result.optimized.proposer.demos
    assert demos and calls_of(teacher_model)  # without the teacher, no trace of the student's would pass
    assert {d["question"] for d in demos} <= {e.question for e in train}
    assert not {d["question"] for d in demos} & {e.question for e in dev}
    assert result.manifest["optimizer"]["teacher"] == teacher_model
    assert result.optimized.config.model == student_model  # the student keeps its own model
    with pytest.raises(CompileError, match="gepa takes no teacher"):
        compile(Debate(config), train, dev, task=ARITHMETIC, optimizer="gepa", teacher=teacher_model)
