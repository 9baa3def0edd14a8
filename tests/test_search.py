"""Optuna search over debate settings, on a scripted model (offline, deterministic)."""

from __future__ import annotations

import optuna
import pytest
from test_compile import solver

from madspy.cli import main
from madspy.core.errors import SearchError
from madspy.data import get_task
from madspy.optimizers.search import chosen, efficient_default, sample_efficient, search, trial_config
from madspy.programs.artifact import load_program
from madspy.programs.presets import preset


@pytest.fixture
def model(scripted):
    return scripted(solver)


def test_a_search_resumes_from_its_storage_and_saves_the_chosen_setting(model, tmp_path, capsys):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = search("arithmetic", model, trials=2, storage=storage, study="s", train=2, max_tokens=64)
    assert len(first.study.trials) == 2
    for trial in first.study.trials:  # per question, paired across trials
        assert len(trial.user_attrs["scores"]) == len(trial.user_attrs["tokens"]) == 2
        assert sum(trial.user_attrs["scores"]) / 2 == trial.values[0]
    out = tmp_path / "chosen.json"
    argv = [
        "search",
        "--task",
        "arithmetic",
        "--model",
        model,
        "--trials",
        "2",
        "--storage",
        storage,
        "--study",
        "s",
        "--train",
        "2",
        "--dev",
        "1",
        "--max-tokens",
        "64",
        "--set",
        "echo.threshold=0.7",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    assert "Pareto front of s (4 trials)" in capsys.readouterr().out
    study = optuna.load_study(study_name="s", storage=storage)
    assert len(study.trials) == 4
    program = load_program(out)
    best = chosen(study.best_trials)
    assert program.manifest["optimizer"]["trial"] == best.number
    assert len(program.config.agents) == best.params["agents"] and program.config.max_tokens == 64
    assert program.config.echo.threshold == 0.7 and program.config.echo.reaction == best.params["echo_reaction"]
    assert program.manifest["dev"]["chosen"]["n"] == 1


@pytest.fixture
def wrong(scripted):
    """A model whose every answer is 0."""
    return scripted(
        lambda turn: (
            {
                "reasoning": "guess",
                "answer": "0",
                "confidence": 0.5,
                "evidence_ref": "none",
                "issues": [],
                "verdict": "sound",
                "final_answer": "0",
                "verification": "none",
                "status": "converged",
                "label": "YES",
            }
            if turn.role != "unknown"
            else "?"
        )
    )


def with_a_perfect_trial(storage: str, name: str) -> None:
    study = optuna.create_study(study_name=name, storage=storage, directions=["maximize", "minimize"])
    study.add_trial(optuna.trial.create_trial(values=[1.0, 100.0]))


def test_a_trial_far_below_the_best_is_pruned(wrong, tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    with_a_perfect_trial(storage, "p")
    result = search("arithmetic", wrong, trials=1, storage=storage, study="p", train=3, prune_after=1, max_tokens=64)
    last = result.study.trials[-1]
    assert last.state == optuna.trial.TrialState.PRUNED and last.user_attrs["questions_done"] == 1
    assert last.user_attrs["scores"] == [0.0] and last.user_attrs["tokens"][0] > 0


@pytest.mark.parametrize("kind", ["reasoning", "knowledge", None])
def test_the_efficient_space_holds_each_task_kinds_debate_preset(kind):
    default = optuna.trial.FixedTrial(efficient_default(kind))
    assert sample_efficient(default, "openai/m", kind) == preset("debate", model="openai/m", kind=kind)


def test_the_quantity_check_is_searched_where_answers_can_be_numbers():
    off = efficient_default("reasoning") | {"quantity_check": False}
    assert not sample_efficient(optuna.trial.FixedTrial(off), "openai/m", "reasoning").critic.quantity_check
    assert "quantity_check" not in efficient_default("knowledge")  # a letter answer has no quantities to use


def test_the_integer_check_is_searched_only_where_every_answer_is_whole():
    on = optuna.trial.FixedTrial(efficient_default("reasoning", whole_numbers=True) | {"integer_check": True})
    assert trial_config("efficient", on, "openai/m", get_task("gsm8k")).critic.integer_check
    assert "integer_check" not in efficient_default("reasoning")  # math500: a fractional answer can be right
    assert "integer_check" not in efficient_default("knowledge", whole_numbers=True)
    trial = optuna.create_study(directions=["maximize", "minimize"]).ask()
    trial_config("efficient", trial, "openai/m", get_task("math500"))
    assert "integer_check" not in trial.distributions and "quantity_check" in trial.distributions


def test_a_new_efficient_study_tries_the_default_debate_first(model, tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = search("arithmetic", model, trials=2, storage=storage, study="e", train=1, space="efficient")
    assert first.study.trials[0].params == efficient_default("reasoning", whole_numbers=True)
    assert "integer_check" in first.study.trials[1].params  # arithmetic's answers are whole numbers
    again = search("arithmetic", model, trials=1, storage=storage, study="e", train=1, space="efficient")
    enqueued = [t.number for t in again.study.trials if "fixed_params" in t.system_attrs]
    assert len(again.study.trials) == 3 and enqueued == [0]  # a resumed study is not sent back to the default
    with pytest.raises(SearchError, match="study 'e' was made with --task arithmetic; use --task arithmetic or"):
        search("gsm8k", model, trials=1, storage=storage, study="e", train=1, space="efficient")
    with pytest.raises(SearchError, match="made with --train 1"):  # other questions: trials would not be paired
        search("arithmetic", model, trials=1, storage=storage, study="e", train=2, space="efficient")
    with pytest.raises(SearchError, match="made with --space efficient"):
        search("arithmetic", model, trials=1, storage=storage, study="e", train=1)


def test_pruning_is_set_from_the_command_line(wrong, tmp_path, capsys):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    argv = ["search", "--task", "arithmetic", "--model", wrong, "--trials", "1", "--storage", storage, "--study", "c"]
    assert main([*argv, "--prune-margin", "-0.1"]) == 2
    assert "--prune-margin >= 0" in capsys.readouterr().err
    with_a_perfect_trial(storage, "c")
    assert main([*argv, "--train", "2", "--prune-after", "1", "--prune-margin", "1.0"]) == 0
    kept = optuna.load_study(study_name="c", storage=storage).trials[-1]  # 0 right is not 1.0 below the best
    assert f"trial {kept.number} complete: accuracy 0.000 at " in capsys.readouterr().err  # no terminal: plain lines
    assert kept.state == optuna.trial.TrialState.COMPLETE and kept.user_attrs["questions_done"] == 2
    assert main([*argv, "--train", "2", "--prune-after", "1"]) == 0
    pruned = optuna.load_study(study_name="c", storage=storage).trials[-1]
    assert pruned.state == optuna.trial.TrialState.PRUNED and pruned.user_attrs["questions_done"] == 1
    assert f"trial {pruned.number} pruned after question 1" in capsys.readouterr().err


def test_two_workers_search_one_postgresql_study_without_repeating_a_trial(model, postgres_url):
    import threading

    results = []

    def worker() -> None:  # one study is one seed: the workers' trials are told apart by their numbers
        results.append(search("arithmetic", model, trials=2, storage=postgres_url, study="s", train=2))

    workers = [threading.Thread(target=worker) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    trials = optuna.load_study(
        study_name="s", storage=postgres_url.replace("postgresql:", "postgresql+psycopg:")
    ).trials
    assert len(results) == 2 and sorted(t.number for t in trials) == [0, 1, 2, 3]
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
