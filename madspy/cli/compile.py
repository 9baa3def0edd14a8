"""The ``madspy compile`` and ``madspy search`` subcommands.

Example::

    madspy compile --task arithmetic --model openai/gpt-4o-mini --optimizer bootstrap --train 8 --dev 8 \
        --out compiled/arithmetic.json
    madspy compile --handwritten --task arithmetic --model openai/gpt-4o-mini \
        --out compiled/handwritten-arithmetic.json
    madspy search --task arithmetic --model openai/gpt-4o-mini --trials 20 --study arith \
        --out compiled/arith-search.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, get_args

from madspy.cli.evaluate import add_task_source, task_from_args
from madspy.programs.presets import split_specs

COMPILE_EXAMPLES = """examples:
  madspy compile --task arithmetic --model local/smollm2-135m --optimizer bootstrap --train 8 --dev 8 \\
      --agents 2 --rounds 2 --protocol majority --out compiled/arithmetic-smollm2.json
  madspy compile --task gsm8k --data-dir ../shared/data --model openai/gpt-4o-mini --optimizer gepa \\
      --reflection-model openai/gpt-4o --train 20 --dev 20 --out compiled/gsm8k-gepa.json
  madspy compile --handwritten --task gsm8k --model openai/gpt-4o-mini --out compiled/handwritten-gsm8k.json
  madspy compile --handwritten --set critic.isolated=true --task gsm8k --model local/my-model \\
      --out isolated.json      (then: madspy eval --programs debate,isolated.json ...)
  madspy compile --handwritten --preset sc:3 --roles proposer --roles-from compiled/gsm8k-proposer.json \\
      --task gsm8k --model local/my-model --out sc3-compiled-proposer.json   # a compiled role in another setting
