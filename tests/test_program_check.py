"""The program check: model-written programs run in a sandbox, and answers that disagree with them flagged."""

from __future__ import annotations

import dspy
import pytest
from scripts import agent_of, proposal

from madspy.core.models import make_lm
from madspy.data import get_task
from madspy.evaluation import build_program, program_fingerprint
from madspy.programs import Debate
from madspy.programs.artifact import load_program, save_program
from madspy.programs.formats import adapter_for
from madspy.programs.presets import preset
from madspy.programs.program_check import (
    agreed_value,
    clean_program,
    program_disagreement,
    run_program,
    solve_in_code,
)
from madspy.testing import Turn, calls_of

PERSONAS = [a.persona for a in preset("debate").agents]


@pytest.mark.parametrize(
    ("code", "value"),
    [
        ("eggs = 16\neaten = 3\nbaked = 4\nanswer = (eggs - eaten - baked) * 2", 18.0),
        ("```python\nimport math\nboxes = math.ceil(25 / 4)\nanswer = boxes\n```", 7.0),
        ("from math import floor\nanswer = floor(7 / 2)", 3.0),
        ("total = 0\nfor day in range(5):\n    total += day\nanswer = total if total > 3 else 0", 10.0),
        ("def cost(n):\n    return 3 * n\nanswer = cost(4) + 0.5", 12.5),
    ],
)
def test_a_program_runs_to_the_number_in_answer(code, value):
    assert run_program(code) == value


@pytest.mark.parametrize(
    "code",
    [
        "import os\nanswer = len(os.listdir('/'))",  # no import but math
        "answer = open('/etc/hostname').read()",  # no files
        "answer = ().__class__.__bases__[0]",  # no dunder attributes
        "x = 0\nwhile True:\n    x += 1\nanswer = x",  # CPU time limit
        "answer = sum(range(10**12))",  # CPU time limit inside one builtin call
        "cells = [0] * 10**10\nanswer = 1",  # memory limit
        "answer = 'seven'",  # not a number
        "answer = True",
        "answer = float('inf')",
        "total = 4 +",  # a syntax error
        "result = 4",  # no answer
        "",
        "answer = 1\n" + "x = 1\n" * 2000,  # longer than MAX_PROGRAM
    ],
)
def test_a_program_that_breaks_a_rule_gives_none(code):
    assert run_program(code) is None


def test_clean_program_drops_fences_and_math_imports_only():
    assert clean_program("```py\nimport math\nimport os\nanswer = 1\n```") == "import os\nanswer = 1"


def test_programs_agree_only_with_enough_of_them():
    assert agreed_value([4.0, 4.0, None], agreement=2) == (4.0, 2)
    assert agreed_value([4.0, 5.0, None], agreement=2) is None
    assert agreed_value([None, None], agreement=1) is None


@pytest.mark.parametrize(
    ("answer", "values", "flagged"),
    [
        ("4", [3.0, 3.0, 9.0], True),
        ("$1,200", [1200.0, 1200.0], False),  # written with a sign and a thousands comma
        ("18.0", [18.0, 18.0], False),
        ("4", [3.0, 9.0, None], False),  # the programs do not agree
        ("B", [3.0, 3.0], False),  # no number in the answer
        ("3 or 4", [3.0, 3.0], False),  # not one number
    ],
)
def test_an_answer_is_flagged_when_it_differs_from_the_agreed_value(answer, values, flagged):
    issue = program_disagreement(answer, values, agreement=2)
    assert (issue is not None) == flagged
    if flagged:
        assert issue["location"] == "answer" and issue["issue_type"] == "contradiction"
        assert "computes 3, not 4" in issue["evidence"]


def test_solve_in_code_asks_greedy_once_then_distinct_samples(scripted):
    temperatures = []

    def script(turn):
        temperatures.append(turn.temperature)
        return {"program": f"answer = {len(temperatures)}"}

    model = scripted(script)
    with dspy.context(lm=make_lm(model, cache=False), adapter=adapter_for(model)):
        programs = solve_in_code("How many?", samples=3)
    assert [run_program(p) for p in programs] == [1.0, 2.0, 3.0]
    assert temperatures == [0.0, 0.7, 0.7]


# -- in a debate -------------------------------------------------------------------------------------------------
QUESTION = "Tom had 20 apples, gave half to Ann, then ate 3 of the rest. How many are left?"
STEPS = {"17": "20 - 3 = 17", "7": "20 / 2 = 10, 10 - 3 = 7"}  # both calculations right: only a reading is wrong


