"""Compile the instructions and demos of every role of one ``Debate`` with a DSPy optimizer.

The whole ``Debate`` is the optimizer's student: ``named_predictors()`` gives its
five roles (propose, revise, critique, resolve, mask), so demos and instructions
are compiled jointly. Train and dev questions are drawn from the task by seed and
are disjoint; the optimizer sees only train, dev scores the compiled and the
hand-written program alike. LM replies go through DSPy's cache (``cache=True``
in the config), so rerunning a stopped compile with the same seed replays it.

Cost is estimated before anything runs: LM calls per debate (an upper bound from
the config, see ``calls_per_debate``) times the debates the optimizer runs (see
``plan_compile``), plus the prompt/reflection model's calls.

Example::

    from madspy.optimizers.compile import compile_program
    result = compile_program("arithmetic", "openai/gpt-4o-mini", "bootstrap", train=8, dev=8,
                             out="compiled/arithmetic.json")
    result.dev["compiled"]["accuracy"], result.dev["handwritten"]["accuracy"]
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from madspy.core.errors import CompileError
from madspy.core.models import make_lm
from madspy.data import CORRECT_AT, Task, get_task
from madspy.optimizers.composite import CompositeMetric, Terms, Weights
from madspy.optimizers.metrics import accuracy, auroc, brier, ece, mcnemar
from madspy.optimizers.specs import SPECS, spec_of
from madspy.programs.artifact import adopt_roles, save_program
from madspy.programs.calibration import Calibrator, Outcome
from madspy.programs.config import DebateConfig, TaskKind
from madspy.programs.debate import Debate
from madspy.programs.memory import MASKED
from madspy.programs.presets import preset
from madspy.signatures.roles import Role

OPTIMIZERS = tuple(SPECS)  # the names compile and the CLI accept
DEFAULT_MAX_CALLS = 2000
# What dev scores, beside each other: the compiled program; the hand-written one; the hand-written one with as many
# random train examples (gold rationales) as demos as the compiled proposer has: standard few-shot, what a
# practitioner would try first. Compiling is called better only when it beats both on dev (``dev_verdict``).
DEV_PROGRAMS = ("compiled", "handwritten", "random_demos")


@dataclass(frozen=True)
class CompilePlan:
    """What a compile will cost: debates it runs, LM calls per debate, prompt-model calls."""

    optimizer: str
    settings: dict[str, Any]
    calls_per_debate: int
    optimizer_debates: int
    dev_debates: int
    prompt_calls: int

    @property
    def calls(self) -> int:
        """Estimated LM calls in all (an upper bound per debate; early stops make it less)."""
        return (self.optimizer_debates + self.dev_debates) * self.calls_per_debate + self.prompt_calls

    def describe(self) -> str:
        return (
            f"estimated LM calls: {self.calls} = ({self.optimizer_debates} {self.optimizer} debates + "
            f"{self.dev_debates} dev debates) x {self.calls_per_debate} calls per debate"
            + (f" + {self.prompt_calls} prompt-model calls" if self.prompt_calls else "")
        )


@dataclass
class Compiled:
    """What ``compile`` produced: the program it kept (``kept`` names it) and the optimizer's own result."""

    debate: Debate  # the program kept (saved with ``out``): see ``kept_program``
    plan: CompilePlan
    dev: dict[str, dict[str, Any]]  # {"compiled": scores, "handwritten": scores, "random_demos": scores}
    manifest: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0
    kept: str = "compiled"
    optimized: Debate | None = None  # the optimizer's result, kept or not


