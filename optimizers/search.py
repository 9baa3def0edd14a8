"""Optuna search over debate settings: maximize accuracy, minimize tokens per question.

A trial samples one point of a space, then answers the train questions one by one. Two spaces:
``all`` (agents 1-5, rounds 1-4, protocol, memory policy, critic on/off, stop rules, echo
reaction, one debater temperature) and ``efficient`` (the ``debate`` preset's knobs around its
form for the task's kind; a new study's first trial is the preset itself).

Early stop: Optuna's ``trial.report`` / ``should_prune`` raise
``NotImplementedError`` for multi-objective studies (optuna 5.0), so a trial is
pruned by hand: after ``prune_after`` questions, if its running accuracy is more
than ``prune_margin`` below the best accuracy of the completed trials, it raises
``optuna.TrialPruned`` (state PRUNED, no values; its running accuracy is kept in
the user attribute ``accuracy_so_far``). Every trial answers the same train questions in
the same order, and keeps each question's score and tokens (user attributes ``scores`` and
``tokens``), so any two trials can be compared paired.

The study lives in ``storage`` (SQLite by default, any Optuna RDB URL): rerunning
with the same study name continues it.

Example::

    from madspy.optimizers.search import search
    result = search("arithmetic", "openai/gpt-4o-mini", trials=20, storage="sqlite:///study.db",
                    study="arith", train=10)
    [(t.number, t.values) for t in result.front]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import dspy
import optuna

from madspy.core.errors import SearchError, StoreError
from madspy.core.progress import progress_display
from madspy.data import Task, get_task
from madspy.optimizers.compile import dev_scores, split_data
from madspy.optimizers.composite import CompositeMetric
from madspy.programs.artifact import save_program
from madspy.programs.config import DebateConfig, TaskKind
from madspy.programs.debate import Debate
from madspy.programs.memory import MemoryPolicy
from madspy.programs.presets import preset
from madspy.programs.protocols import ProtocolName
from madspy.programs.topology import Topology

# The default preset's gate, exactly: a vote is decisive when held by at least share x agents, and 0.67 x 3
# agents asks for 3 of 3, so a rounded share would make "2 of 3" unreachable.
TWO_THIRDS = 2 / 3


def sample_config(trial: optuna.Trial, model: str, kind: TaskKind | None = None, **fixed: Any) -> DebateConfig:
    """The debate settings of one trial for tasks of ``kind`` (``fixed`` fields, e.g. max_tokens, are merged in)."""
    agents = trial.suggest_int("agents", 1, 5)
    temperature = trial.suggest_float("temperature", 0.0, 1.2)
    # credit needs a ledger of verified outcomes and auto defers to task_kind: neither is a setting to search
    protocol = trial.suggest_categorical("protocol", [p for p in get_args(ProtocolName) if p not in ("auto", "credit")])
    return (
        DebateConfig(model=model)
        .updated(
            agents=[{**a.model_dump(), "temperature": temperature} for a in DebateConfig.default_agents(agents)],
            rounds=trial.suggest_int("rounds", 1, 4),
            protocol=protocol,
            resolver={"enabled": protocol in ("judge", "unanimity")},
            memory=trial.suggest_categorical("memory", list(get_args(MemoryPolicy))),
            topology=trial.suggest_categorical("topology", list(get_args(Topology))),
            cascade_gate=trial.suggest_categorical("cascade_gate", [None, 0.8, 0.9]),
            critic={
                "enabled": trial.suggest_categorical("critic", [True, False]),
                "per_answer": trial.suggest_categorical("critic_per_answer", [True, False]),
            },
            stop={
                "agreement_gate": trial.suggest_categorical("agreement_gate", [None, 0.7, 0.85, 0.95]),
                "stable_rounds": trial.suggest_int("stable_rounds", 0, 2),
                **_decisive_gates(trial, [None, 0.6, TWO_THIRDS, 1.0]),
            },
            echo={"reaction": trial.suggest_categorical("echo_reaction", ["none", "devils_advocate", "stop"])},
        )
        .updated(**fixed)
        .for_task_kind(kind)
    )


def _decisive_gates(trial: optuna.Trial, shares: list[float | None]) -> dict[str, Any]:
    return {
        "decisive_share": trial.suggest_categorical("decisive_share", shares),
        "decisive_confidence": trial.suggest_categorical("decisive_confidence", [0.0, 0.5, 0.8]),
    }


def _temperatures(config: DebateConfig) -> str:
    """The agents' temperatures as one searchable choice: ``"0.7"``, or ``"0.7-0.9"`` for a spread."""
    low, high = min(a.temperature for a in config.agents), max(a.temperature for a in config.agents)
    return f"{low:g}" if low == high else f"{low:g}-{high:g}"


