"""Port a saved program to another model and measure the transfer gap on a task.

Rule for role models: ``to`` replaces the program's default ``model``, so every
role without a model of its own moves; a role with its own model (a strong
resolver, a per-agent model) keeps it, unless ``all_roles=True`` moves it too.

``recompile=True`` also compiles the program afresh for ``to`` (with the optimizer
and train/dev sizes of its manifest, default bootstrap 8/8, drawn with seed + 1)
and compares it with the ported program on the eval questions outside its train set.

Example::

    from madspy.port import port
    r = port("compiled/x.json", "openai/gpt-4o-mini", "gsm8k", n=100, out="runs/port")
    r.comparison.verdict, r.program        # paired test source vs target; runs/port/ported.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from madspy.comparison import Comparison, compare
from madspy.core.errors import PortError
from madspy.data import Task
from madspy.evaluation import evaluate
from madspy.programs.artifact import load_program, save_program
from madspy.programs.config import DebateConfig
from madspy.summary import summarize


@dataclass(frozen=True)
class PortResult:
    """Source against target on the same questions, and the ported program file."""

    source_model: str
    target_model: str
    comparison: Comparison  # a = target, b = source: the difference is the transfer gap
    summary: pd.DataFrame
    program: Path
    recompiled: Comparison | None = None  # a = recompiled, b = ported, on questions outside the compile's train set

    @property
    def gap(self) -> float:
        """Accuracy on the target model minus accuracy on the source model."""
        return self.comparison.accuracy_a - self.comparison.accuracy_b


def port_changes(config: DebateConfig, to: str, all_roles: bool = False) -> dict[str, Any]:
    """Config changes that move ``config`` to model ``to`` (role overrides kept unless ``all_roles``).

    >>> cfg = DebateConfig(resolver={"model": "openai/gpt-4o"})
    >>> DebateConfig.updated(cfg, **port_changes(cfg, "openai/gpt-4o-mini")).resolver.model
    'openai/gpt-4o'
    """
    changes: dict[str, Any] = {"model": to}
    if all_roles:
        changes["agents"] = [a.model_dump() | {"model": None} for a in config.agents]
        changes |= {role: {"model": None} for role in ("critic", "resolver", "mask")}
    return changes


def port(
    program: str | Path,
    to: str,
    task: str | Task,
    *,
    out: str | Path,
    n: int = 100,
    all_roles: bool = False,
    recompile: bool = False,
    data_dir: str | Path | None = None,
    seed: int = 0,
    concurrency: int | None = None,
    progress: bool = False,
    api_base: str | None = None,
) -> PortResult:
    """Evaluate ``program`` on its own model and, ported, on ``to`` (reached at ``api_base`` when given: a program
    file never names a server); writes ``<out>/ported.json``."""
    out, program = Path(out), Path(program)
    base = load_program(program)
    source = base.config.model
    if source == to and not all_roles:
        raise PortError(f"{program} already uses {to}")
    ported = load_program(program, **port_changes(base.config, to, all_roles))
    manifest = {"ported_from": str(program), "from_model": source, "task": base.manifest.get("task")}
    save_program(ported, out / "ported.json", manifest={k: v for k, v in manifest.items() if v is not None})
    options = {"n": n, "data_dir": data_dir, "seed": seed, "concurrency": concurrency, "progress": progress}
    before = evaluate([str(program)], task, source, out=out / "source", **options)
    after = evaluate([str(out / "ported.json")], task, to, out=out / "target", api_base=api_base, **options)
    a, b = f"target {to}", f"source {source}"
    rows = [r.model_copy(update={"program": a}) for r in after.rows] + [
        r.model_copy(update={"program": b}) for r in before.rows
    ]
    recompiled = None
    if recompile:
        path, train_ids = _recompile(base.manifest, ported.config, task, to, out, data_dir, seed + 1)
        again = evaluate([str(path)], task, to, out=out / "recompiled", api_base=api_base, **options)
        name = f"recompiled {to}"
        rows += [r.model_copy(update={"program": name}) for r in again.rows]
        held_out = [r for r in rows if r.id not in train_ids]
        recompiled = compare(held_out, name, a)
    order = [a, b] + ([f"recompiled {to}"] if recompile else [])
    return PortResult(source, to, compare(rows, a, b), summarize(rows, order=order), out / "ported.json", recompiled)


def _recompile(
    manifest: dict[str, Any],
    config: DebateConfig,
    task: str | Task,
    to: str,
    out: Path,
    data_dir: str | Path | None,
    seed: int,
) -> tuple[Path, set[str]]:
    """Compile ``config`` for ``to`` as the source program was compiled; returns its path and train ids."""
    from madspy.optimizers.compile import compile_program

    optimizer = manifest.get("optimizer") or {}
    name = optimizer.get("name") if optimizer.get("name") not in (None, "handwritten") else "bootstrap"
    data = manifest.get("data") or {}
    result = compile_program(
        task,
        to,
        name,
        train=data.get("train", 8),
        dev=data.get("dev", 8),
        seed=seed,
        config=config,
        data_dir=data_dir,
        settings=optimizer.get("settings"),
        out=out / "recompiled.json",
    )
    return out / "recompiled.json", set(result.manifest["data"]["train_ids"])