def debaters_and_solver(answers: list[str], programs: list[str]):
    """Agent i proposes answers[i]; a reviser told of a program's finding moves to 7; the solver writes
    ``programs`` in turn (greedy first)."""
    written = iter(programs)

    def script(turn: Turn):
        if turn.role == "solver":
            return {"program": next(written)}
        i = agent_of(turn, PERSONAS)
        if turn.role == "proposer":
            return proposal(answers[i]) | {"reasoning": STEPS[answers[i]]}
        if turn.role == "reviser":
            told = any("program solving the question computes 7" in c for c in turn.input_json("critiques"))
            answer = "7" if told else answers[i]
            return proposal(answer, evidence="critique 1" if told else "none") | {"reasoning": STEPS[answer]}
        return "unexpected role"

    return script


RIGHT = "apples = 20\nkept = apples / 2\nanswer = kept - 3"
WRONG = "answer = 20 - 3"
CHECK = {"program_check": True, "program_samples": 3, "program_agreement": 2}


def test_a_decisive_vote_the_programs_disagree_with_is_debated_and_its_holders_told(scripted):
    model = scripted(debaters_and_solver(["17", "17", "7"], [RIGHT, WRONG, RIGHT]))
    result = Debate(preset("debate", model=model, protocol="majority", critic=CHECK))(question=QUESTION)
    assert result.answer == "7" and len(result.transcript.rounds) == 2
    first = result.transcript.rounds[0]
    assert [e.agent for e in first.events if e.kind == "program_disagrees"] == [0, 1]
    assert [str(e) for e in first.events if e.kind == "programs_run"] == [
        "program check: 3 program(s) computed a number: 7, 17, 7"
    ]
    solver = [t for t in calls_of(model) if t.role == "solver"]
    assert [t.temperature for t in solver] == [0.0, 0.7, 0.7]  # written once, in the first round
    assert [c.role for c in first.calls].count("solver") == 3 and result.usage["calls"] == 3 + 3 + 3


def test_programs_that_do_not_agree_flag_nothing(scripted):
    model = scripted(debaters_and_solver(["17", "17", "7"], [RIGHT, WRONG, "answer = nothing_defined"]))
    result = Debate(preset("debate", model=model, protocol="majority", critic=CHECK))(question=QUESTION)
    assert result.answer == "17" and result.stop_reason == "decisive_vote"
    assert not [e for e in result.transcript.rounds[0].events if e.kind == "program_disagrees"]


def test_without_the_program_check_the_solver_is_never_called_and_fingerprints_are_unchanged(scripted):
    model = scripted(debaters_and_solver(["17", "17", "7"], []))
    result = Debate(preset("debate", model=model, protocol="majority"))(question=QUESTION)
    assert result.answer == "17" and "solver" not in [t.role for t in calls_of(model)]
    # While the program check is off, the solver's prompt is no part of what the program is.
    arc = build_program("debate", get_task("arc_challenge"), "local/qwen2.5-coder-1.5b-instruct-q4_k_m")
    before = program_fingerprint(arc)
    arc.solver.signature = arc.solver.signature.with_instructions("Another solver prompt.")
    assert program_fingerprint(arc) == before
    assert program_fingerprint(arc.fork(critic=CHECK)) != before


def test_the_solver_is_a_role_of_the_program_file(scripted, tmp_path):
    debate = Debate(preset("debate", model=scripted(lambda turn: {}), critic=CHECK))
    debate.solver.signature = debate.solver.signature.with_instructions("Write Python. Assign `answer`.")
    save_program(debate, tmp_path / "p.json")
    loaded = load_program(tmp_path / "p.json")
    assert loaded.solver.signature.instructions == "Write Python. Assign `answer`."
    assert loaded.config.critic.program_samples == 3


