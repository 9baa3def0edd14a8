"""`madspy eval` / `madspy compare` on scripted models: rows, summary, resume, refusals, paired tests."""

from __future__ import annotations

import json
import math
import re

import dspy
import pytest
from scripts import critique, proposal, resolution

from madspy.cli import main
from madspy.comparison import compare
from madspy.core.errors import EvalError
from madspy.data import TaskError, get_task
from madspy.evaluation import build_program, evaluate, load_rows, matched_k, program_fingerprint
from madspy.optimizers import metrics
from madspy.optimizers.traces import ProposalTrace, debate_trace
from madspy.programs import Debate, DebateConfig
from madspy.programs.artifact import save_program
from madspy.programs.flips import Flip
from madspy.programs.presets import NEUTRAL_PERSONA
from madspy.programs.protocols import Vote
from madspy.programs.transcript import Call, Round, Transcript
from madspy.rows import EvalRow
from madspy.sessions import read_sessions
from madspy.summary import first_vote_right, summarize
from madspy.testing import Turn, calls_of

N = 6
PROGRAMS = ["cot", "sc", "du-mad", "debate"]
EXPRESSION = re.compile(r"(\d+)\+(\d+)\*(\d+)\+(\d+)-(\d+)\*(\d+)")


def policy(question: str) -> str:
    """The model's answer: right when the first number is even, else off by one."""
    a, b, c, d, e, f = map(int, EXPRESSION.search(question).groups())
    value = a + b * c + d - e * f
    return str(value if a % 2 == 0 else value + 1)


def gold_of(question: str) -> str:
    a, b, c, d, e, f = map(int, EXPRESSION.search(question).groups())
    return str(a + b * c + d - e * f)


def script(turn: Turn):
    """Every agent and the resolver answer by `policy` (but the skeptic's first answer is off by 7, so a debate's
    first round is split); the critic flags exactly the wrong proposals."""
    question = turn.inputs.get("question", "")
    if turn.role == "proposer" and "skeptic" in turn.inputs["persona"]:
        return proposal(str(int(policy(question)) + 7))
    if turn.role in ("proposer", "reviser"):
        return proposal(policy(question))
    if turn.role == "critic":
        proposed = re.search(r"answer: (-?\d+)", turn.inputs["proposal"]).group(1)
        return critique(flawed=proposed != gold_of(question))
    if turn.role == "resolver":
        return resolution(policy(question))
    return "unexpected role"


@pytest.fixture
def model(scripted):
    return scripted(script)


@pytest.fixture
def expected_accuracy():
    examples = get_task("arithmetic").load(n=N, seed=0)
    return sum(policy(e.question) == e.answer for e in examples) / N


def run_eval(model, out, programs=PROGRAMS, **changes):
    settings = {"n": N, "seed": 0, "concurrency": 4, "cache": False, "progress": False} | changes
    return evaluate(programs, "arithmetic", model, out=out, **settings)


def test_eval_end_to_end_rows_summary_and_matched_sc(model, tmp_path, expected_accuracy):
    assert 0 < expected_accuracy < 1  # the sample has right and wrong questions
    programs = [*PROGRAMS, "debate-v1"]
    ev = run_eval(model, tmp_path, programs=programs)
    rows = load_rows(tmp_path)
    k = ev.matched_k
    assert ev.summary.index.tolist() == [*programs, f"sc-matched:{k}"]
    assert len(rows) == N * 6 and len({(r.program, r.id) for r in rows}) == N * 6

    row = next(r for r in rows if r.program == "debate-v1")
    assert {
        "program",
        "id",
        "gold",
        "answer",
        "score",
        "correct",
        "confidence",
        "status",
        "stop_reason",
        "usage",
        "wall_s",
        "proposals",
        "critic",
        "flips",
        "transcript",
    } <= json.loads(row.model_dump_json()).keys()
    assert (tmp_path / row.transcript).is_file()
    assert row.score == float(row.answer == row.gold)
    final = [p.correct for p in row.proposals if p.round == 1]
    assert final == [row.score == 1.0] * 3 and sum(not p.correct for p in row.proposals if p.round == 0) >= 1

    for name in programs:
        assert ev.summary.loc[name, "accuracy"] == pytest.approx(expected_accuracy)
        assert ev.summary.loc[name, "n"] == N
    # The critic flags exactly the wrong proposals: every wrong one is hit, no right one is flagged.
    assert ev.summary.loc["debate-v1", "critic_hit_rate"] == 1.0
    assert ev.summary.loc["debate-v1", "critic_false_alarm"] == 0.0
    assert ev.summary["critic_hit_rate"].isna()[["cot", "sc", "du-mad", "debate"]].all()  # no critic in these
    # Strata come from cot: every program is right on all "easy" and wrong on all "hard" questions.
    assert ev.summary.loc["debate", "acc_easy"] == 1.0 and ev.summary.loc["debate", "acc_hard"] == 0.0

    def mean_tokens(name):
        usages = [r.usage for r in rows if r.program == name]
        return sum(u.prompt_tokens + u.completion_tokens for u in usages) / len(usages)

    sc_calls = sum(r.usage.calls for r in rows if r.program == "sc")
    per_sample = mean_tokens("sc") * N / sc_calls
    assert k == max(1, min(16, round(mean_tokens("debate") / per_sample)))
    assert all(r.usage.calls == k for r in rows if r.program == f"sc-matched:{k}")


def test_cost_by_role_and_round_adds_up_to_the_summary(model, tmp_path):
    ev = run_eval(model, tmp_path, programs=["cot", "debate-v1"])
    summary, cost = ev.summary, ev.cost
    assert list(summary["prompt_tokens"] + summary["completion_tokens"]) == pytest.approx(list(summary["tokens"]))
    for name in ["cot", "debate-v1"]:
        for by in ["role", "round"]:
            part = cost.loc[(name, by)]
            assert part["calls"].sum() == pytest.approx(summary.loc[name, "calls"])
            assert part["prompt_tokens"].sum() == pytest.approx(summary.loc[name, "prompt_tokens"])
            assert part["completion_tokens"].sum() == pytest.approx(summary.loc[name, "completion_tokens"])
    assert cost.loc[("cot", "role")].index.tolist() == ["proposer"]
    assert cost.loc[("cot", "role", "proposer"), "calls"] == 1.0
    assert {"proposer", "critic"} <= set(cost.loc[("debate-v1", "role")].index)
    assert cost.loc[("debate-v1", "round")].index.tolist()[0] == "0"


def test_cost_counts_requests_answered_by_another_programs_cached_reply(model, tmp_path):
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)  # a fresh cache for this test
    ev = run_eval(model, tmp_path, programs=["sc", "du-mad"], concurrency=1, cache=True)
    # Du MAD's first round asks exactly what self-consistency's first three samples asked.
    assert ev.cost.loc[("du-mad", "round", "0"), "cached"] == 3.0
    assert ev.cost.loc[("du-mad", "round", "1"), "cached"] == 0.0
    assert ev.cost.loc[("sc", "role", "proposer"), "cached"] == 0.0


