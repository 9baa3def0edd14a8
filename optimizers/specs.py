"""One spec per DSPy optimizer: its settings, what it costs, how it is built and how it compiles.

A compile asks a spec three things: ``plan`` (debates it runs on T train questions and the
prompt-model calls it makes, an upper bound), ``build`` (the DSPy teleprompter) and ``compile``
(the call that returns the compiled module). Adding an optimizer is adding one spec to
``SPECS``; nothing else branches on its name.

Example:
    >>> spec = SPECS["bootstrap-rs"]
    >>> spec.plan(8, spec.settings({"num_candidate_programs": 3}, train=8))
    (80, 0)
    >>> SPECS["gepa"].settings(None, train=4)["max_metric_calls"]
    12
    >>> sorted(SPECS)
    ['bootstrap', 'bootstrap-rs', 'gepa', 'mipro', 'simba']
"""

from __future__ import annotations

from typing import Any, ClassVar

import dspy

from madspy.core.errors import CompileError


class OptimizerSpec:
    """A DSPy optimizer as compile uses it (subclasses fill in its name, defaults and calls)."""

    name: ClassVar[str]
    defaults: ClassVar[dict[str, Any]]
    # Bootstrapping optimizers keep demos of traces the metric accepts: under a trace the composite
    # metric answers "right or not". GEPA and SIMBA need the score itself.
    gates_demos: ClassVar[bool] = True
    uses_prompt_model: ClassVar[bool] = False
    # Bootstrapping optimizers run their traces on a teacher when given one (DSPy's teacher_settings).
    takes_teacher: ClassVar[bool] = False

    def settings(self, given: dict[str, Any] | None, train: int) -> dict[str, Any]:
        """The defaults with ``given`` merged in, fitted to ``train`` questions; an unknown setting is refused."""
        unknown = set(given or {}) - self.defaults.keys()
        if unknown:
            raise CompileError(
                f"{self.name} has no setting {', '.join(sorted(unknown))}; settings: {', '.join(self.defaults)}"
            )
        return self.fitted({**self.defaults, **(given or {})}, train)

    def fitted(self, s: dict[str, Any], train: int) -> dict[str, Any]:
        """Settings that depend on the train set's size."""
        return s

    def plan(self, train: int, s: dict[str, Any]) -> tuple[int, int]:
        """(debates the optimizer runs on ``train`` questions, prompt-model calls): upper bounds."""
        raise NotImplementedError

    def build(
        self, metric: Any, prompt_lm: dspy.LM, seed: int, s: dict[str, Any], teacher: dspy.LM | None = None
    ) -> Any:
        """The DSPy teleprompter; ``teacher`` is used only where ``takes_teacher``."""
        raise NotImplementedError

    @staticmethod
    def teacher_settings(teacher: dspy.LM | None) -> dict[str, Any]:
        return {"lm": teacher} if teacher is not None else {}

    def compile(
        self,
        optimizer: Any,
        student: dspy.Module,
        trainset: list[dspy.Example],
        seed: int,
        s: dict[str, Any],
        teacher: dspy.Module | None = None,
    ) -> dspy.Module:
        """Compile ``student``; a ``teacher`` program (the student on a stronger model) runs the traces where
        ``takes_teacher``."""
        taught = {"teacher": teacher} if teacher is not None and self.takes_teacher else {}
        return optimizer.compile(student, trainset=trainset, **taught, **self.compile_options(trainset, seed, s))

    def compile_options(self, trainset: list[dspy.Example], seed: int, s: dict[str, Any]) -> dict[str, Any]:
        """What the optimizer's ``compile`` takes beyond the student, train set and teacher."""
        return {}


class Bootstrap(OptimizerSpec):
    """BootstrapFewShot: demos from train traces the metric accepts, one pass (one debate per question)."""

    takes_teacher = True
    name = "bootstrap"
    defaults: ClassVar[dict[str, Any]] = {"max_bootstrapped_demos": 2}

    def plan(self, train: int, s: dict[str, Any]) -> tuple[int, int]:
        return train, 0

    def build(
        self, metric: Any, prompt_lm: dspy.LM, seed: int, s: dict[str, Any], teacher: dspy.LM | None = None
    ) -> Any:
        return dspy.BootstrapFewShot(
            metric=metric,
            max_bootstrapped_demos=s["max_bootstrapped_demos"],
            max_labeled_demos=0,
            max_rounds=1,
            teacher_settings=self.teacher_settings(teacher),
        )


class BootstrapRS(OptimizerSpec):
    """BootstrapFewShotWithRandomSearch: C candidate demo sets, each scored on the train set ((2C + 4) T)."""

    takes_teacher = True
    name = "bootstrap-rs"
    defaults: ClassVar[dict[str, Any]] = {"max_bootstrapped_demos": 2, "num_candidate_programs": 2, "num_threads": 1}

    def plan(self, train: int, s: dict[str, Any]) -> tuple[int, int]:
        return (2 * s["num_candidate_programs"] + 4) * train, 0

    def build(
        self, metric: Any, prompt_lm: dspy.LM, seed: int, s: dict[str, Any], teacher: dspy.LM | None = None
    ) -> Any:
        return dspy.BootstrapFewShotWithRandomSearch(
            metric=metric,
            max_bootstrapped_demos=s["max_bootstrapped_demos"],
            max_labeled_demos=0,
            num_candidate_programs=s["num_candidate_programs"],
            num_threads=s["num_threads"],
            teacher_settings=self.teacher_settings(teacher),
        )