def sample_efficient(
    trial: optuna.Trial, model: str, kind: TaskKind | None = None, *, whole_numbers: bool = False, **fixed: Any
) -> DebateConfig:
    """One trial of the efficient debate's knobs (``madspy search --space efficient``): when round 0 is decisive
    enough to stop, whether and how the critic reviews, whether the calculator checks the arithmetic and
    that the steps reach the answer (and, on tasks other than knowledge ones, use the question's quantities;
    with ``whole_numbers``, a task whose answers are all integers, that the answer is whole),
    what revisers read, and how hot the debaters sample.

    The debate stays the ``debate`` preset's form for tasks of ``kind`` (3 agents, at most one round of
    debate; on knowledge tasks its neutral panel), so every trial costs about what the default does and a
    small study compares like with like. Temperature is the preset's own or 1.0 for every agent.
    """
    base = preset("debate", model=model, kind=kind)
    temperature = trial.suggest_categorical("temperature", [_temperatures(base), "1.0"])
    agents = [a.model_dump() | ({"temperature": 1.0} if temperature == "1.0" else {}) for a in base.agents]
    return base.updated(
        agents=agents,
        memory=trial.suggest_categorical("memory", ["digest", "previous"]),
        critic={
            "enabled": trial.suggest_categorical("critic", [True, False]),
            "per_answer": trial.suggest_categorical("critic_per_answer", [True, False]),
            "calculator": trial.suggest_categorical("calculator", [False, True]),
            "answer_check": trial.suggest_categorical("answer_check", [False, True]),
            **_numeric_checks(trial, kind, whole_numbers),
        },
        stop=_decisive_gates(trial, [TWO_THIRDS, 1.0]),
    ).updated(**fixed)


def _numeric_checks(trial: optuna.Trial, kind: TaskKind | None, whole_numbers: bool) -> dict[str, bool]:
    """The quantity check as a knob, except on knowledge tasks (it judges numeric answers only), and the
    integer check where every answer is a whole number (elsewhere a fractional answer may be right)."""
    if kind == "knowledge":
        return {}
    integer = {"integer_check": trial.suggest_categorical("integer_check", [False, True])} if whole_numbers else {}
    return {"quantity_check": trial.suggest_categorical("quantity_check", [True, False]), **integer}


def efficient_default(kind: TaskKind | None = None, whole_numbers: bool = False) -> dict[str, Any]:
    """The point of the efficient space that is the ``debate`` preset for tasks of ``kind``.

    A new efficient study tries it first, so its front always holds the setting it would replace.

    >>> sample_efficient(optuna.trial.FixedTrial(efficient_default("knowledge")), "openai/m", "knowledge") == (
    ...     preset("debate", model="openai/m", kind="knowledge"))
    True
    """
    base = preset("debate", kind=kind)
    # The preset's own value of each numeric check the space offers for this task (``_numeric_checks`` decides which).
    numeric = _numeric_checks(optuna.trial.FixedTrial(base.critic.model_dump()), kind, whole_numbers)
    return {
        "temperature": _temperatures(base),
        "memory": base.memory,
        "critic": base.critic.enabled,
        "critic_per_answer": base.critic.per_answer,
        "calculator": base.critic.calculator,
        "answer_check": base.critic.answer_check,
        **numeric,
        "decisive_share": base.stop.decisive_share,
        "decisive_confidence": base.stop.decisive_confidence,
    }


def _all_space(trial: optuna.Trial, model: str, task: Task, **fixed: Any) -> DebateConfig:
    return sample_config(trial, model, task.task_kind, **fixed)


def _efficient_space(trial: optuna.Trial, model: str, task: Task, **fixed: Any) -> DebateConfig:
    return sample_efficient(trial, model, task.task_kind, whole_numbers=task.whole_number_answers, **fixed)


# A search space: what one trial samples for a task (its kind; for the efficient space, whether answers are whole).
SPACES: dict[str, Callable[..., DebateConfig]] = {"all": _all_space, "efficient": _efficient_space}


