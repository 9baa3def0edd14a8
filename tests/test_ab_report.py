"""`madspy ab`, `port`, `show` and `report`: a crafted A/B, role-model porting, the HTML report in Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from scripts import critique, proposal, resolution

from madspy.ab import ab, program_spec
from madspy.cli import main
from madspy.evaluation import load_rows
from madspy.port import PortError, port
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import load_program, save_program
from madspy.testing import Turn, calls_of

N = 8
MARK = "[compiled]"
EXPRESSION = re.compile(r"(\d+)\+(\d+)\*(\d+)\+(\d+)-(\d+)\*(\d+)")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def gold(question: str) -> int:
    a, b, c, d, e, f = map(int, EXPRESSION.search(question).groups())
    return a + b * c + d - e * f


def compiled_beats_handwritten(turn: Turn):
    """Right and sure under the compiled instructions; off by one and unsure under the hand-written ones."""
    question = turn.inputs.get("question", "")
    compiled = MARK in turn.messages[0]["content"]
    answer = str(gold(question) + (0 if compiled else 1))
    if turn.role in ("proposer", "reviser"):
        return proposal(answer, confidence=0.95 if compiled else 0.6)
    if turn.role == "critic":
        return critique(flawed=not compiled)
    return resolution(answer, confidence=0.6)


def compiled_program(path: Path, model: str, **config) -> Path:
    debate = Debate(DebateConfig.with_agents(3, model=model, cache=False, **config))
    for predictor in (debate.proposer, debate.reviser):
        predictor.signature = predictor.signature.with_instructions(predictor.signature.instructions + " " + MARK)
    save_program(debate, path, manifest={"task": "arithmetic"})
    return path


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory):
    from madspy.testing import register_script

    model = register_script("ab-compiled-vs-handwritten", compiled_beats_handwritten)
    tmp = tmp_path_factory.mktemp("ab")
    program = compiled_program(tmp / "x.json", model)
    return (
        ab(str(program), "handwritten", "arithmetic", model, out=tmp / "ab", n=N, concurrency=4, cache=False),
        program,
        model,
        tmp,
    )


def test_ab_verdict_table_and_report(ab_run, capsys):
    result, program, model, tmp = ab_run
    twin = str(tmp / "ab" / "handwritten.json")
    c = result.comparison
    assert (c.n, c.accuracy_a, c.accuracy_b) == (N, 1.0, 0.0)
    assert c.mcnemar.p_value == pytest.approx(2 / 2**N) and c.difference.low == 1.0
    assert result.verdict.startswith(f"{program} beats {twin} by 100.0% on {N} paired questions")
    assert result.summary.loc[twin, "critic_hit_rate"] == 1.0
    assert result.summary.loc[str(program), "tokens"] < result.summary.loc[twin, "tokens"]

    html = result.report.read_text()
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing to fetch
    linked = re.findall(r'href="([^"]+)"', html)
    assert len(linked) == 2 * 2 * N and all((result.report.parent / href).is_file() for href in linked)

    # The CLI resumes the same folder (no model call) and prints the table and the verdict.
    before = len(calls_of(model))
    assert (
        main(
            [
                "ab",
                "--a",
                str(program),
                "--b",
                "handwritten",
                "--task",
                "arithmetic",
                "--model",
                model,
                "--n",
                str(N),
                "--out",
                str(tmp / "ab"),
            ]
        )
        == 0
    )
    out = " ".join(capsys.readouterr().out.split())  # unwrap the terminal's lines
    assert len(calls_of(model)) == before
    assert "critic hit-rate" in out and f"beats {twin} by 100.0%" in out and "report.html" in out


def test_handwritten_opposite_a_saved_program_is_its_twin(tmp_path):
    """Same settings, the roles' own instructions, no demos: the A/B isolates what compiling changed."""
    program = compiled_program(tmp_path / "x.json", "openai/x", rounds=1, protocol="majority")
    compiled = load_program(program)
    compiled.proposer.demos = [{"question": "1+1*1+1-1*1", "answer": "2"}]
    save_program(compiled, program, manifest={"task": "arithmetic"})

    twin = load_program(program_spec("handwritten", str(program), tmp_path / "ab"))
    assert twin.config == compiled.config and twin.config.rounds == 1
    assert MARK in compiled.proposer.signature.instructions and MARK not in twin.proposer.signature.instructions
    assert twin.proposer.demos == [] and twin.manifest["twin_of"] == str(program)
    assert program_spec("handwritten", "cot", tmp_path) == "debate"  # opposite a preset: the debate preset
    assert program_spec("sc:3", str(program), tmp_path) == "sc:3"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"headless Chromium not installed at {CHROMIUM}")
