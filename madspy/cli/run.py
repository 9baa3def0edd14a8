"""``madspy run``: debate one question, or a JSONL file of them, with any setting reachable by flag or ``--set``.

Example::

    madspy run "What is 17 * 23?" --show
    madspy run --file questions.jsonl --json > results.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from madspy.cli.evaluate import add_robustness_options, robustness
from madspy.cli.options import add_config_flag
from madspy.core.errors import InputError
from madspy.programs.config import put, set_changes

RUN_EXAMPLES = """examples:
  madspy run "What is 17 * 23?" --show
  madspy run "Is 91 prime?" --model openai/gpt-4o-mini --agents 5 --rounds 2 --protocol majority --json
  madspy run --file questions.jsonl > results.jsonl     (one {"question": ...} per line)
"""


# Config fields reachable by name from `madspy run`: flag -> config path (help, type and choices come from the field).
RUN_OPTIONS: dict[str, str] = {
    "--model": "model",
    "--api-base": "api_base",
    "--rounds": "rounds",
    "--protocol": "protocol",
    "--task-kind": "task_kind",
    "--format": "format",
    "--max-tokens": "max_tokens",
    "--memory": "memory",
    "--topology": "topology",
    "--neighbors": "neighbors",
    "--group-size": "group_size",
    "--budget": "budget_tokens",
    "--time-budget": "budget_s",
    "--cascade": "cascade_gate",
    "--credit-ledger": "credit_ledger",
    "--echo-reaction": "echo.reaction",
    "--echo-threshold": "echo.threshold",
    "--agreement-gate": "stop.agreement_gate",
    "--decisive-share": "stop.decisive_share",
    "--decisive-confidence": "stop.decisive_confidence",
    "--stable-rounds": "stop.stable_rounds",
    "--doubt-below": "critic.doubt_below",
    "--referee-every": "referee.every",
    "--referee-extend": "referee.extend_below",
}
RUN_SWITCHES: dict[str, tuple[dict[str, Any], str]] = {
    "--critic": ({"critic.enabled": True}, "switch the critic on (debate: off; measure yours with role-eval)"),
    "--no-critic": ({"critic.enabled": False}, "switch the critic off"),
    "--no-resolver": ({"resolver.enabled": False}, "switch the resolver off (auto protocol becomes majority)"),
    "--isolated-critic": ({"critic.isolated": True}, "the critic sees only the proposal, not the question"),
    "--critic-checklist": ({"critic.checklist_retry": True}, "ask a critic that found nothing once more"),
    "--calculator": (
        {"critic.calculator": True},
        "check the arithmetic in every step (no LM call): a miscalculated answer is debated and its holder told"
        " (debate: on)",
    ),
    "--no-calculator": ({"critic.calculator": False}, "do not check the arithmetic in the steps"),
    "--answer-check": (
        {"critic.answer_check": True},
        "flag a numeric answer that no step states or computes (no LM call); it is debated and its holder told",
    ),
    "--quantity-check": (
        {"critic.quantity_check": True},
        "flag a numeric answer whose steps leave out a quantity the question gives (no LM call); it is debated"
        " (debate: on)",
    ),
    "--no-quantity-check": (
        {"critic.quantity_check": False},
        "do not check that the steps use the question's quantities",
    ),
    "--integer-check": (
        {"critic.integer_check": True},
        "flag a numeric answer with a fractional part (no LM call; for tasks whose answers are whole numbers,"
        " such as gsm8k); it is debated",
    ),
    "--readable-check": (
        {"critic.readable_check": True},
        "flag an empty answer field (no LM call; its holder is told); where a task is known (eval, compile, search)"
        " an answer field the task cannot read, such as no number on gsm8k",
    ),
    "--program-check": (
        {"critic.program_check": True},
        "flag a numeric answer that differs from what programs solving the question compute (the solver's calls,"
        " run in a sandbox); it is debated",
    ),
    "--per-answer-critic": ({"critic.per_answer": True}, "one critique per distinct answer (debate: on with --critic)"),
    "--referee": ({"referee.enabled": True}, "referee each round: relevance, interventions, topic anchor"),
    "--referee-long": ({"referee.enabled": True, "referee.cadence": "long"}, "referee only unusually long rounds"),
    "--no-cache": ({"cache": False}, "do not reuse cached LM replies"),
}


def add_run(sub: argparse._SubParsersAction) -> None:

    p = sub.add_parser(
        "run",
        help="debate one question (or a JSONL file of them)",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("question", nargs="?", help="the question to debate")
    p.add_argument("--file", type=Path, help='JSONL file, one {"question": ...} per line; one result per line out')
    p.add_argument("--program", type=Path, help="a saved program (JSON) to run instead of the hand-written roles")
    p.add_argument(
        "--preset", help="named settings: debate (default), plain, plain-sc:K, cot, pot, verify, sc, sc:K, du-mad"
    )
    p.add_argument("--agents", type=int, help="number of debaters (default 3)")
    p.add_argument(
        "--agent-modes",
        metavar="M1,M2",
        help="reasoning modes the debaters take in turn (agent i gets M[i mod n]): cot (free text), program (a "
        "program the sandbox runs) or verify (solve, then check the answer against each condition); a panel of "
        "modes errs in different places (default cot for all)",
    )
    p.add_argument(
        "--agent-models",
        metavar="M1,M2",
        help="LiteLLM models the debaters use in turn (agent i gets "
        "M[i mod n]); heterogeneous agents disagree on different things (default: --model for all)",
    )
    for flag, path in RUN_OPTIONS.items():
        add_config_flag(p, flag, path)
    for flag, (_, text) in RUN_SWITCHES.items():
        p.add_argument(flag, action="store_true", help=text)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any config field by dotted path, value as JSON (e.g. --set stop.agreement_gate=0.9)",
    )
    add_robustness_options(p)
    p.add_argument("--run-budget", type=int, help="with --file: token budget for the whole file")
    p.add_argument("--transcript", type=Path, help="write the transcript JSON here (a folder with --file)")
    p.add_argument("--show", action="store_true", help="print the whole debate")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_run)


def _debate(args: argparse.Namespace):
    from madspy.evaluation import build_program
    from madspy.programs import DebateConfig

    changes: dict[str, Any] = {}
    for path in RUN_OPTIONS.values():
        if getattr(args, path) is not None:
            put(changes, path, getattr(args, path))
    for on, off in (("critic", "no_critic"), ("calculator", "no_calculator")):
        if getattr(args, on) and getattr(args, off):
            raise InputError(f"--{on} and --{off.replace('_', '-')} contradict each other: give one")
    for flag, (settings, _) in RUN_SWITCHES.items():
        if getattr(args, flag[2:].replace("-", "_")):
            for path, value in settings.items():
                put(changes, path, value)
    set_changes(args.set, changes)
    if args.agents is not None:
        if args.agents < 1:
            raise InputError("--agents must be at least 1")
        changes["agents"] = [a.model_dump() for a in DebateConfig.default_agents(args.agents)]
    if args.program and args.preset:
        raise InputError("give --program or --preset, not both")
    wanted = robustness(args)
    if wanted["adversary"] is not None:
        changes["adversaries"] = wanted["adversary"].model_dump()
    spec = str(args.program) if args.program else args.preset or "debate"
    debate = build_program(spec, cache=changes.pop("cache", True), defenses=wanted["defenses"], changes=changes)
    config = debate.config
    models, modes = (_listed(args.agent_models), _listed(args.agent_modes))
    config = config.with_agent_models(models) if models else config
    config = config.with_agent_modes(modes) if modes else config
    return debate.fork(agents=config.model_dump()["agents"]) if config is not debate.config else debate


def _listed(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _questions(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise InputError(f"questions file not found: {path}")
    for n, raw in enumerate(path.read_bytes().splitlines(), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{path}:{n} is not valid UTF-8 (byte {e.start} of the line)") from None
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{n} is not JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str):
            raise InputError(f'{path}:{n} has no "question" string')
        yield n, row["question"]


def _print_result(result: Any, args: argparse.Namespace) -> None:
    from rich.console import Console

    from madspy.programs.debate import as_dict
    from madspy.render import render_transcript

    if args.show:
        render_transcript(result.transcript, Console(stderr=args.json))
    if args.json:
        print(json.dumps(as_dict(result), ensure_ascii=False))
    elif not args.show:
        u = result.usage
        cached = f" ({u['cached_prompt_tokens']} prompt tokens cached)" if u.get("cached_prompt_tokens") else ""
        print(result.answer)
        print(
            f"confidence {result.confidence:.2f} | status {result.status} | stop {result.stop_reason} | "
            f"{u['prompt_tokens']}+{u['completion_tokens']} tokens{cached} in {u['calls']} calls | "
            f"{result.transcript.wall_s:.1f}s",
            file=sys.stderr,
        )


def cmd_run(args: argparse.Namespace) -> int:
    if (args.question is None) == (args.file is None):
        raise InputError("give a QUESTION or --file, not both and not neither")
    if args.run_budget is not None and args.file is None:
        raise InputError("--run-budget applies to --file; use --budget for one question")
    debate = _debate(args)
    if args.question is not None:
        result = debate(question=args.question)
        if args.transcript:
            result.transcript.save(args.transcript)
        _print_result(result, args)
        return 0
    return _run_file(debate, args)


def _run_file(debate: Any, args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from madspy.programs.budget import RunBudget
    from madspy.programs.debate import as_dict

    rows = list(_questions(args.file))
    budget = RunBudget(args.run_budget) if args.run_budget else None
    if args.transcript:
        args.transcript.mkdir(parents=True, exist_ok=True)
    with Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("debating", total=len(rows))
        for line_no, question in rows:
            if budget is not None and budget.remaining <= 0:
                out = {
                    "answer": None,
                    "status": "budget_exhausted",
                    "stop_reason": "budget_exhausted",
                    "error": "the run's token budget was spent before this line",
                }
                print(json.dumps({"line": line_no, **out}), flush=True)
                progress.advance(bar)
                continue
            try:
                out = as_dict(debate(question=question, run_budget=budget))
                if args.transcript:
                    Path(args.transcript, f"line{line_no}.json").write_text(json.dumps(out["transcript"]))
            except InputError as e:  # one bad question does not stop the file
                out = {"answer": None, "status": "invalid_input", "error": str(e)}
            print(json.dumps({"line": line_no, **out}, ensure_ascii=False), flush=True)
            progress.advance(bar)
    return 0