LM replies are cached: rerun the same command to resume a stopped compile cheaply.
"""


def _add_debate_options(p: argparse.ArgumentParser) -> None:
    add_task_source(p)
    p.add_argument("--model", required=True, help="LiteLLM model string of every role")
    p.add_argument("--api-base", help="URL of the server behind --model (vLLM, Ollama, llama.cpp's server)")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/dev draw and the optimizer (default 0)")
    p.add_argument("--max-tokens", type=int, help="completion tokens per call (default: the preset's)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any config field by dotted path, value as JSON (e.g. --set critic.isolated=true)",
    )


def add_compile(sub: argparse._SubParsersAction) -> None:
    from madspy.optimizers.compile import DEFAULT_MAX_CALLS, KEEP_RULES, OPTIMIZERS
    from madspy.programs.protocols import ProtocolName

    p = sub.add_parser(
        "compile",
        help="compile every role's instructions and demos with a DSPy optimizer",
        epilog=COMPILE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_debate_options(p)
    p.add_argument("--optimizer", choices=OPTIMIZERS, help="the DSPy optimizer (required unless --handwritten)")
    p.add_argument("--handwritten", action="store_true", help="save the hand-written program instead of compiling")
    p.add_argument(
        "--keep",
        choices=KEEP_RULES,
        default="simpler",
        help="simpler (default): save the simplest of hand-written, + random demos, compiled that none beats on "
        "dev (a tie keeps the simpler); compiled: save the optimizer's result whatever dev says",
    )
    p.add_argument("--train", type=int, default=8, help="train questions the optimizer sees (default 8)")
    p.add_argument("--dev", type=int, default=8, help="held-out questions scoring both programs (default 8)")
    p.add_argument("--out", type=Path, required=True, help="the program artifact to write (JSON)")
    p.add_argument("--preset", default="debate", help="settings to start from: debate (default), cot, sc:K, du-mad")
    p.add_argument("--agents", type=int, help="number of debaters")
    p.add_argument("--rounds", type=int, help="rounds in all, round 0 included")
    p.add_argument("--protocol", choices=get_args(ProtocolName), help="how the final answer is chosen")
    p.add_argument("--critic", action="store_true", help="switch the critic on (off in debate); to compile it")
    p.add_argument(
        "--max-calls",
        type=int,
        default=DEFAULT_MAX_CALLS,
        help=f"refuse when the estimated LM calls exceed this (default {DEFAULT_MAX_CALLS})",
    )
    p.add_argument("--weights", default="acc=1,critic=0.3,calib=0.3,cost=0.1", help="composite metric weights")
    p.add_argument("--budget-tokens", type=int, help="tokens per question above which the cost term grows")
    p.add_argument("--reflection-model", help="prompt/reflection model of mipro, gepa, simba (default --model)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation on a terminal")
    p.add_argument(
        "--roles",
        help="compile only these roles (comma-separated: proposer,reviser,critic,resolver,mask,referee), each on "
        "its own recorded calls in --role-data (madspy roles); the other roles stay as written",
    )
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="fit a confidence calibrator (Platt: judge confidence, vote share) on the dev debates and save it",
    )
    p.add_argument(
        "--roles-from",
        type=Path,
        metavar="PROGRAM",
        help="with --handwritten and --roles: take those roles' instructions and demos from this program file "
        "(a role compiled in one setting, reused in another)",
    )
    p.add_argument("--role-data", type=Path, help="folder of role datasets written by madspy roles (with --roles)")
    p.add_argument(
        "--teacher",
        metavar="MODEL",
        help="a stronger model (LiteLLM string) that runs the train debates the demos come from (bootstrap, "
        "bootstrap-rs, mipro); with --roles it also writes hindsight critiques (default --model)",
    )
    p.add_argument(
        "--no-hindsight",
        action="store_true",
        help="with --roles: no hindsight critiques (the teacher never sees a gold answer)",
    )
    p.add_argument(
        "--optimizer-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an optimizer setting, value as JSON (e.g. --optimizer-set max_bootstrapped_demos=1)",
    )
    p.set_defaults(handler=cmd_compile)


def add_roles(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("roles", help="role datasets: every recorded call of eval folders, labelled by the gold answer")
    p.add_argument("eval_dirs", nargs="+", type=Path, help="eval folders (madspy eval --split train --out ...)")
    p.add_argument("--out", type=Path, required=True, help="folder to write <role>.jsonl into")
    p.add_argument(
        "--every-proposal",
        action="store_true",
        help="make every answer of every debate a critic example too, not only the proposals its critic reviewed",
    )
    p.add_argument("--data-dir", type=Path, help="where the task's rows are, for gold rationales (as madspy eval)")
    p.add_argument("--program", help="only this program's debates (a folder may hold several), as eval names it")
    p.set_defaults(handler=cmd_roles)


def cmd_roles(args: argparse.Namespace) -> int:
    from madspy.role_datasets import export_role_datasets

    counts = export_role_datasets(
        args.eval_dirs, args.out, every_proposal=args.every_proposal, data_dir=args.data_dir, program=args.program
    )
    print(", ".join(f"{role}: {n}" for role, n in counts.items()) + f" examples written to {args.out}")
    return 0


ROLE_EVAL_EXAMPLES = """examples:
  madspy eval --task gsm8k --model M --programs du-mad,debate --out runs/gsm8k-test
  madspy roles runs/gsm8k-test --every-proposal --out roles/gsm8k-test
  madspy role-eval roles/gsm8k-test --role critic --task gsm8k --model M \\
      --programs debate,compiled/gsm8k-critic.json --out runs/critic-ab --record
