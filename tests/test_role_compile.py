"""Role-wise compile: role datasets from recorded debates, per-role metrics, one role compiled, the rest untouched."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dspy
import pytest
from scripts import REVIEWED, critique, proposal, resolution

from madspy.cli import main
from madspy.core.errors import CompileError
from madspy.data import get_task
from madspy.evaluation import program_fingerprint
from madspy.optimizers.role_compile import compile_roles
from madspy.optimizers.role_data import RoleExample, load_role_dataset, proposal_reviews, role_examples
from madspy.optimizers.role_metrics import RoleMetric
from madspy.programs import Debate
from madspy.programs.artifact import load_program, save_program
from madspy.programs.presets import preset
from madspy.signatures import Role
from madspy.testing import Turn, calls_of

PERSONAS = [a.persona for a in preset("debate").agents]
EXPRESSION = re.compile(r"What is the result of (.*?)\?")
SHOWN = re.compile(r"answer: (.*?) \(confidence")


def reviewed_program(model: str, path: Path) -> str:
    """The default debate with its critic on, as eval runs a preset on arithmetic, saved for ``--programs``."""
    save_program(Debate(preset("debate", model=model, **REVIEWED).for_task_kind("reasoning")), path)
    return str(path)


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
    program = reviewed_program(model, tmp_path / "reviewed.json")
    argv = ["eval", "--task", "arithmetic", "--model", model, "--programs", program, "--n", "12", "--out", str(runs)]
    assert main(argv) == 0
    assert main(["roles", str(runs), "--out", str(tmp_path / "roles")]) == 0
    return tmp_path / "roles"


def test_recorded_calls_carry_labels_from_the_gold_answer(model):
    debate = Debate(preset("debate", model=model, **REVIEWED))
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
    debate = Debate(preset("debate", model=model, **REVIEWED))
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
    assert demos and sum(reports["critic"].demo_sources.values()) == len(demos)
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
    base = ["--task", "arithmetic", "--model", model, "--critic"]
    assert main(["compile", "--handwritten", *base, "--out", str(twin)]) == 0
    argv = ["compile", *base, "--optimizer", "bootstrap", "--roles", "critic", "--role-data", str(role_data)]
    made = len(calls_of(model))
    assert main([*argv, "--dev", "3", "--out", str(out)]) == 0
    compiled, hand = json.loads(out.read_text()), json.loads(twin.read_text())
    for role in Role:
        if role != Role.CRITIC:  # byte-identical
            assert json.dumps(compiled["roles"][role.value]) == json.dumps(hand["roles"][role.value])
    assert compiled["roles"]["critic"] != hand["roles"]["critic"]
    assert compiled["config"] == hand["config"]  # compiling the critic changed no setting
    program = load_program(out)
    assert program.manifest["roles"]["critic"]["demo_sources"] and program.manifest["dev"]["compiled"]["n"] == 3
    assert program.manifest["calls"] == len(calls_of(model)) - made  # every call, dev debates included
    assert program.manifest["calls"] > program.manifest["roles"]["critic"]["calls"] > 0
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
    with pytest.raises(CompileError, match="does not run its critic"):  # the default debate has no critic
        compile_roles(Debate(preset("debate", model=model)), {}, get_task("arithmetic"), "bootstrap", roles=["critic"])
    with pytest.raises(CompileError, match="no recorded calls of mask"):
        compile_roles(
            Debate(preset("debate", model=model, **REVIEWED)), {}, get_task("arithmetic"), "bootstrap", roles=["mask"]
        )


def critic_example(qid: str, a: int, b: int, shown: int) -> RoleExample:
    """A recorded critic call that passed the proposal ``shown`` for ``a+b`` (a miss when it is wrong)."""
    return RoleExample(
        role=Role.CRITIC,
        question_id=qid,
        inputs={
            "question": f"What is the result of {a}+{b}?",
            "proposal": f"answer: {shown} (confidence 0.80)\nstep 1: {a}+{b}={shown}",
            "focus": "",
        },
        outputs=critique(flawed=False),
        labels={"proposal_correct": shown == a + b},
        gold=str(a + b),
        rationale=[f"{a}+{b}={a + b}"],
    )


def hindsight_script(turn: Turn):
    """A critic that passes everything; shown the gold, it flags the step, and states the gold when it is even."""
    if turn.role != "critic":
        return "unexpected role"
    if "gold_answer" not in turn.inputs:
        return critique(flawed=False)
    gold = turn.inputs["gold_answer"]
    said = {**critique(flawed=True)}
    said["issues"] = [
        {
            **said["issues"][0],
            "description": f"the sum should be {gold}" if int(gold) % 2 == 0 else "the sum is miscounted",
        }
    ]
    return said


def compile_one(model: str, role: Role, examples: list[RoleExample], **options):
    """``compile_roles`` of one role with bootstrap on ``examples``, the scripted ``model`` as the task LM."""
    with dspy.context(lm=dspy.LM(model, cache=False)):
        return compile_roles(
            Debate(preset("debate", model=model, **REVIEWED)),
            {role: examples},
            get_task("arithmetic"),
            "bootstrap",
            roles=[role.value],
            **options,
        )


def test_a_hindsight_teacher_writes_the_hits_the_critic_missed_and_no_demo_holds_the_gold(scripted):
    examples = [critic_example(f"q{i}", i, 10, i + 11 if i % 3 else i + 10) for i in range(1, 16)]
    task_model, teacher_model = scripted(hindsight_script), scripted(hindsight_script)
    teacher = dspy.LM(teacher_model, cache=False)
    compiled, reports = compile_one(
        task_model, Role.CRITIC, examples, teacher=teacher, settings={"max_bootstrapped_demos": 0}, max_demos=4
    )
    sources = reports["critic"].demo_sources
    hits = [d for d in compiled.critic.demos if d["verdict"] == "flawed"]
    assert sources["hindsight"] == len(hits) >= 1  # the recorded calls held no hit: the teacher wrote them
    by_question = {e.inputs["question"]: e.gold for e in examples}
    for demo in compiled.critic.demos:
        fields = {"question", "proposal", "focus", "reasoning", "issues", "verdict"}
        assert set(demo.keys()) - {"augmented"} == fields  # no gold
        critique = json.dumps([demo["reasoning"], demo["issues"]])
        assert by_question[demo["question"]] not in critique  # nor the gold in the critique
    taught = [t for t in calls_of(teacher_model) if "gold_answer" in t.inputs]
    assert taught and all("reference_solution" in t.inputs for t in taught)
    assert not [t for t in calls_of(task_model) if "gold_answer" in t.inputs]  # the teacher alone saw the gold
    assert any(int(t.inputs["gold_answer"]) % 2 == 0 for t in taught)  # a critique stating the gold was dropped
    counts = reports["critic"].hindsight
    assert counts["asked"] == len(taught) and counts["kept"] == len(hits) and counts["stated_gold"] >= 1


def test_without_hindsight_no_call_sees_the_gold(scripted):
    examples = [critic_example(f"q{i}", i, 10, i + 11) for i in range(1, 9)]
    model = scripted(hindsight_script)
    _, reports = compile_one(model, Role.CRITIC, examples, hindsight=False)
    assert reports["critic"].demo_sources["hindsight"] == 0
    assert not [t for t in calls_of(model) if "gold_answer" in t.inputs]


def test_gold_rationales_become_proposer_demos_when_no_proposal_was_right(scripted):
    model = scripted(lambda turn: proposal("0") if turn.role == "proposer" else "unexpected role")
    examples = [
        RoleExample(
            role=Role.PROPOSER,
            question_id=f"q{i}",
            inputs={"question": f"What is {i}+1?", "persona": "p"},
            outputs=proposal("0"),
            labels={"correct": False},
            gold=str(i + 1),
            rationale=[f"{i}+1={i + 1}", f"so {i + 1}"],
        )
        for i in range(1, 7)
    ]
    compiled, reports = compile_one(model, Role.PROPOSER, examples)
    demos = compiled.proposer.demos
    assert reports["proposer"].demo_sources["gold_rationale"] == len(demos) >= 1
    for demo in demos:
        example = next(e for e in examples if e.inputs["question"] == demo["question"])
        assert demo["reasoning"] == "\n".join(example.rationale) and demo["answer"] == example.gold


def varied(turn: Turn):
    """``script``, with each agent's proposals worded its own way in each round."""
    out = script(turn)
    if turn.role in ("proposer", "reviser"):
        agent = PERSONAS.index(turn.inputs["persona"])
        out["confidence"] = 0.5 + 0.1 * agent + (0.05 if turn.role == "reviser" else 0.0)
    return out


