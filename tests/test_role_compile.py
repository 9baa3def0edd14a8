"""Role-wise compile: role datasets from recorded debates, per-role metrics, one role compiled, the rest untouched."""

from __future__ import annotations

import json
import re

import dspy
import pytest
from scripts import critique, proposal, resolution

from madspy.cli import main
from madspy.core.errors import CompileError
from madspy.data import get_task
from madspy.optimizers.role_compile import compile_roles
from madspy.optimizers.role_data import load_role_dataset, role_examples
from madspy.optimizers.role_metrics import RoleMetric
from madspy.programs import Debate
from madspy.programs.artifact import load_program
from madspy.programs.presets import preset
from madspy.signatures import Role
from madspy.testing import Turn

PERSONAS = [a.persona for a in preset("debate").agents]
EXPRESSION = re.compile(r"What is the result of (.*?)\?")
SHOWN = re.compile(r"answer: (.*?) \(confidence")


def gold_of(turn: Turn) -> int:
    return eval(EXPRESSION.search(turn.inputs["question"]).group(1))  # the arithmetic task's own expressions


def script(turn: Turn):
    """Agent 0 is right, agents 1 and 2 answer gold + 1. The critic flags a wrong proposal only when the gold is
    even (else it misses it) and passes right ones; the resolver picks the first proposal."""
    gold = gold_of(turn)
    if turn.role in ("proposer", "reviser"):
        wrong = PERSONAS.index(turn.inputs["persona"]) != 0
        return proposal(str(gold + wrong), confidence=0.8)
    if turn.role == "critic":
        shown = int(SHOWN.search(turn.inputs["proposal"]).group(1))
        return critique(flawed=shown != gold and gold % 2 == 0)
    if turn.role == "resolver":
        return resolution(SHOWN.search(turn.input_json("proposals")[0]).group(1))
    return "unexpected role"


@pytest.fixture
def model(scripted):
    return scripted(script)


@pytest.fixture
def role_data(model, tmp_path):
    runs = tmp_path / "runs"
    argv = ["eval", "--task", "arithmetic", "--model", model, "--programs", "debate", "--n", "12", "--out", str(runs)]
    assert main(argv) == 0
    assert main(["roles", str(runs), "--out", str(tmp_path / "roles")]) == 0
    return tmp_path / "roles"


def test_recorded_calls_carry_labels_from_the_gold_answer(model):
    debate = Debate(preset("debate").updated(model=model))
    question = "What is the result of 2+3?"
    t = debate(question=question).transcript
    examples = role_examples(t, "q", "5", lambda a: a == "5")
    proposers = [e for e in examples if e.role == Role.PROPOSER]
    assert [e.labels for e in proposers] == [{"correct": True}, {"correct": False}, {"correct": False}]
    critics = [e for e in examples if e.role == Role.CRITIC]
    assert critics and {e.labels["proposal_correct"] for e in critics} == {True, False}
    resolver = [e for e in examples if e.role == Role.RESOLVER]
    assert resolver and resolver[0].labels["gold_among"] is True
    assert all(e.inputs and e.outputs for e in examples)  # whole inputs: a role is replayed from them


def test_critic_metric_scores_hits_and_false_alarms():
    metric = RoleMetric(get_task("arithmetic"), "critic")
    wrong, right = dspy.Example(proposal_correct=False, gold="7"), dspy.Example(proposal_correct=True, gold="7")
    flag, passing = dspy.Prediction(**critique(flawed=True)), dspy.Prediction(**critique(flawed=False))
    nameless = dspy.Prediction(verdict="flawed", issues=[{"location": "", "issue_type": "x", "description": "?"}])
    assert [metric(wrong, flag), metric(wrong, passing), metric(right, flag), metric(right, passing)] == [1, 0, 0, 1]
    assert metric(wrong, nameless) == 0  # a flag must name a step
    assert "False alarm" in metric(right, flag, pred_name="critic").feedback