def test_rerun_skips_finished_rows_and_reruns_missing_ones(model, tmp_path):
    run_eval(model, tmp_path, programs=["cot", "du-mad"])
    before = len(calls_of(model))
    run_eval(model, tmp_path, programs=["cot", "du-mad"])
    assert len(calls_of(model)) == before  # nothing asked of the model

    rows_file = tmp_path / "rows.jsonl"
    lines = rows_file.read_text().splitlines()
    rows_file.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])  # a crash tore the last row
    run_eval(model, tmp_path, programs=["cot", "du-mad"])
    assert len(load_rows(tmp_path)) == 2 * N
    assert len(calls_of(model)) - before == json.loads(lines[-1])["usage"]["calls"]  # only that row ran again


def test_each_row_names_the_eval_session_that_wrote_it_and_compare_counts_split_pairs(model, tmp_path, capsys):
    run_eval(model, tmp_path, programs=["cot"])
    run_eval(model, tmp_path, programs=["cot", "du-mad"])  # resumed later (maybe elsewhere): du-mad's rows are new
    run_eval(model, tmp_path, programs=["cot", "du-mad"])  # nothing left to run: no session recorded
    first, second = read_sessions(tmp_path)
    assert first.engine.startswith("litellm ") and first.engine == second.engine
    rows = load_rows(tmp_path)
    assert {r.session for r in rows if r.program == "cot"} == {first.session}
    assert {r.session for r in rows if r.program == "du-mad"} == {second.session}
    assert compare(rows, "du-mad", "cot").split_sessions == N
    assert main(["compare", str(tmp_path), "du-mad", "cot"]) == 0
    assert f"eval sessions: 0 pairs run in one session, {N} across two (0 of them on different engines" in (
        capsys.readouterr().out
    )
    assert main(["summary", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"session {first.session}: {N} rows, litellm " in err and f"session {second.session}: {N} rows" in err

    same = tmp_path / "same"
    run_eval(model, same, programs=["cot", "du-mad"])
    assert compare(load_rows(same), "du-mad", "cot").split_sessions == 0
    assert main(["compare", str(same), "du-mad", "cot"]) == 0
    assert f"eval sessions: {N} pairs run in one session, 0 across two\n" in capsys.readouterr().out
    # B's rows from a folder whose session ran on another engine: every pair is split, across engines.
    (session,) = read_sessions(same)
    (same / "sessions.jsonl").write_text(session.model_copy(update={"engine": "litellm 0.0.1"}).model_dump_json())
    assert main(["compare", str(tmp_path), "du-mad", "cot", "--b-rows", str(same)]) == 0
    assert f"{N} across two ({N} of them on different engines" in capsys.readouterr().out


def test_rows_older_than_sessions_or_of_unrecorded_sessions_are_said_so(model, tmp_path, capsys):
    run_eval(model, tmp_path, programs=["cot", "du-mad"])
    rows_file = tmp_path / "rows.jsonl"
    old = [json.loads(line) for line in rows_file.read_text().splitlines()]
    early = sorted({row["id"] for row in old})[:2]
    for row in old:
        if row["id"] in early:  # two questions' rows, as written before sessions were recorded
            del row["session"]
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in old))
    assert compare(load_rows(tmp_path), "du-mad", "cot").unknown_sessions == 2
    assert main(["compare", str(tmp_path), "du-mad", "cot"]) == 0
    out = capsys.readouterr().out
    assert f"eval sessions: {N - 2} pairs run in one session, 0 across two; 2 pairs have a row older" in out
    assert main(["summary", str(tmp_path)]) == 0
    assert "4 rows from before sessions were recorded" in capsys.readouterr().err
    (tmp_path / "sessions.jsonl").unlink()  # rows copied without their sessions file
    assert main(["summary", str(tmp_path)]) == 0
    assert f"{2 * N - 4} rows of sessions {tmp_path}/sessions.jsonl does not record" in capsys.readouterr().err
    for row in old:
        row.pop("session", None)
    rows_file.write_text("".join(json.dumps(row) + "\n" for row in old))
    assert main(["compare", str(tmp_path), "du-mad", "cot"]) == 0 and main(["summary", str(tmp_path)]) == 0
    assert "session" not in capsys.readouterr().out  # a folder from before sessions: nothing said of them


def test_stop_after_starts_no_question_past_the_limit_and_keeps_the_rows_paired(scripted, tmp_path, capsys):
    slow = scripted(script, latency_s=0.1)  # a question: 7 calls, 0.7 s
    argv = ["eval", "--task", "arithmetic", "--model", slow, "--programs", "cot,du-mad", "--n", str(N),
            "--concurrency", "1", "--no-cache", "--out", str(tmp_path)]  # fmt: skip
    assert main([*argv, "--stop-after", "0.5s"]) == 0
    rows = load_rows(tmp_path)
    done = {r.id for r in rows}
    assert 0 < len(done) < N and len(rows) == 2 * len(done)  # whole questions: both programs, or neither
    assert f"--stop-after reached: {2 * (N - len(done))} rows left" in capsys.readouterr().err
    assert main(argv) == 0  # resumed without a limit: the rest runs
    assert len(load_rows(tmp_path)) == 2 * N
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--stop-after", "soon"])
    assert exit_.value.code == 2 and "not a duration: 'soon'" in capsys.readouterr().err
    with pytest.raises(EvalError, match="--stop-after must be a positive duration"):
        run_eval(slow, tmp_path, programs=["cot", "du-mad"], stop_after=0)


def test_programs_go_question_by_question_so_a_stopped_run_is_paired(model, tmp_path):
    run_eval(model, tmp_path, programs=["cot", "du-mad"], concurrency=1)
    rows = load_rows(tmp_path)
    assert [r.program for r in rows] == ["cot", "du-mad"] * N
    assert [r.id for r in rows[::2]] == [r.id for r in rows[1::2]]


def test_without_a_terminal_progress_is_one_line_per_finished_row(model, tmp_path, capsys):
    run_eval(model, tmp_path, programs=["cot", "du-mad"], concurrency=1, progress=True)
    lines = capsys.readouterr().err.splitlines()
    rows = load_rows(tmp_path)
    assert len(lines) == len(rows) == 2 * N
    for i, (line, row) in enumerate(zip(lines, rows, strict=True)):
        outcome = "right" if row.correct else "wrong"
        assert line.startswith(f"{row.program} {i // 2 + 1}/{N}: {row.id} {outcome} ({row.status.value}, {row.tokens} ")
    run_eval(model, tmp_path, programs=["cot", "du-mad"], concurrency=1, progress=True)
    assert capsys.readouterr().err == ""  # a finished folder: nothing runs