class Mipro(OptimizerSpec):
    """MIPROv2: (C + 1) T bootstrapping, then (N + 1) trials on V = 0.8 T; 5 C instruction proposals."""

    takes_teacher = True
    name = "mipro"
    defaults: ClassVar[dict[str, Any]] = {
        "max_bootstrapped_demos": 2,
        "num_candidates": 2,
        "num_trials": 3,
        "num_threads": 1,
    }
    uses_prompt_model = True

    def plan(self, train: int, s: dict[str, Any]) -> tuple[int, int]:
        c, v = s["num_candidates"], max(1, int(0.8 * train))
        return (c + 1) * train + (s["num_trials"] + 1) * v, 5 * c

    def build(
        self, metric: Any, prompt_lm: dspy.LM, seed: int, s: dict[str, Any], teacher: dspy.LM | None = None
    ) -> Any:
        return dspy.MIPROv2(
            metric=metric,
            prompt_model=prompt_lm,
            teacher_settings=self.teacher_settings(teacher),
            auto=None,
            num_candidates=s["num_candidates"],
            max_bootstrapped_demos=s["max_bootstrapped_demos"],
            max_labeled_demos=0,
            num_threads=s["num_threads"],
            seed=seed,
            verbose=False,
            track_stats=False,
        )

    def compile_options(self, trainset: list[dspy.Example], seed: int, s: dict[str, Any]) -> dict[str, Any]:
        v = max(1, int(0.8 * len(trainset)))
        return {
            "num_trials": s["num_trials"],
            "seed": seed,
            "minibatch": v > 35,
            "program_aware_proposer": False,
            "data_aware_proposer": False,
        }


class Gepa(OptimizerSpec):
    """GEPA: reflective prompt evolution on per-role text feedback; ``max_metric_calls`` debates (3 T if unset)."""

    name = "gepa"
    defaults: ClassVar[dict[str, Any]] = {"max_metric_calls": None, "reflection_minibatch_size": 3, "num_threads": 1}
    gates_demos = False
    uses_prompt_model = True

    def fitted(self, s: dict[str, Any], train: int) -> dict[str, Any]:
        return {
            **s,
            "max_metric_calls": s["max_metric_calls"] or 3 * train,
            "reflection_minibatch_size": min(s["reflection_minibatch_size"], train),
        }

    def plan(self, train: int, s: dict[str, Any]) -> tuple[int, int]:
        return s["max_metric_calls"], -(-s["max_metric_calls"] // s["reflection_minibatch_size"])

    def build(
        self, metric: Any, prompt_lm: dspy.LM, seed: int, s: dict[str, Any], teacher: dspy.LM | None = None
    ) -> Any:
        return dspy.GEPA(
            metric=metric,
            max_metric_calls=s["max_metric_calls"],
            reflection_lm=prompt_lm,
            reflection_minibatch_size=s["reflection_minibatch_size"],
            num_threads=s["num_threads"],
            use_merge=False,
            seed=seed,
        )


class Simba(OptimizerSpec):
    """SIMBA: steps x bsize x (2C + 1) + (C + 1) T debates, one rule per candidate and step."""

    name = "simba"
    defaults: ClassVar[dict[str, Any]] = {
        "bsize": 4,
        "num_candidates": 2,
        "max_steps": 2,
        "max_demos": 2,
        "num_threads": 1,
    }
    gates_demos = False
    uses_prompt_model = True

    def fitted(self, s: dict[str, Any], train: int) -> dict[str, Any]:
        return {**s, "bsize": min(s["bsize"], train)}

    def plan(self, train: int, s: dict[str, Any]) -> tuple[int, int]:
        c = s["num_candidates"]
        return s["max_steps"] * s["bsize"] * (2 * c + 1) + (c + 1) * train, s["max_steps"] * c

    def build(
        self, metric: Any, prompt_lm: dspy.LM, seed: int, s: dict[str, Any], teacher: dspy.LM | None = None
    ) -> Any:
        return dspy.SIMBA(
            metric=metric,
            bsize=s["bsize"],
            num_candidates=s["num_candidates"],
            max_steps=s["max_steps"],
            max_demos=s["max_demos"],
            prompt_model=prompt_lm,
            num_threads=s["num_threads"],
        )

    def compile_options(self, trainset: list[dspy.Example], seed: int, s: dict[str, Any]) -> dict[str, Any]:
        return {"seed": seed}


SPECS: dict[str, OptimizerSpec] = {spec.name: spec() for spec in (Bootstrap, BootstrapRS, Mipro, Gepa, Simba)}


def spec_of(name: str) -> OptimizerSpec:
    """The spec of optimizer ``name``; an unknown name is refused with the known ones."""
    if name not in SPECS:
        raise CompileError(f"unknown optimizer {name!r}; choose one of {', '.join(SPECS)}")
    return SPECS[name]