def test_every_proposal_becomes_a_critic_example_with_its_label(scripted, tmp_path):
    model = scripted(varied)
    t = Debate(preset("debate", model=model, **REVIEWED))(question="What is the result of 2+3?").transcript
    reviews = proposal_reviews(t, "q", "5", lambda a: a == "5")
    answers = [c for r in t.rounds for c in r.calls if c.role in ("proposer", "reviser") and c.ok]
    assert len(reviews) == len(answers) > len([c for r in t.rounds for c in r.calls if c.role == "critic"])
    assert [e.labels["proposal_correct"] for e in reviews] == [c.output["answer"] == "5" for c in answers]
    assert all(e.inputs["question"] == t.question and e.outputs == {} for e in reviews)

    runs = tmp_path / "runs"
    program = reviewed_program(model, tmp_path / "r.json")
    assert (
        main(["eval", "--task", "arithmetic", "--model", model, "--programs", program, "--n", "3", "--out", str(runs)])
        == 0
    )
    assert main(["roles", str(runs), "--out", str(tmp_path / "some")]) == 0
    assert main(["roles", str(runs), "--every-proposal", "--out", str(tmp_path / "all")]) == 0
    some, every = (load_role_dataset(tmp_path / d, Role.CRITIC) for d in ("some", "all"))
    assert len(every) > len(some)
    recorded = {json.dumps(e.inputs, sort_keys=True) for e in some}
    assert recorded <= {json.dumps(e.inputs, sort_keys=True) for e in every}  # recorded critiques kept, not doubled
    assert len({json.dumps(e.inputs, sort_keys=True) for e in every if e.outputs}) == len(
        [e for e in every if e.outputs]
    )