def test_a_solver_call_is_a_role_example_labelled_by_what_its_program_computes_and_scored_so():
    import dspy as _dspy

    from madspy.optimizers.role_data import role_examples
    from madspy.optimizers.role_metrics import RoleMetric
    from madspy.programs.transcript import Call, Round, Transcript

    calls = [
        Call(role="solver", round=0, inputs={"question": QUESTION}, output={"program": program})
        for program in (RIGHT, WRONG, "answer = undefined_name")
    ]
    transcript = Transcript(question=QUESTION, rounds=[Round(index=0, calls=calls)])
    task = get_task("gsm8k")
    examples = role_examples(transcript, "q1", "7", lambda a: task.score(a, "7") == 1.0)
    assert [(e.role, e.labels) for e in examples] == [("solver", {"correct": c}) for c in (True, False, False)]
    metric = RoleMetric(task, "solver")
    example = _dspy.Example(question=QUESTION, gold="7").with_inputs("question")
    scores = [metric(example, _dspy.Prediction(program=p)) for p in (RIGHT, WRONG)]
    assert scores == [1.0, 0.0]
    assert "computed 17: wrong; the gold answer is 7" in metric.feedback(example, _dspy.Prediction(program=WRONG), 0.0)


def test_compiling_the_solver_of_a_program_that_never_runs_it_is_refused(scripted):
    from madspy.core.errors import CompileError
    from madspy.optimizers.role_compile import compile_roles

    debate = Debate(preset("debate", model=scripted(lambda turn: {})))
    with pytest.raises(CompileError, match=r"critic.program_check is false.*--set critic.program_check=true"):
        compile_roles(debate, {}, get_task("gsm8k"), "bootstrap", roles=["solver"])


def test_a_solver_compile_keeps_only_programs_that_compute_the_gold_answer(scripted):
    import re

    from madspy.optimizers.role_compile import compile_roles
    from madspy.optimizers.role_data import RoleExample

    def script(turn):  # right on even numbers, one too many on odd ones
        n = int(re.search(r"(\d+) plus 2", turn.inputs["question"]).group(1))
        return {"program": f"n = {n}\nanswer = n + {2 if n % 2 == 0 else 3}"}

    model = scripted(script)
    examples = [
        RoleExample(
            role="solver",
            question_id=f"q{n}",
            inputs={"question": f"What is {n} plus 2?"},
            outputs=script(Turn(model, None, {"question": f"What is {n} plus 2?"}, [], 0.0)),
            labels={"correct": n % 2 == 0},
            gold=str(n + 2),
        )
        for n in range(1, 13)
    ]
    debate = Debate(preset("debate", model=model, critic={"program_check": True}))
    with dspy.context(lm=dspy.LM(model, cache=False)):
        compiled, reports = compile_roles(
            debate, {"solver": examples}, get_task("arithmetic"), "bootstrap", roles=["solver"], max_demos=4
        )
    demos = compiled.solver.demos
    assert demos and reports["solver"].train > 0
    for demo in demos:
        n = int(re.search(r"(\d+) plus 2", demo["question"]).group(1))
        assert run_program(demo["program"]) == n + 2
    assert debate.solver.demos == [] and compiled.proposer.demos == debate.proposer.demos


def test_more_agreeing_programs_than_samples_is_refused_naming_the_field(scripted, capsys):
    from madspy.cli import main

    model = scripted(lambda turn: {})
    argv = ["run", "How many?", "--model", model, "--program-check", "--set", "critic.program_samples=3"]
    assert main([*argv, "--set", "critic.program_agreement=5"]) == 2
    assert "error: critic.program_agreement: Value error, 5 programs cannot agree among program_samples = 3" in (
        capsys.readouterr().err
    )


def test_role_eval_calls_the_solver_as_a_debate_does_with_the_critics_model_greedy(scripted, tmp_path):
    from madspy.optimizers.role_data import RoleExample, save_role_datasets
    from madspy.role_scores import score_role

    debaters = scripted(lambda turn: "only the solver is called")
    checker = scripted(lambda turn: {"program": RIGHT})
    examples = [
        RoleExample(
            role="solver",
            question_id="q1",
            inputs={"question": QUESTION},
            outputs={"program": WRONG},
            labels={"correct": False},
            gold="7",
        )
    ]
    save_role_datasets(examples, tmp_path / "roles")
    debate = Debate(preset("debate", model=debaters, critic=CHECK | {"model": checker}))
    save_program(debate, tmp_path / "p.json")
    summary = score_role(
        tmp_path / "roles", "solver", [str(tmp_path / "p.json")], get_task("gsm8k"), debaters, out=tmp_path / "ab"
    )
    assert [(t.role, t.temperature) for t in calls_of(checker)] == [("solver", 0.0)]
    assert calls_of(debaters) == []
    assert summary["programs"][str(tmp_path / "p.json")]["score"] == 1.0  # its program computes the gold