def test_a_fixed_matched_k_runs_alongside_and_sticks_to_the_folder(model, tmp_path, capsys):
    ev = run_eval(model, tmp_path, programs=["sc", "debate"], concurrency=1, sc_matched_k=3)
    assert ev.matched_k == 3 and ev.summary.index.tolist() == ["sc", "debate", "sc-matched:3"]
    assert [r.program for r in load_rows(tmp_path)] == ["sc", "debate", "sc-matched:3"] * N
    assert all(r.usage.calls == 3 for r in load_rows(tmp_path) if r.program == "sc-matched:3")

    before = len(calls_of(model))
    again = run_eval(model, tmp_path, programs=["sc", "debate"])  # not measured again: the folder's K is kept
    assert again.matched_k == 3 and len(calls_of(model)) == before
    with pytest.raises(EvalError, match="holds sc-matched:3 rows"):
        run_eval(model, tmp_path, programs=["sc", "debate"], sc_matched_k=4)
    code = main(
        [
            "eval",
            "--task",
            "arithmetic",
            "--model",
            model,
            "--programs",
            "cot",
            "--n",
            "2",
            "--sc-matched-k",
            "0",
            "--out",
            str(tmp_path / "other"),
        ]
    )
    assert code == 2 and "--sc-matched-k must be 1..16, got 0" in capsys.readouterr().err


def test_other_settings_in_the_same_folder_are_refused(model, tmp_path, capsys):
    run_eval(model, tmp_path, programs=["cot"])
    with pytest.raises(EvalError, match=r"n: 6 there vs 5 now.*seed: 0 there vs 1 now"):
        run_eval(model, tmp_path, programs=["cot"], n=5, seed=1)
    code = main(
        ["eval", "--task", "arithmetic", "--model", model, "--programs", "cot", "--n", "5", "--out", str(tmp_path)]
    )
    assert code == 2 and "other settings (n: 6 there vs 5 now)" in capsys.readouterr().err


def test_eval_new_to_draws_questions_no_earlier_folder_holds_and_refuses_a_changed_one(model, tmp_path, capsys):
    earlier, fresh = tmp_path / "seed0", tmp_path / "fresh"
    run_eval(model, earlier, programs=["cot"])
    held = {r.id for r in load_rows(earlier)}
    run_eval(model, fresh, programs=["cot"], new_to=[earlier])
    drawn = {r.id for r in load_rows(fresh)}
    assert len(drawn) == N and not drawn & held  # n questions, all fresh (the same seed drew `held` before)
    assert json.loads((fresh / "settings.json").read_text())["new_to"]["left_out"] == sorted(held)

    with pytest.raises(EvalError, match="new_to"):  # resumed without --new-to: other settings, refused
        run_eval(model, fresh, programs=["cot"])
    rows_file = earlier / "rows.jsonl"  # the earlier folder now holds one question more
    row = json.loads(rows_file.read_text().splitlines()[0]) | {"id": "arithmetic-new"}
    rows_file.write_text(rows_file.read_text() + json.dumps(row) + "\n")
    with pytest.raises(EvalError, match="new_to"):
        run_eval(model, fresh, programs=["cot"], new_to=[earlier])
    with pytest.raises(EvalError, match="is the --out folder"):
        run_eval(model, fresh, programs=["cot"], new_to=[fresh])
    everything = tmp_path / "all"  # an eval folder holding every arithmetic question
    everything.mkdir()
    (everything / "settings.json").write_text((earlier / "settings.json").read_text())
    (everything / "rows.jsonl").write_text(
        "".join(json.dumps(row | {"id": f"arithmetic-{i}"}) + "\n" for i in range(1000))
    )
    with pytest.raises(EvalError, match=r"no usable questions .* the --new-to folders hold the other 1000"):
        run_eval(model, tmp_path / "none-left", programs=["cot"], new_to=[everything])
    code = main(["eval", "--task", "gsm8k", "--model", model, "--programs", "cot", "--new-to", str(earlier)])
    assert code == 2 and "holds arithmetic test questions, not gsm8k" in capsys.readouterr().err


def test_a_changed_program_is_refused_and_a_changed_cache_setting_is_not(model, tmp_path):
    program = tmp_path / "p.json"
    save_program(Debate(DebateConfig.with_agents(2, model=model, rounds=2)), program)
    run_eval(model, tmp_path / "run", programs=["cot", str(program)], n=2)
    run_eval(model, tmp_path / "run", programs=["cot", str(program)], n=2, cache=True)  # resumes
    settings = json.loads((tmp_path / "run" / "settings.json").read_text())
    assert set(settings["programs"]) == {"cot", str(program)}
    save_program(Debate(DebateConfig.with_agents(2, model=model, rounds=3)), program)
    with pytest.raises(EvalError, match=r"rows of '.*p\.json' made by a different program"):
        run_eval(model, tmp_path / "run", programs=["cot", str(program)], n=2)
    assert len(load_rows(tmp_path / "run")) == 4  # nothing was added
    rows = tmp_path / "run" / "rows.jsonl"  # as the error says: without that program's rows, it runs again
    rows.write_text("".join(line for line in rows.read_text().splitlines(keepends=True) if '"cot"' in line))
    run_eval(model, tmp_path / "run", programs=["cot", str(program)], n=2)
    assert len(load_rows(tmp_path / "run")) == 4


def test_compare_records_a_pooled_held_out_result_in_the_programs_manifest(model, tmp_path, capsys):
    """Two samples of one comparison pool (a question drawn twice counts once) and land in the manifest."""
    from madspy.programs.artifact import load_program

    program = tmp_path / "p.json"
    save_program(Debate(DebateConfig.with_agents(2, model=model, rounds=2)), program, manifest={"task": "arithmetic"})
    before = load_program(program)
    run_eval(model, tmp_path / "s0", programs=[str(program), "cot"], n=6, seed=0)
    run_eval(model, tmp_path / "s1", programs=[str(program), "cot"], n=8, seed=0)
    both = {r.id for r in load_rows(tmp_path / "s0")} | {r.id for r in load_rows(tmp_path / "s1")}
    assert len(both) < 6 + 8  # the samples share questions: each must count once
    args = ["compare", str(tmp_path / "s0"), str(program), "cot", "--sample", str(tmp_path / "s1")]
    assert main([*args, "--record", "--json"]) == 0
    pooled = json.loads(capsys.readouterr().out)
    assert pooled["n"] == len(both)

    after = load_program(program)  # still loads: hashed again, and answers as before
    assert program_fingerprint(after) == program_fingerprint(before)
    assert {k: v for k, v in after.manifest.items() if k != "held_out"} == before.manifest
    (entry,) = after.manifest["held_out"]
    assert (entry["task"], entry["split"], entry["against"], entry["n"]) == ("arithmetic", "test", "cot", len(both))
    assert entry["accuracy"] == round(pooled["accuracy_a"], 4) and entry["mcnemar_p"] == round(
        pooled["mcnemar"]["p_value"], 6
    )
    assert entry["samples"] == sorted([str(tmp_path / "s0"), str(tmp_path / "s1")])
    assert main([*args, "--record"]) == 0  # again: the entry is replaced, not repeated
    assert len(load_program(program).manifest["held_out"]) == 1
    assert main(["compare", str(tmp_path / "s0"), str(program), "cot", "--record"]) == 0  # another sample set
    assert len(load_program(program).manifest["held_out"]) == 2

    # one line, exit 2, the manifest untouched: a preset has no manifest; a changed program's rows are another's
    recorded = program.read_text()
    assert main(["compare", str(tmp_path / "s0"), "cot", str(program), "--record"]) == 2
    assert "not a saved program" in capsys.readouterr().err
    save_program(Debate(DebateConfig.with_agents(2, model=model, rounds=3)), tmp_path / "changed.json")
    program.write_text((tmp_path / "changed.json").read_text())
    assert main([*args, "--record"]) == 2
    assert "has changed since" in capsys.readouterr().err
    program.write_text(recorded)
    run_eval(model, tmp_path / "other", programs=[str(program), "cot"], n=4, seed=0, max_tokens=100)
    assert main([*args, "--sample", str(tmp_path / "other"), "--record"]) == 2
    assert "another sample" in capsys.readouterr().err
    assert program.read_text() == recorded