def calls_per_debate(config: DebateConfig) -> int:
    """Upper bound of one debate's LM calls: all rounds run, no parse retries.

    Proposers ``agents x rounds``; critics as many when on (twice with
    ``checklist_retry``); mask evaluators ``agents x (rounds - 1)`` under a masking
    memory policy; the referee once per ``every`` rounds when on; one resolver call
    when the resolver is on. Rounds include the extra ones the referee may add.

    >>> calls_per_debate(DebateConfig.with_agents(2, rounds=2, protocol="majority", resolver={"enabled": False}))
    8
    """
    a, r = len(config.agents), config.round_limit
    critic = a * r * (1 + config.critic.checklist_retry) if config.critic.enabled else 0
    mask = a * (r - 1) if config.memory in MASKED and config.mask.enabled else 0
    referee = -(-r // config.referee.every) if config.referee.enabled else 0
    return a * r + critic + mask + referee + config.resolver.enabled


def plan_compile(
    optimizer: str, config: DebateConfig, n_train: int, n_dev: int, settings: dict[str, Any] | None = None
) -> CompilePlan:
    """The cost estimate of a compile (``settings`` override the optimizer's defaults, see ``optimizers.specs``).

    Debates the optimizer runs come from its spec; dev scores the compiled program, the hand-written one and the
    hand-written one with random train demos (``random_demo_control``), once each.

    >>> plan_compile("bootstrap", DebateConfig.with_agents(2, rounds=2, resolver={"enabled": False},
    ...                                                     protocol="majority"), 8, 8).calls
    256
    """
    spec = spec_of(optimizer)
    s = spec.settings(settings, n_train)
    debates, prompt_calls = spec.plan(n_train, s)
    return CompilePlan(optimizer, s, calls_per_debate(config), debates, len(DEV_PROGRAMS) * n_dev, prompt_calls)


def task_question(example: dspy.Example, task: Task) -> dspy.Example:
    """The example with the task's answer-format line appended, as ``madspy eval`` asks it."""
    return example.copy(question=task.ask(example.question))


COMPILE_SPLITS = ("train", "validation", "dev")


def compile_split(task: Task) -> str:
    """The split compiles draw from: a training or validation split when the task has one,
    so that ``madspy eval`` on the default (test) split measures held-out questions."""
    return next((s for s in COMPILE_SPLITS if s in task.splits and s != task.default_split), task.default_split)


def split_data(
    task: Task, n_train: int, n_dev: int, seed: int, data_dir: str | Path | None = None
) -> tuple[list[dspy.Example], list[dspy.Example]]:
    """Disjoint train and dev examples drawn by ``seed`` from ``compile_split(task)``
    (questions carry the task instructions)."""
    if n_train < 1 or n_dev < 0:
        raise CompileError("--train must be at least 1 and --dev at least 0")
    examples = task.load(compile_split(task), data_dir=data_dir, n=n_train + n_dev, seed=seed)
    if len(examples) < n_train + n_dev:
        raise CompileError(
            f"{task.name} has {len(examples)} usable questions; --train + --dev asks for {n_train + n_dev}"
        )
    random.Random(seed).shuffle(examples)
    examples = [task_question(e, task) for e in examples]
    return examples[:n_train], examples[n_train:]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def dev_scores(
    debate: Debate,
    devset: list[dspy.Example],
    metric: CompositeMetric,
    outcomes: list[Outcome] | None = None,
) -> dict[str, Any]:
    """Mean composite score and its terms over ``devset`` (critic over questions with critic calls).

    ``outcomes``, when given, receives each answered debate's (signals, right): what a calibrator is fitted on."""
    preds = [debate(**e.inputs()) for e in devset]
    terms: list[Terms] = [metric.terms(e, p) for e, p in zip(devset, preds, strict=True)]
    if outcomes is not None:
        for e, p in zip(devset, preds, strict=True):
            decision = p.transcript.decision
            if decision is not None and decision.answer is not None:
                outcomes.append((decision.signals, metric.correct(p.answer, e.answer)))
    critic = [t.critic for t in terms if t.critic is not None]
    right = accuracy([t.accuracy for t in terms])
    return {
        "n": len(terms),
        "composite": _mean([t.score(metric.weights) for t in terms]),
        "accuracy": _mean([t.accuracy for t in terms]),
        "accuracy_low": right.low,  # its 95% Wilson interval: on a small dev set, wide
        "accuracy_high": right.high,
        "right": [t.accuracy >= CORRECT_AT for t in terms],  # per dev question, in order: what the verdict pairs
        "critic_quality": _mean(critic),
        "calibration": _mean([t.calibration for t in terms]),
        "tokens": _mean([float(t.tokens) for t in terms]),
    }


def random_demo_control(student: Debate, trainset: Sequence[dspy.Example], k: int, seed: int) -> Debate:
    """``student`` with ``k`` train examples drawn by ``seed`` as its proposer's demos: the question, the gold
    rationale where the task has one (as the reasoning) and the gold answer. Standard k-shot prompting (as
    lm-evaluation-harness's 8-shot gsm8k), the control a compiled proposer must beat.

    >>> train = [dspy.Example(question=f"{i}+1?", answer=str(i + 1), rationale=[f"{i}+1={i + 1}"]) for i in range(9)]
    >>> control = random_demo_control(Debate(DebateConfig(model="openai/m")), train, 2, seed=0)
    >>> [(d["question"], d["reasoning"], d["answer"]) for d in control.proposer.demos]
    [('6+1?', '6+1=7', '7'), ('8+1?', '8+1=9', '9')]
    """
    control = student.fork()
    drawn = random.Random(seed).sample(list(trainset), min(k, len(trainset)))
    persona = control.config.agents[0].persona
    control.proposer.demos = [
        dspy.Example(
            question=e.question,
            persona=persona,
            reasoning="\n".join(e.get("rationale") or []),
            answer=e.answer,
            confidence=1.0,
        )
        for e in drawn
    ]
    return control


def dev_verdict(scores: dict[str, dict[str, Any]], alpha: float = 0.05) -> dict[str, Any]:
    """Whether the compiled program beat each control on dev: paired (McNemar on the same dev questions); a
    difference the test cannot tell from chance is a tie, never a win.

    >>> scores = {"compiled": {"right": [True] * 9 + [False]}, "handwritten": {"right": [False] * 9 + [True]},
    ...           "random_demos": {"right": [True] * 8 + [False] * 2}}
    >>> verdict = dev_verdict(scores)
    >>> verdict["verdict"], verdict["vs"]["handwritten"]["outcome"], verdict["vs"]["random_demos"]["outcome"]
    ('tie', 'better', 'tie')
    """
    compiled = scores["compiled"]["right"]
    versus = {}
    for name, score in scores.items():
        if name == "compiled" or len(score["right"]) != len(compiled) or not compiled:
            continue
        test = mcnemar(compiled, score["right"])
        outcome = "tie" if test.p_value >= alpha else "better" if test.a_only > test.b_only else "worse"
        versus[name] = {
            "compiled_only": test.a_only,
            "control_only": test.b_only,
            "p": test.p_value,
            "outcome": outcome,
        }
    outcomes = {v["outcome"] for v in versus.values()}
    verdict = "better" if outcomes == {"better"} else "worse" if "worse" in outcomes else "tie"
    return {"verdict": verdict, "alpha": alpha, "vs": versus}


SIMPLEST_FIRST = ("handwritten", "random_demos", "compiled")
KEEP_RULES = ("simpler", "compiled")


def kept_program(scores: dict[str, dict[str, Any]], alpha: float = 0.05) -> str:
    """Which program compile keeps: the most elaborate of hand-written, hand-written + random demos and compiled
    that beats every simpler one on dev (paired McNemar, ``p < alpha``). A tie keeps the simpler one, so a dev set
    too small to tell them apart keeps the hand-written program; no dev set keeps the optimizer's result, unchecked.

    >>> right = {"handwritten": [False] * 8 + [True] * 2, "random_demos": [True] * 9 + [False],
    ...          "compiled": [True] * 10}
    >>> kept_program({name: {"right": r} for name, r in right.items()})  # compiled ties random demos
    'random_demos'
    >>> kept_program({name: {"right": []} for name in right})
    'compiled'
    """
    order = [name for name in SIMPLEST_FIRST if name in scores]
    if not scores.get("compiled", {}).get("right"):
        return "compiled"
    kept = order[0]
    for i, name in enumerate(order[1:], 1):
        if all(_beats(scores[name]["right"], scores[simpler]["right"], alpha) for simpler in order[:i]):
            kept = name
    return kept


def _beats(right: Sequence[bool], other: Sequence[bool], alpha: float) -> bool:
    test = mcnemar(right, other)
    return test.a_only > test.b_only and test.p_value < alpha


def fit_calibrator(outcomes: list[Outcome]) -> tuple[Calibrator | None, dict[str, Any]]:
    """A calibrator fitted on dev outcomes and its dev ECE/Brier before and after (in-sample), or None and why."""
    try:
        calibrator = Calibrator.fit(outcomes)
    except ValueError as e:
        return None, {"fitted": False, "reason": str(e), "n": len(outcomes)}
    return calibrator, {"fitted": True, "in_sample": True, **calibration_quality(calibrator, outcomes)}


def calibration_quality(calibrator: Calibrator, outcomes: list[Outcome]) -> dict[str, Any]:
    """n, ECE (10 and 5 bins), Brier and AUROC of the raw and the calibrated confidence on (signals, right),
    beside the baseline any calibrator must beat: a constant at the rate it was fitted on (its ``base_rate``;
    in-sample when unknown), which has the base rate's ECE and Brier and ranks nothing (AUROC 0.5). ``ranks``
    says whether the calibrated confidence tells right from wrong at all, which a calibrator that learned only the
    base rate does not, however low its ECE."""
    correct = [c for _, c in outcomes]
    raw = [float(seen.get("confidence") or 0.0) for seen, _ in outcomes]
    calibrated = [calibrator(seen) for seen, _ in outcomes]
    rate = calibrator.base_rate if calibrator.base_rate is not None else sum(correct) / len(correct)
    constant = [rate] * len(outcomes)
    after = auroc(calibrated, correct)
    return {
        "n": len(outcomes),
        "ece_10_before": ece(raw, correct, 10),
        "ece_10_after": ece(calibrated, correct, 10),
        "ece_10_constant": ece(constant, correct, 10),
        "ece_5_before": ece(raw, correct, 5),
        "ece_5_after": ece(calibrated, correct, 5),
        "brier_before": brier(raw, correct),
        "brier_after": brier(calibrated, correct),
        "brier_constant": brier(constant, correct),
        "auroc_before": auroc(raw, correct),
        "auroc_after": after,
        "base_rate": rate,
        "distinct_after": len(set(calibrated)),
        "ranks": after is not None and after > 0.5,
    }


class CallCounter(BaseCallback):
    """Counts LM calls, cache hits included, in every thread that inherits the DSPy context (the debate's
    call threads copy it). A DSPy callback: a debate calls private LM copies, so no one LM's history holds
    them all, and DSPy's global history is capped."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        with self._lock:
            self.calls += 1


@contextmanager
def counting_calls() -> Iterator[CallCounter]:
    """The LM calls made inside the block.

    >>> with counting_calls() as counter:
    ...     pass
    >>> counter.calls
    0
    """
    counter = CallCounter()
    with dspy.context(callbacks=[*dspy.settings.get("callbacks", []), counter]):
        yield counter


def drop_wrong_answers(debate: Debate, examples: list[dspy.Example], metric: CompositeMetric) -> dict[str, int]:
    """Remove the proposer and reviser demos whose answer is wrong for their question; how many, per role.

    Bootstrapping keeps every call of a debate that ended right, so a peer's wrong answer inside it
    becomes a demo (seen on gsm8k, bench/RESULTS.md 2026-12-05). Role-wise compile keeps only right
    answers (role-level success, as in STaR's filtering); so does this, for the demos it can check.
    """
    gold = {e.question: e.answer for e in examples}
    answering = {role for role in Role if role.answers}
    dropped: dict[str, int] = {}
    for name, predictor in debate.named_predictors():
        if name not in answering:
            continue
        kept = [
            d
            for d in predictor.demos
            if (q := d.get("question")) not in gold or metric.correct(d.get("answer"), gold[q])
        ]
        if len(kept) < len(predictor.demos):
            dropped[name], predictor.demos = len(predictor.demos) - len(kept), kept
    return dropped


def base_config(model: str, preset_name: str = "debate", kind: TaskKind | None = None, **changes: Any) -> DebateConfig:
    """The hand-written program's config: a preset in its form for ``kind``, with ``model`` and ``changes``."""
    return preset(preset_name, kind=kind, model=model, **changes)


def compile_lms(model: str, config: DebateConfig, reflection_model: str | None) -> tuple[dspy.LM, dspy.LM]:
    """The LM the roles run on (temperature 0) and the optimizer's prompt/reflection LM."""
    task_lm = make_lm(
        model, temperature=0.0, max_tokens=config.max_tokens, cache=config.cache, api_base=config.api_base
    )
    prompt_lm = make_lm(
        reflection_model or model,
        temperature=1.0,
        max_tokens=max(config.max_tokens, 1024),
        cache=config.cache,
        api_base=None if reflection_model else config.api_base,
    )
    return task_lm, prompt_lm


def task_config(task: Task, model: str, config: DebateConfig | None) -> DebateConfig:
    """``config`` (default: the ``debate`` preset on ``model``), deciding by the task's kind if ``auto``."""
    return (config or base_config(model, kind=task.task_kind)).for_task_kind(task.task_kind)


def compile(
    student: Debate,
    trainset: Sequence[dspy.Example],
    devset: Sequence[dspy.Example] = (),
    *,
    task: str | Task,
    optimizer: str = "bootstrap",
    roles: Sequence[str] | None = None,
    seed: int = 0,
    weights: Weights = Weights(),
    budget_tokens: int | None = None,
    reflection_model: str | None = None,
    max_calls: int = DEFAULT_MAX_CALLS,
    settings: dict[str, Any] | None = None,
    out: str | Path | None = None,
    calibrate: bool = False,
    manifest: dict[str, Any] | None = None,
    keep: str = "simpler",
    teacher: str | None = None,
) -> Compiled:
    """Compile ``student``'s roles on ``trainset``; score the result and ``student`` itself on ``devset``.

    As ``optimizer.compile(student, trainset=)`` in DSPy: the student is any ``Debate`` (its model, format and
    settings are what is compiled for), the examples are the user's (``question``, ``answer``; ``Task.load`` gives
    them), and ``task`` reads and scores answers. ``roles`` (default all) limits what is compiled: the other roles
    keep the student's instructions and demos. With ``calibrate``, a confidence calibrator
    (``programs.calibration``) is fitted on the compiled program's dev debates and saved in its config. Refuses
    (``CompileError``) when the estimated LM calls exceed ``max_calls``. With ``out``, writes the artifact
    (``save_program``) with a manifest of the run (``manifest`` adds to it). What is kept (returned as ``debate``
    and saved) is, with ``keep="simpler"``, the simplest program that no more elaborate one beats on dev
    (``kept_program``: a tie keeps the simpler); ``keep="compiled"`` keeps the optimizer's result whatever dev says.
    ``teacher`` (a LiteLLM model string; bootstrapping optimizers only) runs the train debates whose traces become
    demos: the student on a stronger model writes them, and dev then says whether they help the student.

    Example::

        task = madspy.Task.from_file("tickets.jsonl", answer_kind="choice")
        train, dev = task.load("train"), task.load("dev")
        result = madspy.compile(madspy.Debate(madspy.DebateConfig(model="openai/gpt-4o-mini")), train, dev,
                                task=task, roles=["proposer", "reviser"], out="compiled/tickets.json")
    """
    task = get_task(task) if isinstance(task, str) else task
    trainset, devset = list(trainset), list(devset)
    if not trainset:
        raise CompileError("compile needs at least one train example")
    if keep not in KEEP_RULES:
        raise CompileError(f"keep must be one of {', '.join(KEEP_RULES)} (got {keep!r})")
    if teacher is not None and not spec_of(optimizer).takes_teacher:
        raise CompileError(f"{optimizer} takes no teacher; bootstrap, bootstrap-rs and mipro do")
    chosen = _roles_to_compile(student, roles)
    config = student.config.for_task_kind(task.task_kind)
    plan = plan_compile(optimizer, config, len(trainset), len(devset), settings)
    if plan.calls > max_calls:
        raise CompileError(
            f"{plan.describe()}; that exceeds --max-calls {max_calls}: raise --max-calls to at "
            f"least {plan.calls}, or use fewer --train/--dev questions or a smaller optimizer budget"
        )
    started = time.perf_counter()
    spec = spec_of(optimizer)
    metric = CompositeMetric(task, weights, budget_tokens, gate_demos=spec.gates_demos)
    task_lm, prompt_lm = compile_lms(config.model, config, reflection_model)
    # One role call at a time: traces (hence demos) arrive in the same order on every run, so a rerun
    # replays the cache. The saved program keeps the configured concurrency.
    handwritten = student.fork(**config.updated(concurrency=1).model_dump())
    handwritten.normalize = task.normalize
    teacher_config = config.updated(model=teacher, api_base=None, concurrency=1) if teacher else None
    taught = handwritten.fork(**teacher_config.model_dump()) if teacher_config else None
    with dspy.context(lm=task_lm), counting_calls() as counter:
        teleprompter = spec.build(metric, prompt_lm, seed, plan.settings)
        compiled = spec.compile(teleprompter, handwritten.fork(), trainset, seed, plan.settings, teacher=taught)
        _keep_roles(compiled, handwritten, chosen)
        dropped = drop_wrong_answers(compiled, trainset, metric)
        for predictor in compiled.predictors():
            predictor.lm = None  # SIMBA pins sampling LMs on predictors; the debate routes LMs per role
        outcomes: list[Outcome] = []
        k = len(compiled.proposer.demos)
        control = random_demo_control(handwritten, trainset, k, seed) if k else handwritten
        scores = {
            "compiled": dev_scores(compiled, devset, metric, outcomes),
            "handwritten": dev_scores(handwritten, devset, metric),
            "random_demos": dev_scores(control, devset, metric) | {"k": k, "seed": seed},
        }
    kept = kept_program(scores) if keep == "simpler" else "compiled"
    calibrator, calibration = fit_calibrator(outcomes) if calibrate and kept == "compiled" else (None, None)
    if calibrate and kept != "compiled":
        reason = f"kept {kept}; the calibrator is fitted on the compiled program's dev debates"
        calibration = {"fitted": False, "reason": reason}
    compiled.config = config.updated(calibrator=calibrator)
    program = {"handwritten": handwritten, "random_demos": control, "compiled": compiled}[kept]
    program.config = compiled.config  # the configured concurrency back (dev ran one call at a time)
    wall_s = round(time.perf_counter() - started, 1)
    manifest = {
        "task": task.name,
        **({"task_recipe": dict(task.recipe)} if task.recipe else {}),
        **({"task_split": asdict(task.seeded_split)} if task.seeded_split else {}),
        "model": config.model,
        "optimizer": {
            "name": optimizer,
            "settings": plan.settings,
            "seed": seed,
            "reflection_model": reflection_model if spec.uses_prompt_model else None,
            "teacher": teacher,
        },
        "roles": chosen,
        "metric": {"weights": asdict(weights), "budget_tokens": budget_tokens},
        **(manifest or {}),
        "data": {
            "train": len(trainset),
            "dev": len(devset),
            "train_ids": [e.get("id") for e in trainset],
            "dev_ids": [e.get("id") for e in devset],
            **(manifest or {}).get("data", {}),
        },
        "dev": scores,
        "dev_verdict": dev_verdict(scores),
        "kept": {"program": kept, "rule": keep},
        "demos_dropped": dropped,  # proposer/reviser demos answering wrong, taken from debates that ended right
        "calibration": calibration,
        "estimated_calls": plan.calls,
        "calls": counter.calls,  # made, dev debates and cache hits included
        "wall_s": wall_s,
    }
    if out is not None:
        save_program(program, out, manifest=manifest)
    return Compiled(program, plan, scores, manifest, wall_s, kept, compiled)


def _roles_to_compile(student: Debate, roles: Sequence[str] | None) -> list[str]:
    """``roles`` checked against the student's predictors (all of them when None)."""
    names = [name for name, _ in student.named_predictors()]
    if roles is None:
        return names
    unknown = [r for r in roles if r not in names]
    if unknown or not roles:
        raise CompileError(f"roles to compile: name some of {', '.join(names)} (got {', '.join(roles) or 'none'})")
    return list(roles)


def _keep_roles(compiled: Debate, student: Debate, chosen: Sequence[str]) -> None:
    """The roles not ``chosen`` get the student's instructions and demos back."""
    source = dict(student.named_predictors())
    for name, predictor in compiled.named_predictors():
        if name not in chosen:
            predictor.signature, predictor.demos = source[name].signature, list(source[name].demos)


def compile_program(
    task: str | Task,
    model: str,
    optimizer: str,
    *,
    train: int,
    dev: int,
    seed: int = 0,
    config: DebateConfig | None = None,
    data_dir: str | Path | None = None,
    **options: Any,
) -> Compiled:
    """``compile`` on ``train`` and ``dev`` questions drawn by ``seed`` from a task's compile split (disjoint), with
    the hand-written program of ``config`` (default: the ``debate`` preset on ``model``) as the student; the
    draw is recorded in the manifest. ``options`` are ``compile``'s.

    Example::

        r = compile_program("arithmetic", "scripted/x", "bootstrap", train=4, dev=4, out="compiled/x.json")
    """
    task = get_task(task) if isinstance(task, str) else task
    config = task_config(task, model, config)
    plan_compile(optimizer, config, train, dev, options.get("settings"))  # a bad optimizer fails before the draw
    trainset, devset = split_data(task, train, dev, seed, data_dir)
    drawn = {"data": {"split": compile_split(task), "seed": seed}}
    student = Debate(config, normalize=task.normalize)
    return compile(student, trainset, devset, task=task, optimizer=optimizer, seed=seed, manifest=drawn, **options)


def save_handwritten(
    task: str | Task,
    model: str,
    out: str | Path,
    config: DebateConfig | None = None,
    roles_from: tuple[str | Path, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Save the hand-written program as an artifact, as a compiled one is saved (A/B tests load both alike).
    ``roles_from`` (a program file, role names) gives those roles the instructions and demos they have there,
    recorded in the manifest.

    Example::

        save_handwritten("gsm8k", "openai/gpt-4o-mini", "compiled/handwritten-gsm8k.json")
        save_handwritten("gsm8k", "openai/gpt-4o-mini", "sc3.json", preset("sc:3", kind=TaskKind.NUMERIC),
                         roles_from=("compiled/gsm8k-proposer.json", ["proposer"]))
    """
    task = get_task(task) if isinstance(task, str) else task
    debate = Debate(task_config(task, model, config), normalize=task.normalize)
    manifest = {"task": task.name, "model": model, "optimizer": {"name": "handwritten"}}
    if roles_from is not None:
        manifest["roles_from"] = adopt_roles(debate, *roles_from)
    return save_program(debate, out, manifest=manifest)