def trial_config(space: str, trial: optuna.Trial, model: str, task: Task, **fixed: Any) -> DebateConfig:
    """The settings a trial of ``space`` samples for ``task``.

    >>> trial = optuna.trial.FixedTrial(efficient_default("reasoning", whole_numbers=True))
    >>> config = trial_config("efficient", trial, "openai/m", get_task("gsm8k"))
    >>> config == preset("debate", model="openai/m", kind="reasoning"), "integer_check" in trial.params
    (True, True)
    """
    return SPACES[space](trial, model, task, **fixed)


def _best_accuracy(study: optuna.Study) -> float | None:
    done = [t.values[0] for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))]
    return max(done) if done else None


def chosen(front: list[optuna.trial.FrozenTrial]) -> optuna.trial.FrozenTrial:
    """The front's trial with the highest accuracy, ties broken by fewer tokens."""
    if not front:
        raise SearchError("the study has no completed trial yet")
    return max(front, key=lambda t: (t.values[0], -t.values[1]))


@dataclass
class SearchResult:
    """The study after the search, its Pareto front and (with ``out``) the saved choice."""

    study: optuna.Study
    front: list[optuna.trial.FrozenTrial]
    best: optuna.trial.FrozenTrial | None
    manifest: dict[str, Any] | None


def _objective(
    task: Task,
    model: str,
    questions: list[dspy.Example],
    prune_after: int,
    prune_margin: float,
    fixed: dict[str, Any],
    space: str,
    on_question: Callable[[optuna.Trial, int, float], None],
):
    def objective(trial: optuna.Trial) -> tuple[float, float]:
        config = trial_config(space, trial, model, task, **fixed)
        debate = Debate(config, normalize=task.normalize)
        best = _best_accuracy(trial.study)
        scores, tokens = [], []
        for example in questions:
            result = debate(**example.inputs())
            scores.append(task.score(result.answer, example.answer))
            tokens.append(result.usage["prompt_tokens"] + result.usage["completion_tokens"])
            so_far = sum(scores) / len(scores)
            trial.set_user_attr("accuracy_so_far", so_far)
            trial.set_user_attr("questions_done", len(scores))
            trial.set_user_attr("scores", scores)  # per question, in order: trials are paired on them
            trial.set_user_attr("tokens", tokens)
            on_question(trial, len(scores), so_far)
            if best is not None and len(scores) >= prune_after and so_far < best - prune_margin:
                raise optuna.TrialPruned(f"accuracy {so_far:.2f} after {len(scores)} questions; best {best:.2f}")
        return sum(scores) / len(scores), sum(tokens) / len(tokens)

    return objective


def _trial_line(trial: optuna.trial.FrozenTrial) -> str:
    """The plain progress line of one finished trial.

    >>> trial = optuna.trial.create_trial(values=[0.5, 1234.4], user_attrs={"questions_done": 8})
    >>> trial.number = 4
    >>> _trial_line(trial)
    'trial 4 complete: accuracy 0.500 at 1234 tokens a question (8 asked)'
    """
    done = trial.user_attrs.get("questions_done", 0)
    if trial.values is None:
        return f"trial {trial.number} {trial.state.name.lower()} after question {done}"
    accuracy, tokens = trial.values
    return f"trial {trial.number} complete: accuracy {accuracy:.3f} at {tokens:.0f} tokens a question ({done} asked)"