def test_redecide_replays_vote_protocols_on_recorded_debates(scripted, tmp_path, capsys):
    from madspy.redecide import redecide

    def judge_knows(turn: Turn):  # agents answer by `policy`; the judge always finds the gold answer
        if turn.role == "resolver":
            return resolution(gold_of(turn.inputs["question"]))
        return script(turn)

    model = scripted(judge_knows)
    program = tmp_path / "judge.json"
    save_program(
        Debate(DebateConfig.with_agents(3, model=model, rounds=2, protocol="judge", stop={"agreement_gate": None})),
        program,
    )
    run_eval(model, tmp_path / "run", programs=[str(program), "cot"])
    table = redecide(tmp_path / "run", str(program))
    examples = get_task("arithmetic").load(n=N, seed=0)
    voted = sum(policy(e.question) == e.answer for e in examples) / N
    assert table.loc["as recorded", "accuracy"] == 1.0 and table.loc["as recorded", "n"] == N
    assert table.loc["majority", "accuracy"] == table.loc["confidence", "accuracy"] == voted < 1.0
    assert table.loc["majority", "tokens"] < table.loc["as recorded", "tokens"]  # no last critique, no resolver
    # the judge said 0.8 and was always right; majority's confidence is the vote share times the agents' 0.7
    assert table.loc["as recorded", "brier"] == pytest.approx(0.2**2)
    assert table.loc["majority", "confidence"] == pytest.approx(0.7)
    # round 0's first answers, voted: exact on a judge's debate too, at round 0's proposals' tokens
    assert table.loc["round 0, majority vote", "accuracy"] == voted
    assert table.loc["round 0, majority vote", "tokens"] < table.loc["majority", "tokens"]
    assert "round 0 only" not in table.index  # the judge's own round-0 decision is not replayed

    assert main(["redecide", str(tmp_path / "run"), "--program", str(program)]) == 0
    assert "majority" in capsys.readouterr().out
    assert main(["redecide", str(tmp_path / "run"), "--program", "debate"]) == 2
    err = capsys.readouterr().err
    assert "no rows of 'debate'" in err and "judge.json, cot" in err
    assert main(["redecide", str(tmp_path / "nowhere")]) == 2
    assert "not an eval folder" in capsys.readouterr().err

    lost = next(r for r in load_rows(tmp_path / "run") if r.program == str(program))  # a transcript gone
    (tmp_path / "run" / lost.transcript).unlink()
    with pytest.raises(EvalError, match=rf"missing \(1 of {N} transcripts\).*--skip-missing"):
        redecide(tmp_path / "run", str(program))
    assert redecide(tmp_path / "run", str(program), skip_missing=True).loc["as recorded", "n"] == N - 1


def test_redecide_replays_earlier_stops_exactly(scripted, tmp_path):
    """Round 0: two agents give a wrong answer on even-first questions (a 2/3 vote), three different answers
    on the others; every reviser finds the gold. Stopping after round 0 loses what round 1 found."""
    from madspy.redecide import early_stop, redecide, round0_tokens

    def script(turn: Turn):
        question, gold = turn.inputs.get("question", ""), int(gold_of(turn.inputs.get("question", "0+0*0+0-0*0")))
        if turn.role == "reviser":
            return proposal(str(gold))
        if turn.role == "proposer":
            agent = int(re.search(r"agent (\d)", turn.inputs["persona"]).group(1))
            split = int(EXPRESSION.search(question).group(1)) % 2
            return proposal(str(gold + [1, 1 + split, 0][agent]))
        return critique(flawed=False)

    model = scripted(script)
    agents = [{"persona": f"agent {i}", "temperature": 0.0} for i in range(3)]
    program = tmp_path / "debate.json"
    save_program(Debate(DebateConfig(model=model, agents=agents, rounds=2, protocol="majority")), program)
    run_eval(model, tmp_path / "run", programs=[str(program)])
    examples = get_task("arithmetic").load(n=N, seed=0)
    split = sum(int(EXPRESSION.search(e.question).group(1)) % 2 for e in examples) / N
    assert 0 < split < 1  # both kinds of question in the sample

    table = redecide(tmp_path / "run", str(program))
    assert table.loc["as recorded", "accuracy"] == 1.0
    # the 2/3 gate stops on the wrong pair; on a three-way split it debates, as recorded
    assert table.loc["stop at round 0 if 2/3 agree", "accuracy"] == pytest.approx(split)
    assert table.loc["round 0 only", "accuracy"] <= split
    # this debate votes by majority: stopping after round 0 is voting round 0
    assert table.loc["round 0, majority vote"].equals(table.loc["round 0 only"])
    tokens = table["tokens"]
    # no round 0 is unanimous here: the all-agree gate debates every question, as recorded
    assert table.loc["stop at round 0 if all agree", "accuracy"] == 1.0
    assert tokens["stop at round 0 if all agree"] == pytest.approx(tokens["as recorded"])
    assert tokens["round 0 only"] < tokens["stop at round 0 if 2/3 agree"] < tokens["as recorded"]
    # round 0 only costs the three proposals and nothing else (round 0's critiques are not due)
    transcripts = [Transcript.load(tmp_path / "run" / r.transcript) for r in load_rows(tmp_path / "run")]
    proposals = [c for t in transcripts for c in t.rounds[0].calls if c.role == "proposer"]
    assert len(proposals) == 3 * N
    assert tokens["round 0 only"] == pytest.approx(sum(c.prompt_tokens + c.completion_tokens for c in proposals) / N)

    # a debate that stopped at round 0 on its own gate cannot say what a stricter gate would have done
    stopped = transcripts[0].model_copy(update={"rounds": transcripts[0].rounds[:1], "stop_reason": "decisive_vote"})
    history = [[Vote(0, "1", "1", 0.7), Vote(1, "2", "2", 0.7), Vote(2, "3", "3", 0.7)]]
    config = DebateConfig.model_validate(stopped.config)
    assert early_stop(stopped, config, history, 2 / 3, (1.0, 0.9, 100), lambda a: 0.0) is None
    assert early_stop(transcripts[0], config, history, 2 / 3, (1.0, 0.9, 100), lambda a: 0.0) == (1.0, 0.9, 100)
    # the all-agree gate passes a unanimous round 0 only, and then decides at round 0's tokens
    assert early_stop(transcripts[0], config, history, 1.0, (1.0, 0.9, 100), lambda a: 0.0) == (1.0, 0.9, 100)
    unanimous = [[Vote(a, "4", "4", 0.7) for a in range(3)]]
    replayed = early_stop(transcripts[0], config, unanimous, 1.0, (1.0, 0.9, 100), lambda a: float(a == "4"))
    assert replayed[0] == 1.0 and replayed[2] == round0_tokens(transcripts[0]) < transcripts[0].usage.total_tokens


