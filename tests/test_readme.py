"""The README's four jobs run as written, on scripted models: its commands and Python blocks are read from the
README itself, so the README cannot drift from what madspy does.

The scripted debaters solve the worked example's weekday questions with ``datetime`` (one of them is wrong on
some), so compile has right debates to learn from; ``$MODEL`` and ``$OTHER`` become two scripted models.
"""

from __future__ import annotations

import datetime
import re
import shlex
import shutil
import string
from pathlib import Path

import pytest

import madspy
from madspy.cli import build_parser, main
from madspy.programs.config import DebateConfig
from madspy.testing import Turn

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
SKEPTIC = DebateConfig.default_agents(3)[1].persona
_QUESTION = re.compile(r"(\w+ \d+, \d+) was a \w+\. Which day of the week was it (\d+) days (after|before)")
_OPTION = re.compile(r"^([A-D])\) (\w+)$", re.MULTILINE)


def blocks(language: str) -> list[str]:
    """The README's fenced blocks of ``language``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", README, re.DOTALL)


def weekday_answer(question: str, off_by: int = 0) -> str:
    """The option letter of the weekday a question asks for (``off_by`` days wrong)."""
    found = _QUESTION.search(question)
    if found is None:
        return "A"
    start = datetime.datetime.strptime(found[1], "%B %d, %Y").date()
    days = int(found[2]) * (1 if found[3] == "after" else -1) + off_by
    wanted = WEEKDAYS[(start + datetime.timedelta(days=days)).weekday()]
    return next((letter for letter, day in _OPTION.findall(question) if day == wanted), "A")


def solver(turn: Turn):
    question = turn.inputs.get("question", "")
    if turn.role in ("proposer", "reviser"):
        wrong = turn.role == "proposer" and turn.inputs.get("persona") == SKEPTIC and "wd-0" not in question
        answer = weekday_answer(question, off_by=1 if wrong and len(question) % 2 else 0)
        return {"reasoning": "Count the days modulo 7.", "answer": answer, "confidence": 0.8, "evidence_ref": "none"}
    if turn.role == "critic":
        return {"reasoning": "checked", "issues": [], "verdict": "sound"}
    if turn.role == "resolver":
        answer = weekday_answer(question)
        return {"verification": "counted", "final_answer": answer, "confidence": 0.8, "status": "converged"}
    return {"reasoning": "checked", "label": "YES"}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder holding the worked example's data, where the README's relative paths resolve."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def shell_commands(model: str, other: str) -> list[list[str]]:
    """The commands of the README's bash blocks between the install and the test command, split as a shell splits
    them, after its variable assignments; ``$MODEL`` and ``$OTHER`` are the models given."""
    variables = {"MODEL": model, "OTHER": other}
    commands = []
    for block in blocks("bash")[1:-1]:
        for line in block.splitlines():
            if re.match(r"[A-Z]+=", line):
                name, value = shlex.split(line, comments=True)[0].split("=", 1)
                variables.setdefault(name, string.Template(value).substitute(variables))
            elif line.strip() and not line.lstrip().startswith("#"):  # a comment line runs nothing
                commands.append(shlex.split(string.Template(line).substitute(variables), comments=True))
    return commands


def test_the_readme_jobs_run_as_written(scripted, workdir, capsys):
    ran = []
    for words in shell_commands(scripted(solver), scripted(solver)):
        assert words[0] == "madspy", words
        if words[1] == "serve":  # a server does not return: it is only parsed here (tests/test_serve*.py serve)
            build_parser().parse_args(words[1:])
            continue
        assert main(words[1:]) == 0, (words, capsys.readouterr().err)
        ran.append(words[1])
    assert ran == ["compile", "ab", "port"]
    assert (workdir / "compiled/weekdays.json").is_file() and (workdir / "runs/ab-weekdays/report.html").is_file()
    loaded = madspy.load(workdir / "compiled/weekdays.json")
    assert loaded.manifest["task_recipe"]["task"] == "examples/weekdays/weekdays.jsonl"
    assert any(p.demos for p in loaded.predictors())  # compile learned demos from the right debates


def test_the_readme_python_runs_as_written(scripted, workdir):
    model = scripted(solver)
    namespace: dict = {}  # the blocks are one walkthrough: a later one uses what an earlier one made
    for block in blocks("python"):
        if "OpenAI(" in block:  # needs the server of job 2 running
            continue
        code = block.replace('"local/smollm2-135m"', repr(model)).replace('"openai/gpt-4o-mini"', repr(model))
        exec(compile(code, "README.md", "exec"), namespace)
    assert (workdir / "wd.json").is_file() and (workdir / "runs/ab-py/rows.jsonl").is_file()
    assert madspy.load(workdir / "wd.json").manifest["roles"] == ["proposer", "reviser"]
    assert {r.program for r in namespace["ev"].rows} == {"compiled", "handwritten", "plain"}


def test_the_readme_is_at_most_about_200_lines():
    assert len(README.splitlines()) <= 200