def _redacted(storage: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(storage).render_as_string(hide_password=True)


def search(
    task: str | Task,
    model: str,
    *,
    trials: int,
    storage: str = "sqlite:///study.db",
    study: str,
    train: int = 10,
    dev: int = 0,
    seed: int = 0,
    data_dir: str | Path | None = None,
    prune_after: int = 3,
    prune_margin: float = 0.3,
    out: str | Path | None = None,
    space: str = "all",
    progress: bool = False,
    **fixed: Any,
) -> SearchResult:
    """Run ``trials`` more trials of study ``study`` in ``storage``; with ``out`` save the chosen setting.

    Trials are scored on ``train`` questions; the chosen setting is scored on ``dev``
    held-out questions (none when 0) for the manifest. ``space`` is what a trial samples:
    ``all`` (every mechanism, ``sample_config``) or ``efficient`` (the efficient debate's knobs,
    ``sample_efficient``; a new study's first trial is the ``debate`` preset for the task's kind); a
    study keeps the space it was made with. ``fixed`` config fields
    (e.g. ``max_tokens=128``) apply to every trial.
    """
    task = get_task(task) if isinstance(task, str) else task
    if trials < 0 or prune_after < 1 or prune_margin < 0:
        raise SearchError("--trials must be >= 0, --prune-after >= 1 and --prune-margin >= 0")
    if space not in SPACES:
        raise SearchError(f"unknown search space {space!r}; choose one of {', '.join(SPACES)}")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    the_study = _open_study(storage, study, seed)
    made_with = {"task": task.name, "model": model, "space": space, "train": train, "seed": seed}
    for name, value in made_with.items():  # a study's trials are paired on one task's questions, one model
        if the_study.user_attrs.get(name, value) != value:
            made = the_study.user_attrs[name]
            raise SearchError(f"study {study!r} was made with --{name} {made}; use --{name} {made} or another study")
    trainset, devset = split_data(task, train, dev, seed, data_dir)
    if space == "efficient" and not the_study.trials:  # the first trial of a new study is the preset it would replace
        the_study.enqueue_trial(efficient_default(task.task_kind, task.whole_number_answers))
    for name, value in made_with.items():
        the_study.set_user_attr(name, value)
    with progress_display(progress) as (bars, say):
        trials_bar = bars.add_task("trials", total=trials)
        questions_bar = bars.add_task("questions", total=len(trainset))

        def on_question(trial: optuna.Trial, done: int, accuracy: float) -> None:
            bars.update(questions_bar, completed=done, description=f"trial {trial.number}: {accuracy:.2f} so far")

        def on_trial(_: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
            bars.advance(trials_bar)
            say(_trial_line(trial))

        objective = _objective(task, model, trainset, prune_after, prune_margin, fixed, space, on_question)
        the_study.optimize(objective, n_trials=trials, callbacks=[on_trial])
    front = sorted(the_study.best_trials, key=lambda t: t.number)
    if out is None:
        return SearchResult(the_study, front, None, None)
    best = chosen(front)
    config = trial_config(space, optuna.trial.FixedTrial(best.params), model, task, **fixed)
    debate = Debate(config, normalize=task.normalize)
    manifest = {
        "task": task.name,
        "model": model,
        "optimizer": {
            "name": "optuna-search",
            "study": study,
            "storage": _redacted(storage),
            "trial": best.number,
            "space": space,
            "params": best.params,
            "trials": len(the_study.trials),
            "seed": seed,
        },
        "train": {"n": train, "accuracy": best.values[0], "tokens": best.values[1]},
        "pareto_front": [
            {"trial": t.number, "accuracy": t.values[0], "tokens": t.values[1], "params": t.params} for t in front
        ],
    }
    if devset:
        manifest["dev"] = {"chosen": dev_scores(debate, devset, CompositeMetric(task, gate_demos=False))}
    save_program(debate, out, manifest=manifest)
    return SearchResult(the_study, front, best, manifest)


def _open_study(storage: str, study: str, seed: int) -> optuna.Study:
    """The study in ``storage`` (made if new); a storage that is not an Optuna database is refused by name."""
    from sqlalchemy.exc import SQLAlchemyError

    from madspy.core.database import OPTUNA_SCHEMA_LOCK, is_database_url, one_at_a_time, with_driver

    try:
        if is_database_url(storage):  # several workers on one PostgreSQL study: Optuna's RDB storage shares the trials
            storage = with_driver(storage).render_as_string(hide_password=False)
        with one_at_a_time(
            storage, key=OPTUNA_SCHEMA_LOCK
        ):  # workers starting together would each create Optuna's schema
            return optuna.create_study(
                study_name=study,
                storage=storage,
                load_if_exists=True,
                directions=["maximize", "minimize"],
                sampler=optuna.samplers.TPESampler(seed=seed + _trial_count(storage, study)),
            )
    except (SQLAlchemyError, ValueError, StoreError) as e:  # a corrupt file, an unknown URL, other directions
        reason = " ".join(str(e).split())[:200]
        raise SearchError(f"cannot open study {study!r} in {_redacted(storage)}: {reason}") from None


def _trial_count(storage: str, study: str) -> int:
    """Trials already in ``study`` (0 if it does not exist): resumed runs sample anew, not the same points."""
    try:
        return len(optuna.load_study(study_name=study, storage=storage).trials)
    except KeyError:
        return 0