def test_calibrate_fits_on_one_eval_checks_on_another_and_saves_the_program(scripted, tmp_path, capsys):
    """Agents who say 0.95 and are right about half the time: calibrated on one sample, checked on another."""
    from madspy.calibrate import calibrate, outcomes
    from madspy.programs.artifact import load_program

    def overconfident(turn: Turn):
        return proposal(policy(turn.inputs["question"]), confidence=0.95)

    model = scripted(overconfident)
    run_eval(model, tmp_path / "fit", programs=["sc:3", "cot"], n=12)
    run_eval(model, tmp_path / "check", programs=["sc:3"], n=12, seed=1)
    report = calibrate(tmp_path / "fit", "sc:3", out=tmp_path / "sc3.json", check=tmp_path / "check")
    fit_ids = outcomes(tmp_path / "fit", "sc:3").keys()
    overlap = len(fit_ids & outcomes(tmp_path / "check", "sc:3").keys())
    assert report.fit["n"] == 12 and report.check["n"] == 12 - overlap  # a question fitted on is not held out
    assert report.check["fitted_left_out"] == overlap
    assert report.check["ece_10_before"] > 0.3  # 0.95 stated at about half right
    assert report.check["ece_10_after"] < report.check["ece_10_before"] / 2
    assert report.check["brier_after"] < report.check["brier_before"]

    # the saved program is the one the folder ran, now reporting the calibrated confidence
    debate = load_program(tmp_path / "sc3.json", model=model)
    assert debate.config.calibrator == report.calibrator
    record = debate.manifest["calibration"]
    assert record["fitted_on"] == [str(tmp_path / "fit")] and record["n"] == 12
    assert record["held_out"]["folders"] == [str(tmp_path / "check")] and record["held_out"]["n"] == 12 - overlap
    result = debate(question=get_task("arithmetic").load(n=1, seed=0)[0].question)
    raw = result.transcript.decision.confidence
    assert result.confidence == report.calibrator(result.transcript.decision.signals) != raw

    assert main(["calibrate", str(tmp_path / "fit"), "--program", "sc:3", "--check", str(tmp_path / "check")]) == 0
    assert "held out" in capsys.readouterr().out
    # several check folders pool, a question counted once
    run_eval(model, tmp_path / "check2", programs=["sc:3"], n=12, seed=2)
    checked = outcomes(tmp_path / "check", "sc:3") | outcomes(tmp_path / "check2", "sc:3")
    pooled = len(checked)
    assert 12 < pooled <= 24
    checks = [tmp_path / "check", tmp_path / "check2", tmp_path / "check"]  # one folder twice: counted once
    assert (
        main(["calibrate", str(tmp_path / "fit"), "--program", "sc:3", *(f"--check={c}" for c in checks), "--json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["check"]["n"] == len(checked.keys() - fit_ids)
    # several fit folders pool too; the checked questions they hold are left out of the check
    fit_both = [str(tmp_path / "fit"), str(tmp_path / "check2")]
    assert main(["calibrate", *fit_both, "--program", "sc:3", "--check", str(tmp_path / "check"), "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    fitted = outcomes(tmp_path / "fit", "sc:3") | outcomes(tmp_path / "check2", "sc:3")
    assert both["fit"]["n"] == len(fitted) > 12
    assert both["check"]["fitted_left_out"] == len(fitted.keys() & outcomes(tmp_path / "check", "sc:3").keys())
    assert both["check"]["n"] == 12 - both["check"]["fitted_left_out"]
    with pytest.raises(EvalError, match="no answered debate"):  # checked only on what it was fitted on
        calibrate([tmp_path / "fit", tmp_path / "check2"], "sc:3", check=tmp_path / "fit")
    # a lost transcript of a program without a calibrator: its outcome is read off its row, exactly
    recorded = outcomes(tmp_path / "check", "sc:3")
    for row in load_rows(tmp_path / "check")[:3]:
        (tmp_path / "check" / row.transcript).unlink()
    assert outcomes(tmp_path / "check", "sc:3") == recorded
    # a calibrated program's rows hold the calibrated confidence: there a lost transcript is an error
    calibrated = str(tmp_path / "sc3.json")
    run_eval(model, tmp_path / "calibrated", programs=[calibrated], n=12, seed=1)
    lost = next(r for r in load_rows(tmp_path / "calibrated") if r.answer is not None)
    (tmp_path / "calibrated" / lost.transcript).unlink()
    with pytest.raises(EvalError, match=r"is missing and .* has a calibrator.*--skip-missing"):
        outcomes(tmp_path / "calibrated", calibrated)
    assert len(outcomes(tmp_path / "calibrated", calibrated, skip_missing=True)) == 11
    # one line, exit 2: no such program, another program's version, nothing to fit on
    assert main(["calibrate", str(tmp_path / "fit"), "--program", "debate"]) == 2
    assert "no debates of 'debate'" in capsys.readouterr().err
    other = scripted(lambda turn: proposal(policy(turn.inputs["question"]), 0.9))
    run_eval(other, tmp_path / "other", programs=["sc:3"])
    with pytest.raises(EvalError, match="another version of 'sc:3'"):
        calibrate(tmp_path / "fit", "sc:3", check=tmp_path / "other")
    run_eval(scripted(lambda turn: proposal(gold_of(turn.inputs["question"]))), tmp_path / "right", programs=["cot"])
    assert main(["calibrate", str(tmp_path / "right"), "--program", "cot"]) == 2
    assert "some right and some wrong" in capsys.readouterr().err


def test_bad_programs_and_tasks_are_one_line_errors(model, tmp_path, capsys):
    with pytest.raises(EvalError, match="unknown program 'nope'"):
        run_eval(model, tmp_path, programs=["cot", "nope"])
    with pytest.raises(EvalError, match="unknown program 'sc:x'"):
        run_eval(model, tmp_path, programs=["sc:x"])
    with pytest.raises(TaskError, match="unknown task"):
        evaluate(["cot"], "no-such-task", model, out=tmp_path)
    assert (
        main(
            [
                "eval",
                "--task",
                "arithmetic",
                "--model",
                model,
                "--programs",
                "missing/prog.json",
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "program file not found: missing/prog.json" in capsys.readouterr().err
    assert (
        main(
            [
                "eval",
                "--task",
                "gsm8k",
                "--split",
                "dev",
                "--model",
                model,
                "--programs",
                "cot",
                "--out",
                str(tmp_path / "y"),
            ]
        )
        == 2
    )
    assert "unknown split 'dev'" in capsys.readouterr().err


def test_cli_eval_reports_skipped_labels_and_writes_the_summary(scripted, tmp_path, capsys):
    model = scripted(lambda turn: proposal("42"))
    data = tmp_path / "data" / "gsm8k"
    data.mkdir(parents=True)
    rows = [
        {"question": "Six times seven?", "answer": "6*7=42 #### 42"},
        {"question": "Half of 84?", "answer": "#### 42"},
        {"question": "Broken label?", "answer": "no marker here"},
    ]
    (data / "test.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "out"
    code = main(
        [
            "eval",
            "--task",
            "gsm8k",
            "--model",
            model,
            "--programs",
            "cot",
            "--n",
            "5",
            "--data-dir",
            str(tmp_path / "data"),
            "--concurrency",
            "2",
            "--out",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "skipped 1 rows whose gold answer did not parse" in captured.err
    assert "cot" in captured.out and "1.000" in captured.out
    assert (out / "summary.csv").is_file() and "| cot" in (out / "summary.md").read_text()
    assert "| ('cot', 'role', 'proposer')" in (out / "cost.md").read_text()
    assert json.loads((out / "settings.json").read_text())["task"] == "gsm8k"


def _call(role, agent, round_, **output):
    return Call(role=role, agent=agent, round=round_, output=output)


def test_cli_eval_defaults_to_the_four_programs_and_a_folder_named_by_its_settings(
    model, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--task", "arithmetic", "--model", model, "--n", "2", "--concurrency", "2"]) == 0
    out = tmp_path / "runs" / f"arithmetic-{model.rsplit('/', 1)[-1]}-n2-seed0"
    assert {r.program for r in load_rows(out)} >= set(PROGRAMS)
    assert (out / "summary.md").is_file() and str(out.relative_to(tmp_path)) in capsys.readouterr().err


def test_cli_summary_of_a_stopped_run_can_keep_only_paired_questions(model, tmp_path, capsys):
    run_eval(model, tmp_path, programs=["cot", "du-mad"], concurrency=1)
    rows_file = tmp_path / "rows.jsonl"
    rows_file.write_text("\n".join(rows_file.read_text().splitlines()[:-1]) + "\n")  # du-mad's last row missing

    assert main(["summary", str(tmp_path)]) == 0
    summary = (tmp_path / "summary.md").read_text()
    assert re.search(rf"\| cot +\| +{N} ", summary) and re.search(rf"\| du-mad +\| +{N - 1} ", summary)
    assert main(["summary", str(tmp_path), "--paired"]) == 0
    assert re.search(rf"\| cot +\| +{N - 1} ", (tmp_path / "summary.md").read_text())
    assert f"{2 * N - 2} of {2 * N - 1} rows" in capsys.readouterr().err
    assert main(["summary", str(tmp_path / "nothing")]) == 2
    assert "no eval rows at" in capsys.readouterr().err


def test_strata_come_from_the_share_of_right_self_consistency_samples():
    def row(program, id, correct, samples=()):
        return EvalRow(
            program=program,
            id=id,
            gold="x",
            score=float(correct),
            correct=correct,
            confidence=0.5,
            status="converged",
            wall_s=1.0,
            proposals=[ProposalTrace(round=0, agent=i, answer="x", correct=c) for i, c in enumerate(samples)],
        )

    shares = {"q1": [True, False, False, False, False], "q2": [True, True, False, True, False], "q3": [True] * 5}
    rows = [row("sc", q, sum(v) > 2, v) for q, v in shares.items()]
    rows += [row("debate", "q1", True), row("debate", "q2", False), row("debate", "q3", True)]
    rows += [row("cot", q, True) for q in shares]  # one cot answer would call every question easy
    summary = summarize(rows)
    assert summary.loc["debate", ["acc_hard", "acc_medium", "acc_easy"]].tolist() == [1.0, 0.0, 1.0]
    assert summary.loc["sc", ["acc_hard", "acc_medium", "acc_easy"]].tolist() == [0.0, 1.0, 1.0]


def test_debate_trace_pairs_critics_with_proposals_and_scores_flips():
    rounds = [
        Round(
            index=0,
            calls=[
                _call("proposer", 0, 0, answer="5"),
                _call("proposer", 1, 0, answer="7"),
                _call("critic", 0, 0, verdict="flawed"),
                _call("critic", 1, 0, verdict="flawed"),
            ],
        ),
        Round(
            index=1,
            calls=[
                _call("proposer", 0, 1, answer="7", evidence_ref="critique 1"),
                Call(role="proposer", agent=1, round=1, error="Timeout"),
                _call("critic", 0, 1, verdict="sound"),
                _call("critic", 1, 1, verdict="sound"),
            ],
            flips=[Flip(agent=0, round=1, before="5", after="7", evidence_ref="critique 1", kind="evidence")],
        ),
        Round(
            index=2,
            calls=[
                _call("proposer", 0, 2, answer="7", evidence_ref="none"),
                _call("proposer", 1, 2, answer="5", evidence_ref="none"),
                _call("resolver", None, 2, final_answer="7"),
            ],
            flips=[Flip(agent=1, round=2, before="7", after="5", evidence_ref="none", kind="conformity")],
        ),
    ]
    trace = debate_trace(Transcript(question="q", rounds=rounds), lambda a: a == "7")
    assert [(c.round, c.agent, c.proposal_correct, c.flagged) for c in trace.critic] == [
        (0, 0, False, True),
        (0, 1, True, True),
        (1, 0, True, False),
        (1, 1, True, False),
    ]  # agent 1 kept "7"
    rates = metrics.critic_rates((c.proposal_correct, c.flagged) for c in trace.critic)
    assert (rates.hit_rate, rates.false_alarm_rate) == (1.0, 1 / 3)
    assert [(f.round, f.agent, f.kind, f.before_correct, f.after_correct) for f in trace.flips] == [
        (1, 0, "evidence", False, True),
        (2, 1, "conformity", True, False),
    ]
    assert [p.correct for p in trace.proposals] == [False, True, True, True, False]


def test_trace_counts_an_echoed_answer_as_the_debate_did_and_recounts_the_first_vote():
    rounds = [
        Round(
            index=0,
            calls=[
                _call("proposer", 0, 0, answer="answer: 7 (confidence 0.90)"),
                _call("proposer", 1, 0, answer="7.0"),
                _call("proposer", 2, 0, answer="9"),
            ],
        )
    ]
    trace = debate_trace(
        Transcript(question="q", rounds=rounds), lambda a: a.startswith("7"), normalize=lambda a: str(float(a))
    )
    assert [(p.answer, p.key, p.correct) for p in trace.proposals] == [
        ("7", "7.0", True),
        ("7.0", "7.0", True),
        ("9", "9.0", False),
    ]
    assert first_vote_right(trace.proposals) == 1.0  # 7 and 7.0 are one answer: two of three votes

    def row(program, final, keys):
        return EvalRow(
            program=program,
            id="q",
            gold="7",
            score=float(final),
            correct=final,
            confidence=0.5,
            status="converged",
            wall_s=1.0,
            proposals=[ProposalTrace(round=0, agent=i, answer=k, key=k, correct=k == "7") for i, k in enumerate(keys)],
        )

    summary = summarize([row("debate", False, ["7", "7", "9"]), row("cot", True, ["7"])])
    assert summary.loc["debate", "acc_first_vote"] == 1.0 and summary.loc["debate", "accuracy"] == 0.0
    assert math.isnan(summary.loc["cot", "acc_first_vote"])  # one answer is no vote


def test_a_preset_decides_by_the_task_kind_and_a_saved_program_as_saved(tmp_path):
    gsm8k, arc = get_task("gsm8k"), get_task("arc_challenge")
    assert build_program("debate", gsm8k, "openai/m").config.decision_protocol == "majority"
    assert build_program("debate-v1", arc, "openai/m").config.decision_protocol == "judge"
    assert build_program("du-mad", arc, "openai/m").config.decision_protocol == "majority"
    saved = tmp_path / "p.json"  # a saved program runs as saved: as `run` and `serve` would run it
    save_program(Debate(DebateConfig(model="openai/m")), saved)
    assert build_program(str(saved), gsm8k, "openai/m").config.decision_protocol == "judge"
    save_program(Debate(DebateConfig(model="openai/m", task_kind="reasoning")), saved)
    assert build_program(str(saved), arc, "openai/m").config.decision_protocol == "majority"


def test_the_debate_preset_takes_its_knowledge_form_on_a_knowledge_task():
    reasoning = build_program("debate", get_task("gsm8k"), "openai/m").config
    knowledge = build_program("debate", get_task("arc_challenge"), "openai/m").config
    assert len({a.persona for a in reasoning.agents}) == 3 and reasoning.decision_protocol == "majority"
    assert {a.persona for a in knowledge.agents} == {NEUTRAL_PERSONA}  # self-consistency's panel
    assert {a.temperature for a in knowledge.agents} == {0.7} and knowledge.decision_protocol == "majority"
    # the rest of the debate is the same: the 2-of-3 gate, one round of debate over a digest; the quantity check,
    # measured on numeric answers only, is off
    assert not knowledge.critic.quantity_check and reasoning.critic.quantity_check
    same = {"agents": [a.model_dump() for a in reasoning.agents], "protocol": "auto", "task_kind": "reasoning"}
    assert knowledge.updated(**same, critic={"quantity_check": True}) == reasoning
    # the baselines have one form
    sc = build_program("sc:3", get_task("arc_challenge"), "openai/m").config
    assert sc == build_program("sc:3", get_task("gsm8k"), "openai/m").config


def test_matched_k_is_clamped():
    def row(program, **usage):
        return EvalRow(program=program, id="q", gold="1", status="converged", usage=usage)

    sc = row("sc", prompt_tokens=90, completion_tokens=10, calls=5)  # 20 per sample
    assert matched_k([sc, row("debate", prompt_tokens=5)]) == 1
    assert matched_k([sc, row("debate", prompt_tokens=900)]) == 16
    assert matched_k([sc]) is None


def _rows(scores: dict[str, list[int]]):
    """Rows of programs "a" (115 tokens, 2 s per question) and "b" (15 tokens, 1 s) with the given scores."""
    return [
        EvalRow(
            program=p,
            id=f"q{i}",
            gold="1",
            score=float(s),
            correct=bool(s),
            status="converged",
            usage={"prompt_tokens": 100 * (p == "a") + 10, "completion_tokens": 5},
            wall_s=2.0 if p == "a" else 1.0,
        )
        for p, values in scores.items()
        for i, s in enumerate(values)
    ]


def test_compare_matches_the_metrics_functions_and_says_who_wins():
    a = [1] * 10 + [0] * 2 + [1] * 8
    b = [0] * 10 + [1] * 2 + [1] * 8
    extra = EvalRow(program="a", id="extra", gold="1", score=1.0, correct=True, status="converged")
    rows = [*_rows({"a": a, "b": b}), extra]
    c = compare(rows, "a", "b")
    assert c.n == 20 and c.accuracy_a == 0.9 and c.accuracy_b == 0.5
    assert c.mcnemar == metrics.mcnemar([bool(x) for x in a], [bool(x) for x in b])
    assert c.difference == metrics.paired_bootstrap(a, b)
    assert (c.tokens_a, c.tokens_b, c.wall_s_a, c.wall_s_b) == (115, 15, 2.0, 1.0)
    assert c.verdict.startswith("a beats b by 40.0% on 20 paired questions (McNemar p=0.0386")
    same = compare(_rows({"a": [1, 0, 1, 0], "b": [0, 1, 1, 0]}), "a", "b")
    assert same.verdict.startswith("no significant difference between a and b on 4 paired questions")
    with pytest.raises(EvalError, match="no rows for program 'c'; programs in these rows: a, b"):
        compare(rows, "a", "c")


def test_cli_compare_prints_the_paired_test(tmp_path, capsys):
    (tmp_path / "rows.jsonl").write_text(
        "\n".join(r.model_dump_json() for r in _rows({"a": [1, 1, 0], "b": [1, 0, 0]}))
    )
    assert main(["compare", str(tmp_path), "a", "b"]) == 0
    out = capsys.readouterr().out
    assert "paired questions: 3" in out and "McNemar: a only right 1, b only right 0, p = 1" in out
    assert main(["compare", str(tmp_path / "rows.jsonl"), "a", "b", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 3 and result["mcnemar"]["p_value"] == 1.0 and "verdict" in result
    assert main(["compare", str(tmp_path / "none"), "a", "b"]) == 2


def test_cli_compare_takes_program_b_from_another_eval_folder(tmp_path, capsys):
    today, yesterday = tmp_path / "today", tmp_path / "yesterday"
    for folder, scores in ((today, [1, 1, 1, 0]), (yesterday, [0, 0, 1, 0])):
        folder.mkdir()
        (folder / "rows.jsonl").write_text("\n".join(r.model_dump_json() for r in _rows({"debate": scores})))
    assert main(["compare", str(today), "debate", "debate", "--b-rows", str(yesterday), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["n"], result["accuracy_a"], result["accuracy_b"]) == (4, 0.75, 0.25)
    assert (result["mcnemar"]["a_only"], result["mcnemar"]["b_only"]) == (2, 0)
    assert (result["a"], result["b"]) == (f"debate ({today.name})", f"debate ({yesterday.name})")
    assert main(["compare", str(today), "debate", "cot", "--b-rows", str(yesterday)]) == 2
    assert "no rows for program 'cot'; programs in these rows: debate" in capsys.readouterr().err


def test_cli_compare_new_to_leaves_out_the_questions_of_an_earlier_sample(tmp_path, capsys):
    now, earlier = tmp_path / "now", tmp_path / "earlier"
    for folder, scores in ((now, {"a": [1, 1, 1, 0], "b": [0, 0, 1, 0]}), (earlier, {"a": [1, 1]})):
        folder.mkdir()
        (folder / "rows.jsonl").write_text("\n".join(r.model_dump_json() for r in _rows(scores)))
    assert main(["compare", str(now), "a", "b", "--new-to", str(earlier), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)  # q0 and q1 (a right, b wrong) were in the earlier sample
    assert (result["n"], result["left_out"], result["accuracy_a"], result["accuracy_b"]) == (2, 2, 0.5, 0.5)
    assert (result["mcnemar"]["a_only"], result["mcnemar"]["b_only"]) == (0, 0)
    assert main(["compare", str(now), "a", "b", "--new-to", str(earlier)]) == 0
    assert f"left out: 2 paired questions also in {earlier}" in capsys.readouterr().out
    assert main(["compare", str(now), "a", "b", "--new-to", str(earlier), "--record"]) == 2
    assert "--record writes the whole sample's result" in capsys.readouterr().err
    assert main(["compare", str(now), "a", "b", "--new-to", str(tmp_path / "none")]) == 2


@pytest.fixture
def bench_model_name(monkeypatch, tmp_path):
    """The bench model's name resolves without the model (a fingerprint never reads it): an empty file."""
    monkeypatch.setenv("MADSPY_MODELS_DIR", str(tmp_path))
    (tmp_path / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").touch()
    return "local/qwen2.5-coder-1.5b-instruct-q4_k_m"


# The latest eval folder of today's presets (2026-12-07): earlier folders describe programs of older prompts (a
# capped JSON list of steps; an answer field that did not ask for an option's letter), which no preset builds now.
FREE_TEXT_RUN = "bench/runs/format-2026-12-07/arc-fresh100-letter"


def test_a_new_option_at_its_earlier_behaviour_keeps_recorded_folders_valid(bench_model_name):
    """Programs recorded by committed eval folders fingerprint as they did before options were added."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    settings = json.loads((root / FREE_TEXT_RUN / "settings.json").read_text())
    recorded = settings["programs"]
    for name in ("plain", "cot"):
        program = build_program(name, get_task(settings["task"]), bench_model_name)
        assert program_fingerprint(program) == recorded[name]
        on = program.fork(critic={"calculator": True})
        assert program_fingerprint(on) != recorded[name]  # turned on, it is another program


def test_the_presets_are_the_programs_their_committed_rows_describe(bench_model_name):
    """bench/RESULTS.md reports the presets from committed rows: each preset must fingerprint as it did when the
    rows were recorded (a changed default needs new rows)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    settings = json.loads((root / FREE_TEXT_RUN / "settings.json").read_text())
    recorded, task = settings["programs"], get_task(settings["task"])
    assert {name: program_fingerprint(build_program(name, task, bench_model_name)) for name in recorded} == recorded
    variant = build_program("cot[format=json]", task, bench_model_name)  # the format is part of the program
    assert program_fingerprint(variant) != recorded["cot"]


# The config fields every recorded fingerprint covers (2026-12-06). A field added later changes every program's
# fingerprint, and so turns every recorded eval folder into "another version" (resume, calibrate, redecide and
# compare --record refuse it), unless it is registered in ``_ADDED_OFF`` with the value that keeps the earlier
# behaviour (or in ``_ADDED_WITH_ROLE``, with the role and settings it brings).
FINGERPRINTED = """adversaries.agents adversaries.answer adversaries.plant agents budget_s budget_tokens calibrator
cascade_gate credit_ledger critic.checklist_retry critic.deep_review_below critic.enabled critic.flag_weight_above
critic.isolated critic.model critic.per_answer critic.temperature defenses.critic_weighting
defenses.evidence_flips_only defenses.spotlight defenses.untrusted_as_data defenses.warn_revisers echo.reaction
echo.threshold format group_size mask.enabled mask.model mask.temperature max_tokens memory model neighbors
objective_keep protocol referee.cadence referee.enabled referee.every referee.extend_below referee.long_factor
referee.max_extra_rounds referee.max_off_topic referee.model referee.stop_on_converged referee.temperature
referee.threshold resolver.enabled resolver.model resolver.temperature rounds stop.agreement_gate
stop.decisive_confidence stop.decisive_share stop.stable_rounds summary_keep_rounds task_kind topology""".split()


def test_a_new_config_field_is_registered_so_recorded_folders_stay_valid():
    from madspy.evaluation import _ADDED_OFF, _ADDED_WITH_ROLE, _OPERATIONAL

    def paths(config: dict, prefix: str = "") -> set[str]:
        nested = {k for k, v in config.items() if isinstance(v, dict)}
        return {prefix + k for k in config.keys() - nested} | {
            p for k in nested for p in paths(config[k], f"{prefix}{k}.")
        }

    fields = paths(DebateConfig().model_dump(mode="json"))
    registered = set(_OPERATIONAL) | {f"{section}.{field}" for section, field in _ADDED_OFF}
    for (section, field), (_, settings) in _ADDED_WITH_ROLE.items():
        registered |= {f"{section}.{field}"} | {f"{section}.{name}" for name in settings}
    unregistered = fields - registered - set(FINGERPRINTED)
    assert not unregistered, f"register {sorted(unregistered)} in madspy.evaluation._ADDED_OFF (see this test's note)"
    assert set(FINGERPRINTED) <= fields, "a fingerprinted field was removed: recorded folders no longer match"


def test_program_objects_by_name_run_on_the_examples_given(model, tmp_path):
    """The object-first front door: programs as objects, the user's examples, no model string needed."""
    task = get_task("arithmetic")
    examples = task.load(n=3, seed=5)
    programs = {"mine": Debate(DebateConfig.with_agents(1, model=model, rounds=1, protocol="majority"))}
    programs["plain"] = build_program("plain", task, model)
    ev = evaluate(programs, task, out=tmp_path, examples=examples, progress=False)
    assert {(r.program, r.id) for r in ev.rows} == {(p, e.id) for p in programs for e in examples}
    assert json.loads((tmp_path / "settings.json").read_text())["model"] == model
    with pytest.raises(EvalError, match="name the model"):
        evaluate(["cot"], task, out=tmp_path / "b", examples=examples)
