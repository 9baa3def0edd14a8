"""Role-wise compile: one role's predictor, its own metric, its own recorded calls; one call per example.

Whole-program compile scores every candidate by running whole debates. Here a role is
compiled on its role dataset (``optimizers.role_data``) against its metric
(``optimizers.role_metrics``): the student is that role's predictor alone, so an example
costs one call. Demos come from these sources, counted in the report:

- ``optimizer``: what the DSPy optimizer bootstrapped (or, for GEPA/SIMBA, its instructions); with a
  ``teacher`` LM the bootstrapping optimizers run their teacher on it (DSPy's ``teacher_settings``);
- ``recorded``: recorded calls the metric calls good (a right proposal inside a debate that ended
  wrong, a critique that flagged a wrong proposal), used to fill the demo slots left empty, at no
  LM cost;
- ``hindsight`` (critic): critiques of wrong proposals written by the teacher with the gold answer in
  view (``optimizers.hindsight``), when the recorded calls hold too few hits; a critic's slots
  alternate hits and clean passes, so its demos do not teach it to pass everything;
- ``gold_rationale`` (proposer): the task's worked solutions (gsm8k, MATH, StrategyQA) as a
  proposal's steps, after the recorded right proposals.

The examples are split by question into train and dev (80/20); each role's dev score is
measured before and after. Roles not named are left exactly as they were.

Example::

    compiled, reports = compile_roles(debate, datasets, get_task("gsm8k"), "bootstrap", roles=["critic"])
    reports["critic"].dev_before, reports["critic"].dev_after
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import dspy

from madspy.core.errors import CompileError
from madspy.data import Task, get_task
from madspy.optimizers.compile import (
    Compiled,
    CompilePlan,
    calls_per_debate,
    compile_lms,
    counting_calls,
    dev_scores,
    fit_calibrator,
    split_data,
    task_config,
)
from madspy.optimizers.composite import CompositeMetric, Weights
from madspy.optimizers.hindsight import hindsight_critiques
from madspy.optimizers.role_data import RoleExample, as_demo, load_role_dataset
from madspy.optimizers.role_metrics import RoleMetric
from madspy.optimizers.specs import spec_of
from madspy.programs.artifact import save_program
from madspy.programs.config import DebateConfig
from madspy.programs.debate import Debate
from madspy.programs.formats import adapter_for
from madspy.signatures import Role

DEV_SHARE = 0.2
MAX_DEMOS = 3
GOLD_CONFIDENCE = 0.9  # what a gold-rationale demo states: sure, not certain


class OneRole(dspy.Module):
    """A single role's predictor as an optimizer's student: one call per example."""

    def __init__(self, predictor: dspy.Predict):
        super().__init__()
        self.predictor = predictor.deepcopy()
        self.predictor.lm = None  # runs on the LM in context: the task LM, or a teacher's

    def forward(self, **inputs: Any) -> dspy.Prediction:
        return self.predictor(**inputs)


@dataclass
class RoleReport:
    """What compiling one role did: data, dev scores before and after, where its demos came from."""

    role: str
    train: int
    dev: int
    dev_before: float | None
    dev_after: float | None
    demo_sources: dict[str, int]
    instructions_changed: bool
    calls: int  # LM calls made (cache hits included): task, teacher and prompt models
    hindsight: dict[str, int] | None = None  # the teacher's critiques: asked, kept, and why the rest were not

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def roles_named(names: Sequence[Role | str]) -> list[Role]:
    """The roles ``names`` stand for; an unknown name is refused with the list of roles.

    >>> roles_named(["critic", "resolver"])
    [<Role.CRITIC: 'critic'>, <Role.RESOLVER: 'resolver'>]
    """
    try:
        return [Role(name) for name in names]
    except ValueError:
        unknown = next(n for n in names if n not in {r.value for r in Role})
        raise CompileError(f"unknown role {unknown!r}; roles: {', '.join(r.value for r in Role)}") from None


def split_by_question(examples: Sequence[RoleExample], seed: int) -> tuple[list[RoleExample], list[RoleExample]]:
    """Train and dev examples, no question in both (calls of one debate are alike)."""
    ids = sorted({e.question_id for e in examples})
    random.Random(seed).shuffle(ids)
    dev_ids = set(ids[: round(len(ids) * DEV_SHARE)]) if len(ids) > 1 else set()
    return [e for e in examples if e.question_id not in dev_ids], [e for e in examples if e.question_id in dev_ids]


def _dev_score(predictor: dspy.Predict, dev: Sequence[RoleExample], metric: RoleMetric) -> float | None:
    if not dev:
        return None
    scores = []
    for e in dev:
        try:
            scores.append(metric.score(e.example(), predictor(**e.inputs)))
        except Exception:  # a reply that does not parse scores 0, as in a debate
            scores.append(0.0)
    return round(sum(scores) / len(scores), 4)


def _recorded_demos(train: Sequence[RoleExample], metric: RoleMetric, predictor: dspy.Predict) -> list[dspy.Example]:
    """Recorded calls the metric accepts, one per question, as demos holding every field of the signature."""
    demos, seen = [], set()
    for e in train:
        demo = as_demo(predictor, e.inputs | e.outputs)
        if e.question_id not in seen and demo is not None and metric.good(e.example(), dspy.Prediction(**e.outputs)):
            demos.append(demo)
            seen.add(e.question_id)
    return demos


def gold_rationale_demos(train: Sequence[RoleExample], predictor: dspy.Predict) -> list[dspy.Example]:
    """Proposer demos from the task's worked solutions: a recorded call's inputs, the gold steps and answer."""
    demos, seen = [], set()
    for e in train:
        outputs = {"reasoning": "\n".join(e.rationale), "answer": e.gold, "confidence": GOLD_CONFIDENCE}
        demo = as_demo(predictor, e.inputs | outputs)
        if e.question_id not in seen and e.rationale and demo is not None:
            demos.append(demo)
            seen.add(e.question_id)
    return demos


def _alternate(first: list[Any], second: list[Any]) -> list[Any]:
    """``first[0], second[0], first[1], ...``, then the rest of the longer list.

    >>> _alternate([1, 2, 3], ["a"])
    [1, 'a', 2, 3]
    """
    out = []
    for i in range(max(len(first), len(second))):
        out += first[i : i + 1] + second[i : i + 1]
    return out


def _top_up(
    train: Sequence[RoleExample],
    metric: RoleMetric,
    predictor: dspy.Predict,
    room: int,
    *,
    hindsight: bool,
    teacher: dspy.LM | None,
) -> tuple[list[tuple[str, dspy.Example]], dict[str, int] | None]:
    """Demos (with their source) for the ``room`` slots the optimizer left empty; the hindsight counts."""
    if room <= 0:
        return [], None
    recorded = [("recorded", d) for d in _recorded_demos(train, metric, predictor)]
    if metric.role == Role.CRITIC:
        hits = [x for x in recorded if x[1].get("verdict") == "flawed"]
        passes = [x for x in recorded if x[1].get("verdict") != "flawed"]
        wanted = room - room // 2  # half the slots, rounded up, show a hit
        counts = None
        if hindsight and len(hits) < wanted:
            covered = {d.question for _, d in hits if "question" in d}
            wrong = [e for e in train if e.inputs.get("question") not in covered]
            taught = hindsight_critiques(predictor, wrong, metric, limit=wanted - len(hits), teacher=teacher)
            hits += [("hindsight", d) for d in taught.demos]
            counts = taught.counts()
        return _alternate(hits, passes)[:room], counts
    if metric.role == Role.PROPOSER:
        recorded += [("gold_rationale", d) for d in gold_rationale_demos(train, predictor)]
    return recorded[:room], None


def compile_role(
    predictor: dspy.Predict,
    examples: Sequence[RoleExample],
    task: Task,
    role: Role,
    optimizer: str,
    *,
    seed: int = 0,
    settings: dict[str, Any] | None = None,
    prompt_lm: dspy.LM | None = None,
    max_demos: int = MAX_DEMOS,
    teacher: dspy.LM | None = None,
    hindsight: bool = True,
) -> tuple[dspy.Predict, RoleReport]:
    """A compiled copy of ``predictor`` and its report; call it inside ``dspy.context(lm=...)``.

    ``teacher`` (default: the LM in context) bootstraps demos and writes hindsight critiques;
    ``hindsight=False`` keeps the gold out of every LM call.
    """
    if not examples:
        raise CompileError(f"no {role} examples to compile on: record debates on train questions first")
    train, dev = split_by_question(examples, seed)
    metric = RoleMetric(task, role)
    spec = spec_of(optimizer)
    s = spec.settings(settings, train=len(train))
    with counting_calls() as counter:  # task, teacher and prompt models alike
        before = _dev_score(predictor, dev, metric)
        student = OneRole(predictor)
        teleprompter = spec.build(metric, prompt_lm or dspy.settings.lm, seed, s, teacher=teacher)
        compiled = spec.compile(teleprompter, student, [e.example() for e in train], seed, s).predictor
        compiled.lm = None  # the debate routes LMs per role
        sources = {"optimizer": len(compiled.demos), "recorded": 0, "hindsight": 0, "gold_rationale": 0}
        added, taught = _top_up(
            train, metric, predictor, max_demos - len(compiled.demos), hindsight=hindsight, teacher=teacher
        )
        for source, _ in added:
            sources[source] += 1
        compiled.demos = list(compiled.demos) + [demo for _, demo in added]
        after = _dev_score(compiled, dev, metric)
    report = RoleReport(
        role=str(role),
        train=len(train),
        dev=len(dev),
        dev_before=before,
        dev_after=after,
        demo_sources=sources,
        instructions_changed=compiled.signature.instructions != predictor.signature.instructions,
        calls=counter.calls,
        hindsight=taught,
    )
    return compiled, report


def compile_roles(
    debate: Debate,
    datasets: Mapping[Role, Sequence[RoleExample]],
    task: Task,
    optimizer: str,
    *,
    roles: Sequence[Role | str],
    seed: int = 0,
    settings: dict[str, Any] | None = None,
    prompt_lm: dspy.LM | None = None,
    max_demos: int = MAX_DEMOS,
    teacher: dspy.LM | None = None,
    hindsight: bool = True,
) -> tuple[Debate, dict[str, RoleReport]]:
    """A copy of ``debate`` with the ``roles`` named compiled on their datasets; the other roles untouched."""
    wanted = roles_named(roles)
    off = {str(r): switch[0] for r in wanted if (switch := debate.config.switch_of(r)) is not None and not switch[1]}
    if off:
        field = next(iter(off.values()))
        raise CompileError(
            f"the program does not run its {', '.join(off)} ({field} is false): a compiled prompt "
            f"would never be used; start from a program that runs it (e.g. --set {field}=true)"
        )
    missing = [str(r) for r in wanted if not datasets.get(r)]
    if missing:
        raise CompileError(f"no recorded calls of {', '.join(missing)} in the role datasets")
    compiled = debate.fork()
    reports = {}
    for role in wanted:
        predictor, reports[str(role)] = compile_role(
            getattr(debate, role),
            datasets[role],
            task,
            role,
            optimizer,
            seed=seed,
            settings=settings,
            prompt_lm=prompt_lm,
            max_demos=max_demos,
            teacher=teacher,
            hindsight=hindsight,
        )
        mine = getattr(compiled, role)
        mine.signature, mine.demos = predictor.signature, predictor.demos
    return compiled, reports


def compile_program_roles(
    task: str | Task,
    model: str,
    optimizer: str,
    role_data: str | Path,
    *,
    roles: Sequence[Role | str],
    dev: int,
    seed: int = 0,
    config: DebateConfig | None = None,
    weights: Weights = Weights(),
    reflection_model: str | None = None,
    data_dir: str | Path | None = None,
    settings: dict[str, Any] | None = None,
    out: str | Path | None = None,
    calibrate: bool = False,
    teacher: str | None = None,
    hindsight: bool = True,
) -> Compiled:
    """Compile the ``roles`` named on their datasets in ``role_data``; score the program and its twin on ``dev``.

    Dev questions are drawn from the compile split, leaving out every question the role data
    were recorded on. With ``out``, writes the artifact with each role's report in its manifest.
    With ``calibrate``, a confidence calibrator is fitted on the compiled program's dev debates.
    ``teacher`` is a stronger model's LiteLLM string: it bootstraps the demos and writes the
    hindsight critiques (default: ``model`` does); ``hindsight=False`` turns hindsight critiques off.

    Example::

        r = compile_program_roles("gsm8k", "openai/gpt-4o-mini", "bootstrap", "roles/gsm8k",
                                  roles=["critic", "resolver"], dev=20, out="compiled/gsm8k-roles.json")
    """
    task = get_task(task) if isinstance(task, str) else task
    started = time.perf_counter()
    datasets = {role: load_role_dataset(role_data, role) for role in roles_named(roles)}
    seen = {e.question_id for examples in datasets.values() for e in examples}
    config = task_config(task, model, config)
    first, rest = split_data(task, 1, dev + len(seen), seed, data_dir) if dev else ([], [])
    devset = [e for e in first + rest if e.id not in seen][:dev]  # a draw of dev + len(seen), role questions out
    spec = spec_of(optimizer)
    metric = CompositeMetric(task, weights, None, gate_demos=spec.gates_demos)
    task_lm, prompt_lm = compile_lms(model, config, reflection_model)
    teacher_lm = compile_lms(teacher, config.updated(api_base=None), None)[0] if teacher else None
    handwritten = Debate(config.updated(concurrency=1), normalize=task.normalize)  # role calls in turn, as compile
    with (
        dspy.context(lm=task_lm, adapter=adapter_for(model, config.format)),  # the debate's adapter
        counting_calls() as counter,
    ):
        compiled, reports = compile_roles(
            handwritten,
            datasets,
            task,
            optimizer,
            roles=roles,
            seed=seed,
            settings=settings,
            prompt_lm=prompt_lm,
            teacher=teacher_lm,
            hindsight=hindsight,
        )
        outcomes: list[tuple[float, float, bool]] = []
        scores = {
            "compiled": dev_scores(compiled, devset, metric, outcomes),
            "handwritten": dev_scores(handwritten, devset, metric),
        }
    calibrator, calibration = fit_calibrator(outcomes) if calibrate else (None, None)
    compiled.config = config.updated(calibrator=calibrator)  # the saved program keeps the configured concurrency
    wall_s = round(time.perf_counter() - started, 1)
    manifest = {
        "task": task.name,
        "model": model,
        "optimizer": {
            "name": optimizer,
            "mode": "roles",
            "settings": spec.settings(settings, train=max(1, len(seen))),
            "seed": seed,
            "reflection_model": reflection_model if spec.uses_prompt_model else None,
            "teacher": teacher,
            "hindsight": hindsight,
        },
        "metric": {"weights": asdict(weights)},
        "data": {"role_data": str(role_data), "dev": len(devset), "dev_ids": [e.id for e in devset], "seed": seed},
        "roles": {name: report.as_dict() for name, report in reports.items()},
        "dev": scores,
        "calibration": calibration,
        "calls": counter.calls,  # made, dev debates and cache hits included
        "wall_s": wall_s,
    }
    if out is not None:
        save_program(compiled, out, manifest=manifest)
    plan = CompilePlan(optimizer, manifest["optimizer"]["settings"], calls_per_debate(config), 0, 2 * len(devset), 0)
    return Compiled(compiled, plan, scores, manifest, wall_s)