def test_role_datasets_from_an_eval_folder(role_data):
    critic = load_role_dataset(role_data, Role.CRITIC)
    assert critic and all("proposal" in e.inputs and "proposal_correct" in e.labels for e in critic)
    assert {e.labels["proposal_correct"] for e in critic} == {True, False}
    for e in critic:  # the label is the truth about the proposal the critic saw
        shown = int(SHOWN.search(e.inputs["proposal"]).group(1))
        assert e.labels["proposal_correct"] == (str(shown) == e.gold)


def test_a_critic_compile_keeps_demos_that_flag_wrong_proposals_and_no_misses(model, role_data):
    datasets = {Role.CRITIC: load_role_dataset(role_data, Role.CRITIC)}
    debate = Debate(preset("debate").updated(model=model))
    with dspy.context(lm=dspy.LM(model, cache=False)):
        compiled, reports = compile_roles(
            debate,
            datasets,
            get_task("arithmetic"),
            "bootstrap",
            roles=["critic"],
            settings={"max_bootstrapped_demos": 8},
            max_demos=8,
        )
    demos = compiled.critic.demos
    assert demos and reports["critic"].demo_sources["optimizer"] + reports["critic"].demo_sources["recorded"] == len(
        demos
    )
    flags = 0
    for demo in demos:
        shown = int(SHOWN.search(demo["proposal"]).group(1))
        flagged = demo["verdict"] == "flawed"
        wrong = shown != gold_of(Turn("m", Role.CRITIC, {"question": demo["question"]}, [], None))
        assert flagged == wrong  # a hit or a clean pass; a missed wrong proposal is never a demo
        flags += flagged
    assert flags >= 1
    assert reports["critic"].dev is not None and reports["critic"].train > 0
    assert debate.critic.demos == []  # the program compiled from is not changed


def test_roles_compiles_only_the_roles_named(model, role_data, tmp_path):
    out, twin = tmp_path / "roles.json", tmp_path / "hand.json"
    base = ["--task", "arithmetic", "--model", model]
    assert main(["compile", "--handwritten", *base, "--out", str(twin)]) == 0
    argv = ["compile", *base, "--optimizer", "bootstrap", "--roles", "critic", "--role-data", str(role_data)]
    assert main([*argv, "--dev", "3", "--out", str(out)]) == 0
    compiled, hand = json.loads(out.read_text()), json.loads(twin.read_text())
    for role in Role:
        if role != Role.CRITIC:  # byte-identical
            assert json.dumps(compiled["roles"][role.value]) == json.dumps(hand["roles"][role.value])
    assert compiled["roles"]["critic"] != hand["roles"]["critic"]
    assert compiled["config"] == hand["config"]  # the saved program keeps the configured concurrency
    program = load_program(out)
    assert program.manifest["roles"]["critic"]["demo_sources"] and program.manifest["dev"]["compiled"]["n"] == 3
    dev_ids = set(program.manifest["data"]["dev_ids"])
    assert not dev_ids & {e.question_id for e in load_role_dataset(role_data, Role.CRITIC)}  # held out


def test_role_compile_refuses_clearly(model, role_data, tmp_path, capsys):
    base = ["compile", "--task", "arithmetic", "--model", model, "--optimizer", "bootstrap", "--out", str(tmp_path)]
    assert main([*base, "--roles", "judge", "--role-data", str(role_data)]) != 0
    assert "unknown role 'judge'" in capsys.readouterr().err
    assert main([*base, "--roles", "critic", "--role-data", str(tmp_path / "nowhere")]) != 0
    assert "no critic dataset" in capsys.readouterr().err
    assert main([*base, "--roles", "critic"]) != 0
    assert "--role-data" in capsys.readouterr().err
    (role_data / "critic.jsonl").write_text("not json\n")
    assert main([*base, "--roles", "critic", "--role-data", str(role_data)]) != 0
    assert "is not a role dataset" in capsys.readouterr().err
    with pytest.raises(CompileError, match="no recorded calls of mask"):
        compile_roles(
            Debate(preset("debate").updated(model=model)), {}, get_task("arithmetic"), "bootstrap", roles=["mask"]
        )