def test_report_renders_in_headless_chromium(ab_run, tmp_path):
    result, program, _, tmp = ab_run
    flags = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    url = result.report.resolve().as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=60).stdout

    def reliability(name: Path) -> str:
        slug = re.sub("[^a-z0-9]+", "-", str(name).lower()).strip("-")
        return f'<svg id="reliability-{slug}" class="plot reliability"'

    for element in (
        reliability(program),
        reliability(tmp / "ab" / "handwritten.json"),
        '<svg id="accuracy-tokens"',
        '<table id="summary">',
        '<table id="comparison">',
        '<table id="disagreements">',
    ):
        assert element in dom
    assert dom.count('class="point"') == 2 and dom.count('<rect class="bin"') >= 2
    assert dom.count("<tr><th>") >= N  # a disagreement line per question

    png = tmp_path / "report.png"
    subprocess.run([*flags, f"--screenshot={png}", "--window-size=1200,1400", url], capture_output=True, timeout=60)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_show_and_report_of_one_transcript(ab_run, capsys):
    result, *_ = ab_run
    transcript = next((result.report.parent / "transcripts").glob("*handwritten.json/*.json"))
    assert main(["show", str(transcript)]) == 0
    assert "round 0" in capsys.readouterr().out
    assert main(["report", str(transcript)]) == 0
    page = transcript.with_suffix(".html").read_text()
    assert '<table id="result">' in page and "Round 1" in page
    assert main(["show", str(transcript.with_suffix(".nope"))]) == 2
    assert "transcript not found" in capsys.readouterr().err


def test_port_keeps_role_models_unless_all_roles(scripted, tmp_path):
    cheap = scripted(compiled_beats_handwritten)
    other = scripted(compiled_beats_handwritten)
    strong = scripted(lambda turn: resolution(str(gold(turn.inputs["question"]))))
    # Agents disagree in confidence below the gate, so the judge (a strong model of its own) decides.
    program = compiled_program(
        tmp_path / "mixed.json",
        cheap,
        rounds=1,
        resolver={"model": strong},
        protocol="judge",
        stop={"agreement_gate": None},
    )
    r = port(program, other, "arithmetic", out=tmp_path / "port", n=3, concurrency=2)
    assert (r.source_model, r.target_model, r.gap) == (cheap, other, 0.0)
    assert load_program(r.program).config.resolver.model == strong
    assert {t.role for t in calls_of(other)} == {"proposer", "critic"}  # the resolver stayed on `strong`
    assert len(calls_of(strong)) == 2 * 3

    moved = port(program, other, "arithmetic", out=tmp_path / "all", n=3, concurrency=2, all_roles=True)
    assert load_program(moved.program).config.resolver.model is None
    assert "resolver" in {t.role for t in calls_of(other)}
    with pytest.raises(PortError, match="already uses"):
        port(program, cheap, "arithmetic", out=tmp_path / "same", n=3)


def test_port_recompile_compares_on_questions_outside_the_train_set(scripted, tmp_path):
    cheap, other = scripted(compiled_beats_handwritten), scripted(compiled_beats_handwritten)
    program = compiled_program(tmp_path / "x.json", cheap, rounds=1)
    save_program(
        load_program(program),
        program,
        manifest={"task": "arithmetic", "data": {"train": 2, "dev": 1}, "optimizer": {"name": "bootstrap"}},
    )
    r = port(program, other, "arithmetic", out=tmp_path / "port", n=4, concurrency=2, recompile=True)
    manifest = load_program(tmp_path / "port" / "recompiled.json").manifest
    assert manifest["model"] == other and manifest["data"]["train"] == 2
    # Recompiled from the hand-written instructions, it lost the [compiled] mark: wrong where the port is right.
    assert r.recompiled.accuracy_a == 0.0 and r.recompiled.accuracy_b == 1.0
    evaluated = {row.id for row in load_rows(tmp_path / "port" / "target")}
    assert r.recompiled.n == len(evaluated - set(manifest["data"]["train_ids"])) > 0