rerun the same command to resume; rows already in OUT/rows.jsonl are skipped.
"""


def add_role_eval(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "role-eval",
        help="A/B test one role of several programs on a role dataset (one call per example)",
        epilog=ROLE_EVAL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("role_data", type=Path, help="folder of role datasets (madspy roles), e.g. from held-out questions")
    p.add_argument("--role", required=True, help="the role to score: critic, resolver, proposer, ...")
    p.add_argument("--programs", required=True, help="comma-separated presets and/or program files; the first is A")
    add_task_source(p)  # how answers score
    p.add_argument("--model", required=True, help="LiteLLM model string every program uses")
    p.add_argument("--api-base", help="URL of the server behind --model")
    p.add_argument("--limit", type=int, help="score only the first N examples")
    p.add_argument("--out", type=Path, required=True, help="folder for rows.jsonl and summary.json")
    p.add_argument(
        "--record",
        action="store_true",
        help="write each program file's A/B against the first program into its manifest (held_out_roles)",
    )
    p.set_defaults(handler=cmd_role_eval)


def cmd_role_eval(args: argparse.Namespace) -> int:
    from madspy.core.errors import EvalError
    from madspy.evaluation import is_program_file
    from madspy.held_out import record_role_comparison, role_data_split
    from madspy.optimizers.role_compile import roles_named
    from madspy.role_scores import score_role

    (role,) = roles_named([args.role])
    programs = split_specs(args.programs)
    recordable = [p for p in programs[1:] if is_program_file(p)]
    if args.record:  # refused before any call rather than after the A/B
        if not recordable:
            raise EvalError("--record needs a program file after the first program (the one it is compared against)")
        role_data_split(args.role_data)
    summary = score_role(
        args.role_data,
        role,
        programs,
        task_from_args(args),
        args.model,
        out=args.out,
        limit=args.limit,
        api_base=args.api_base,
        progress=True,
    )
    print(json.dumps(summary, indent=2))
    for program in recordable if args.record else []:
        entry = record_role_comparison(args.out, program)
        print(
            f"recorded in {program}: {entry['good']} vs {entry['good_against']} good of {entry['examples']}, "
            f"McNemar p = {entry['mcnemar_p']:.3g}",
            file=sys.stderr,
        )
    return 0


def add_search(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="Optuna search of debate settings: accuracy vs tokens per question")
    _add_debate_options(p)
    p.add_argument("--trials", type=int, required=True, help="trials to run now (added to the study's)")
    p.add_argument("--storage", default="sqlite:///study.db", help="Optuna storage URL (default sqlite:///study.db)")
    p.add_argument("--study", required=True, help="study name; rerun with the same name to continue it")
    p.add_argument("--train", type=int, default=10, help="questions each trial is scored on (default 10)")
    p.add_argument("--dev", type=int, default=0, help="held-out questions scoring the chosen setting (with --out)")
    p.add_argument("--out", type=Path, help="save the chosen setting (best accuracy on the front) as a program")
    p.add_argument(
        "--prune-after", type=int, default=3, help="questions a trial answers before it may be stopped (default 3)"
    )
    p.add_argument(
        "--prune-margin",
        type=float,
        default=0.3,
        help="stop a trial whose running accuracy is this far below the best finished trial's (default 0.3)",
    )
    p.add_argument(
        "--space",
        choices=["all", "efficient"],
        default="all",
        help="what a trial samples: every mechanism (all), or the default debate's knobs (decisive-vote gates, "
        "critic on/off and per answer, calculator and answer check, digest or previous memory, temperatures) "
        "around the debate preset for the task's kind, which a new study tries first",
    )
    p.set_defaults(handler=cmd_search)


def _config_changes(args: argparse.Namespace) -> dict[str, Any]:
    from madspy.programs.config import DebateConfig, set_changes

    changes: dict[str, Any] = {
        k: getattr(args, k) for k in ("rounds", "protocol", "max_tokens", "api_base") if getattr(args, k) is not None
    }
    if args.agents is not None:
        changes["agents"] = [a.model_dump() for a in DebateConfig.default_agents(args.agents)]
    if args.protocol == "majority":
        changes["resolver"] = {"enabled": False}
    if args.critic:
        changes["critic"] = {"enabled": True}
    return set_changes(args.set, changes)


def cmd_compile(args: argparse.Namespace) -> int:
    from madspy.optimizers.compile import CompileError, base_config, compile_program, plan_compile, save_handwritten
    from madspy.optimizers.composite import Weights
    from madspy.programs.config import set_changes

    task = task_from_args(args)
    kind = task.task_kind
    config = base_config(args.model, args.preset, kind=kind, **_config_changes(args))
    if args.roles_from and not (args.handwritten and args.roles):
        raise CompileError("--roles-from goes with --handwritten and --roles (the roles to take from the file)")
    if args.handwritten:
        if args.roles and not args.roles_from:
            raise CompileError("--handwritten with --roles needs --roles-from (the program file to take them from)")
        roles_from = (args.roles_from, _role_names(args.roles)) if args.roles_from else None
        save_handwritten(task, args.model, args.out, config=config, roles_from=roles_from)
        print(f"wrote {args.out}", file=sys.stderr)
        return 0
    if args.optimizer is None:
        raise CompileError("give --optimizer (or --handwritten)")
    settings = set_changes(args.optimizer_set) or None
    if args.roles or args.role_data:
        return _compile_roles(args, config, Weights.parse(args.weights), settings)
    if args.no_hindsight:
        raise CompileError("--no-hindsight applies to role-wise compile (--roles, --role-data)")
    plan = plan_compile(args.optimizer, config, args.train, args.dev, settings)
    if plan.calls <= args.max_calls:  # above it, compile_program refuses with the estimate
        print(plan.describe(), file=sys.stderr)
        if not args.yes and sys.stdin.isatty() and input("run it? [y/N] ").strip().lower() not in ("y", "yes"):
            return 1
    result = compile_program(
        task,
        args.model,
        args.optimizer,
        train=args.train,
        dev=args.dev,
        seed=args.seed,
        config=config,
        weights=Weights.parse(args.weights),
        budget_tokens=args.budget_tokens,
        reflection_model=args.reflection_model,
        data_dir=args.data_dir,
        max_calls=args.max_calls,
        out=args.out,
        calibrate=args.calibrate,
        settings=settings,
        keep=args.keep,
        teacher=args.teacher,
    )
    dev = {name: {k: _rounded(v) for k, v in score.items() if k != "right"} for name, score in result.dev.items()}
    verdict = result.manifest["dev_verdict"]["verdict"]  # compiled against both controls, paired
    summary = {"out": str(args.out), "wall_s": result.wall_s, "dev": dev, "dev_verdict": verdict, "kept": result.kept}
    print(json.dumps(summary, indent=2))
    if result.kept != "compiled":
        print(
            f"saved the {result.kept} program: on {len(result.dev['compiled']['right'])} dev questions the compiled "
            "one did not beat it (--keep compiled saves the optimizer's result; more --dev questions can tell)",
            file=sys.stderr,
        )
    return 0


def _role_names(spec: str) -> list[str]:
    return [r.strip() for r in spec.split(",") if r.strip()]


def _compile_roles(args: argparse.Namespace, config: Any, weights: Any, settings: dict[str, Any] | None) -> int:
    from madspy.optimizers.compile import CompileError
    from madspy.optimizers.role_compile import compile_program_roles

    if not (args.roles and args.role_data):
        raise CompileError("--roles and --role-data go together (build the data with madspy roles)")
    result = compile_program_roles(
        task_from_args(args),
        args.model,
        args.optimizer,
        args.role_data,
        roles=_role_names(args.roles),
        dev=args.dev,
        seed=args.seed,
        config=config,
        weights=weights,
        reflection_model=args.reflection_model,
        data_dir=args.data_dir,
        out=args.out,
        calibrate=args.calibrate,
        settings=settings,
        teacher=args.teacher,
        hindsight=not args.no_hindsight,
    )
    summary = {"out": str(args.out), "wall_s": result.wall_s, "roles": result.manifest["roles"], "dev": result.dev}
    print(json.dumps(summary, indent=2))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from madspy.optimizers.search import search
    from madspy.programs.config import set_changes

    fixed = set_changes(args.set, {k: getattr(args, k) for k in ("max_tokens", "api_base") if getattr(args, k)})
    result = search(
        task_from_args(args),
        args.model,
        trials=args.trials,
        storage=args.storage,
        study=args.study,
        train=args.train,
        dev=args.dev,
        seed=args.seed,
        data_dir=args.data_dir,
        out=args.out,
        space=args.space,
        prune_after=args.prune_after,
        prune_margin=args.prune_margin,
        progress=True,
        **fixed,
    )
    table = Table(title=f"Pareto front of {args.study} ({len(result.study.trials)} trials)")
    for column in ("trial", "accuracy", "tokens/question", "settings"):
        table.add_column(column, justify="right" if column != "settings" else "left")
    for t in result.front:
        mark = " *" if result.best is not None and t.number == result.best.number else ""
        table.add_row(
            f"{t.number}{mark}",
            f"{t.values[0]:.3f}",
            f"{t.values[1]:.0f}",
            " ".join(f"{k}={v}" for k, v in t.params.items()),
        )
    Console().print(table)
    if args.out:
        print(f"wrote {args.out} (trial {result.best.number}, marked *)", file=sys.stderr)
    return 0


def _rounded(value: Any) -> Any:
    """A score as the summary prints it: three decimals (the manifest keeps full precision)."""
    return round(value, 3) if isinstance(value, float) else value