def test_roles_program_keeps_one_programs_debates_of_a_shared_folder(scripted, tmp_path, capsys):
    model = scripted(varied)
    runs = tmp_path / "runs"
    programs = [reviewed_program(model, tmp_path / name) for name in ("a.json", "b.json")]
    for program in programs:  # two programs' debates in one folder, as an eval of several programs leaves them
        argv = ["eval", "--task", "arithmetic", "--model", model, "--programs", program, "--n", "3", "--out", str(runs)]
        assert main(argv) == 0
    assert main(["roles", str(runs), "--out", str(tmp_path / "both")]) == 0
    for program, folder in zip(programs, ("a", "b"), strict=True):
        assert main(["roles", str(runs), "--program", program, "--out", str(tmp_path / folder)]) == 0
    a, b, both = (load_role_dataset(tmp_path / d, Role.PROPOSER) for d in ("a", "b", "both"))
    assert len(a) == len(b) == 3 * 3 and len(both) == 2 * 3 * 3  # 3 questions, 3 proposers each
    assert main(["roles", str(runs), "--program", "cot", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "holds no debates of 'cot'" in err and programs[0] in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_role_datasets_carry_the_tasks_gold_rationale(scripted, tmp_path):
    data = tmp_path / "data"
    (data / "gsm8k").mkdir(parents=True)
    rows = [
        {
            "question": f"Ann has {i} apples and buys 2. How many?",
            "answer": f"{i}+2 = <<{i}+2={i + 2}>>{i + 2}\n#### {i + 2}",
        }
        for i in range(3)
    ]
    (data / "gsm8k" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = scripted(lambda turn: proposal("4"))
    runs = tmp_path / "runs"
    argv = [
        "eval",
        "--task",
        "gsm8k",
        "--split",
        "train",
        "--data-dir",
        str(data),
        "--model",
        model,
        "--programs",
        "du-mad",
        "--n",
        "3",
        "--out",
        str(runs),
    ]
    assert main(argv) == 0
    assert main(["roles", str(runs), "--data-dir", str(data), "--out", str(tmp_path / "roles")]) == 0
    proposers = load_role_dataset(tmp_path / "roles", Role.PROPOSER)
    assert proposers and all(e.rationale == [f"{int(e.gold) - 2}+2 = {e.gold}"] for e in proposers)


def test_teacher_and_optimizer_settings_are_checked(model, role_data, tmp_path, capsys):
    out = str(tmp_path / "x")
    base = ["compile", "--task", "arithmetic", "--model", model, "--optimizer", "bootstrap", "--out", out, "--critic"]
    assert main([*base, "--no-hindsight"]) == 2
    assert "--no-hindsight applies to role-wise compile" in capsys.readouterr().err
    assert main([*base, "--optimizer", "gepa", "--teacher", model, "--yes"]) == 2
    assert "gepa takes no teacher" in capsys.readouterr().err
    assert main([*base, "--roles", "critic", "--role-data", str(role_data), "--optimizer-set", "bogus=1"]) == 2
    assert "bootstrap has no setting bogus" in capsys.readouterr().err


def test_a_teacher_runs_the_bootstrapping_traces(scripted):
    examples = [critic_example(f"q{i}", i, 10, i + 10) for i in range(1, 9)]  # right proposals: clean passes
    task_model, teacher_model = scripted(hindsight_script), scripted(hindsight_script)
    _, reports = compile_one(task_model, Role.CRITIC, examples, teacher=dspy.LM(teacher_model, cache=False))
    assert reports["critic"].demo_sources["optimizer"] >= 1
    traced = [t for t in calls_of(teacher_model) if "gold_answer" not in t.inputs]
    assert len(traced) >= reports["critic"].demo_sources["optimizer"]
    assert len(calls_of(task_model)) == 2 * reports["critic"].dev  # the task model only scores dev, before and after


def demo_aware(turn: Turn):
    """``script``, except the critic: with demos in its prompt it flags every wrong proposal, without it passes all."""
    if turn.role != "critic":
        return script(turn)
    with_demos = len(turn.messages) > 2
    shown = int(SHOWN.search(turn.inputs["proposal"]).group(1))
    return critique(flawed=with_demos and shown != gold_of(turn))


def compiled_critic_ab(model, role_data, tmp_path) -> tuple[Path, list[str]]:
    """A critic with one flagging demo saved as a program, and the role-eval argv of it against the preset."""
    compiled = Debate(preset("debate", model=model, **REVIEWED)).fork()
    compiled.critic.demos = [
        dspy.Example(
            question="What is the result of 1+1?",
            proposal="answer: 3 (confidence 0.8)",
            focus="",
            **critique(flawed=True),
        )
    ]
    program = tmp_path / "critic.json"
    save_program(compiled, program)
    argv = [
        "role-eval",
        str(role_data),
        "--role",
        "critic",
        "--task",
        "arithmetic",
        "--model",
        model,
        "--programs",
        f"debate,{program}",
        "--out",
        str(tmp_path / "ab"),
    ]
    return program, argv


def test_role_eval_ab_tests_a_compiled_critic_against_the_handwritten_one(scripted, role_data, tmp_path, capsys):
    model = scripted(demo_aware)
    program, argv = compiled_critic_ab(model, role_data, tmp_path)
    out = tmp_path / "ab"
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    hand, mine = summary["programs"]["debate"], summary["programs"][str(program)]
    assert hand["hit_rate"] == 0.0 and mine["hit_rate"] == 1.0 and mine["false_alarm_rate"] == 0.0
    assert summary["examples"] == len(load_role_dataset(role_data, Role.CRITIC))
    assert mine["vs_first"]["only_this_good"] == mine["wrong"] and mine["vs_first"]["mcnemar_p"] < 0.05
    lines = capsys.readouterr().err.splitlines()  # not a terminal: one progress line per scored call
    todo = 2 * summary["examples"]
    assert len(lines) == todo and lines[0].startswith(f"critic 1/{todo}: ")
    assert lines[-1].startswith(f"critic {todo}/{todo}: {program} on ") and lines[-1].endswith("score 1.00")
    calls = len(calls_of(model))
    assert main(argv) == 0  # resumed: every row is there, no call made
    assert len(calls_of(model)) == calls
    rows = (out / "rows.jsonl").read_text().splitlines()
    (out / "rows.jsonl").write_text("\n".join(rows[:-1]) + "\n" + rows[-1][:20])  # killed mid-write
    assert main(argv) == 0  # the torn row is run again, the others are kept
    assert len(calls_of(model)) == calls + 1
    assert json.loads((out / "summary.json").read_text())["examples"] == summary["examples"]
    capsys.readouterr()
    assert main([*argv[:3], "judge", *argv[4:]]) == 2
    assert "unknown role 'judge'" in capsys.readouterr().err


def test_role_eval_records_the_ab_of_the_measured_version_only(scripted, role_data, tmp_path, capsys):
    model = scripted(demo_aware)
    program, argv = compiled_critic_ab(model, role_data, tmp_path)
    assert main([*argv, "--record"]) == 0
    assert main([*argv, "--record"]) == 0  # recorded again: the entry is replaced, not added
    (entry,) = load_program(program).manifest["held_out_roles"]
    assert (entry["role"], entry["against"], entry["split"]) == ("critic", "debate", "test")
    assert entry["hit_rate"] == 1.0 and entry["hit_rate_against"] == 0.0 and entry["only_against_good"] == 0
    assert entry["examples"] == len(load_role_dataset(role_data, Role.CRITIC))
    fingerprint = json.loads((tmp_path / "ab" / "settings.json").read_text())["programs"][str(program)]
    assert fingerprint == program_fingerprint(load_program(program))  # amending kept the program as it was
    capsys.readouterr()

    changed = load_program(program)
    changed.critic.demos = []
    save_program(changed, program)
    assert main([*argv, "--record"]) == 2  # its rows describe the program with the demo
    assert "made by a different version" in capsys.readouterr().err

    (tmp_path / "ab" / "settings.json").unlink()  # as a folder written before role-eval kept fingerprints
    assert main([*argv, "--record"]) == 2
    assert "its rows predate role-eval's fingerprints" in capsys.readouterr().err

    (role_data / "source.json").unlink()  # role data from before madspy roles said where they come from
    elsewhere = [*argv[:-1], str(tmp_path / "ab2"), "--record"]
    assert main(elsewhere) == 2
    assert "does not say which one split" in capsys.readouterr().err
    assert main([*elsewhere, "--programs", "debate,cot"]) == 2
    assert "--record needs a program file" in capsys.readouterr().err
    assert not (tmp_path / "ab2").exists()  # refused before any call


def test_a_roles_calls_count_the_prompt_models_too(model, scripted, role_data):
    def improver(turn: Turn):
        return {name: f"Improved instruction: check every step ({name})." for name in turn.outputs}

    prompt_model = scripted(improver)
    made = len(calls_of(model))
    with dspy.context(lm=dspy.LM(model, cache=False)):
        _, reports = compile_roles(
            Debate(preset("debate", model=model, **REVIEWED)),
            {Role.CRITIC: load_role_dataset(role_data, Role.CRITIC)},
            get_task("arithmetic"),
            "mipro",
            roles=["critic"],
            settings={"num_candidates": 2, "num_trials": 2},
            prompt_lm=dspy.LM(prompt_model, cache=False),
        )
    proposed = len(calls_of(prompt_model))
    assert proposed > 0  # the prompt model proposed instructions: calls no task-model history holds
    assert reports["critic"].calls == len(calls_of(model)) - made + proposed


def test_a_proposal_that_spells_out_the_gold_option_is_labelled_right(scripted, tmp_path):
    # The debate counts "Copper wire." as option B (answers.read_answer); its role example must say so too.
    data = tmp_path / "data" / "arc_challenge"
    data.mkdir(parents=True)
    row = {
        "id": "q1",
        "question": "Which is a metal?",
        "choices": {"text": ["wood", "copper wire", "glass"], "label": ["A", "B", "C"]},
        "answerKey": "B",
    }
    (data / "test.jsonl").write_text(json.dumps(row) + "\n")
    model = scripted(lambda turn: proposal("Copper wire."))
    runs = tmp_path / "runs"
    argv = ["eval", "--task", "arc_challenge", "--data-dir", str(tmp_path / "data"), "--model", model]
    assert main([*argv, "--programs", "sc:3", "--n", "1", "--out", str(runs)]) == 0
    assert json.loads((runs / "rows.jsonl").read_text())["correct"] is True
    assert main(["roles", str(runs), "--out", str(tmp_path / "roles")]) == 0
    proposers = load_role_dataset(tmp_path / "roles", Role.PROPOSER)
    assert len(proposers) == 3 and all(e.labels["correct"] for e in proposers)


def test_the_role_metric_counts_an_answer_as_the_debate_does():
    """Compiling against a metric that calls 'Copper wire.' wrong would teach a role what the debate does not count."""
    arc = get_task("arc_challenge")
    question = "Which is a metal?\n\nA) wood\nB) copper wire\nC) glass"
    example = dspy.Example(question=question, gold="B")
    proposer, resolver = RoleMetric(arc, "proposer"), RoleMetric(arc, "resolver")
    spelled = dspy.Prediction(answer="Copper wire.", confidence=1.0)
    assert proposer.score(example, spelled) == 1.0 and proposer.good(example, spelled)
    assert proposer.score(example, dspy.Prediction(answer="Glass.", confidence=0.0)) == 0.3
    chosen = dspy.Prediction(final_answer="copper wire", confidence=1.0)
    assert resolver.good(example.copy(gold_among=True), chosen)
    assert not proposer.good(dspy.Example(question="Which is a metal?", gold="B"), spelled)  # no options, no reading
