"""The ``madspy serve``, ``ab``, ``port``, ``show``, ``report`` and ``export-pairs`` subcommands.

Example:
    $ MADSPY_API_KEY=... madspy serve --program compiled/x.json --host 0.0.0.0
    $ madspy serve --program arith=compiled/x.json --program gsm8k=compiled/y.json   # two programs by name
    $ madspy ab --a compiled/x.json --b handwritten --task arithmetic --model openai/gpt-4o-mini --n 50
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from madspy.cli.evaluate import add_task_options, task_from_args

if TYPE_CHECKING:
    import pandas as pd

    from madspy.comparison import Comparison
    from madspy.programs.transcript import Transcript


PROGRAM_NAME = re.compile(r"[A-Za-z0-9][\w.:-]*")


def parse_programs(specs: list[str]) -> dict[str, Path]:
    """``--program`` values by name: ``NAME=PATH`` (NAME of letters, digits, ``._:-``), else a path named by its stem.

    >>> for name, path in parse_programs(["arith=compiled/a.json", "compiled/gsm8k.json", "runs/k=2/p.json"]).items():
    ...     print(name, path)
    arith compiled/a.json
    gsm8k compiled/gsm8k.json
    p runs/k=2/p.json
    """
    from madspy.core.errors import InputError

    programs: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not PROGRAM_NAME.fullmatch(name):
            name, path = Path(spec).stem, spec
        if not name or not path:
            raise InputError(f"--program expects NAME=PATH or PATH, got {spec!r}")
        if name in programs:
            raise InputError(f"two programs named {name!r}: name them with --program NAME=PATH")
        programs[name] = Path(path)
    return programs


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve programs over HTTP: madspy's API and OpenAI's chat completions")
    p.add_argument(
        "--program",
        action="append",
        required=True,
        metavar="[NAME=]PATH",
        help="a saved program (JSON), served as NAME (the model of a chat request; default: the file "
        "stem); repeat to serve several, the first answers /v1/debate requests naming none",
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1; others need MADSPY_API_KEY)"
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--store",
        "--db",
        default="transcripts.sqlite3",
        help="where transcripts go: a SQLite file (default transcripts.sqlite3) or a database URL such as "
        "postgresql://madspy@db/madspy, shared by every replica",
    )
    p.add_argument("--max-concurrent", type=int, default=4, help="debates at once; more get 429 (default 4)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request before 504 (default 120)")
    p.add_argument("--max-body", type=int, default=65536, help="request body bytes before 413 (default 65536)")
    p.add_argument("--budget-tokens", type=int, help="ceiling on each debate's token budget")
    p.add_argument("--model", help="run every program on this LiteLLM model instead of the one it was saved with")
    p.add_argument("--api-base", help="URL of the server behind the programs' model (vLLM, Ollama, llama.cpp's)")
    p.add_argument("--lm-timeout", type=float, help="seconds per LM call (default 120)")
    p.add_argument("--num-retries", type=int, help="LiteLLM retries per LM call on timeouts, 429 and 5xx (default 3)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached LM replies")
    p.add_argument("--concurrency", type=int, help="LM calls in flight within one debate (default 8)")
    p.add_argument(
        "--credit-ledger", help="JSON file or database URL of per-agent credit, for programs deciding by credit"
    )
    p.set_defaults(handler=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from madspy.core.errors import InputError
    from madspy.server.app import ServeSettings, check_bind, serve

    if args.max_concurrent < 1 or args.timeout <= 0 or args.max_body < 1:
        raise InputError("--max-concurrent, --timeout and --max-body must be positive")
    settings = ServeSettings(
        host=args.host,
        port=args.port,
        store=args.store,
        max_concurrent=args.max_concurrent,
        timeout_s=args.timeout,
        max_body=args.max_body,
        budget_tokens=args.budget_tokens,
        model=args.model,
        api_base=args.api_base,
        lm_timeout_s=args.lm_timeout,
        num_retries=args.num_retries,
        cache=False if args.no_cache else None,
        concurrency=args.concurrency,
        credit_ledger=args.credit_ledger,
    )
    check_bind(settings.host, settings.api_key)  # before loading anything
    serve(parse_programs(args.program), settings)
    return 0


AB_EXAMPLES = """examples:
  madspy ab --a compiled/x.json --b handwritten --task gsm8k --model openai/gpt-4o-mini --n 100 --out runs/ab
handwritten opposite a saved program is its hand-written twin: the same settings with the
roles' own instructions and no demos (saved as OUT/handwritten.json), so the A/B measures
what compiling changed; opposite a preset it is the debate preset. Presets (cot, sc, du-mad) work too.
"""


def add_ab(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ab",
        help="A/B test two programs on the same questions, with an HTML report",
        epilog=AB_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--a", required=True, help="program A: a saved program (JSON), a preset or handwritten")
    p.add_argument("--b", default="handwritten", help="program B (default handwritten)")
    add_task_options(p)
    p.add_argument("--model", required=True, help="LiteLLM model string both programs use")
    p.add_argument("--out", type=Path, default=Path("runs/ab"), help="folder for rows, transcripts, report.html")
    p.set_defaults(handler=cmd_ab)


def _comparison_table(title: str, summary: pd.DataFrame, c: Comparison) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("metric")
    for name in summary.index:
        table.add_column(str(name), justify="right")

    def row(label: str, column: str, fmt: str) -> None:
        values = [summary.loc[name, column] for name in summary.index]
        table.add_row(label, *("-" if v != v else format(v, fmt) for v in values))  # v != v: NaN

    row("accuracy", "accuracy", ".3f")
    table.add_row(
        "95% interval", *(f"{summary.loc[n, 'ci_low']:.3f}-{summary.loc[n, 'ci_high']:.3f}" for n in summary.index)
    )
    row("tokens / question", "tokens", ".0f")
    row("seconds / question", "wall_s", ".2f")
    row("ECE", "ece", ".3f")
    row("critic hit-rate", "critic_hit_rate", ".3f")
    console = Console()
    console.print(table)
    d = c.difference
    console.print(
        f"difference {c.a} - {c.b}: {d.mean_difference:+.3f} (95% paired-bootstrap CI {d.low:+.3f} to "
        f"{d.high:+.3f}); McNemar p = {c.mcnemar.p_value:.4g}"
    )
    console.print(f"[bold]{c.verdict}[/bold]")


def cmd_ab(args: argparse.Namespace) -> int:
    from madspy.ab import ab

    task = task_from_args(args)
    result = ab(
        args.a,
        args.b,
        task,
        args.model,
        out=args.out,
        n=args.n,
        seed=args.seed,
        data_dir=args.data_dir,
        concurrency=args.concurrency,
        progress=True,
    )
    _comparison_table(f"A/B on {task.name}", result.summary, result.comparison)
    print(f"report: {result.report}")
    return 0


def add_port(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("port", help="evaluate a program on its own model and on another: the transfer gap")
    p.add_argument("--program", type=Path, required=True, help="a saved program (JSON)")
    p.add_argument("--to", required=True, help="the LiteLLM model to port to")
    p.add_argument("--api-base", help="URL of the server behind --to (vLLM, Ollama, llama.cpp's server)")
    add_task_options(p)
    p.add_argument(
        "--all-roles", action="store_true", help="move roles with their own model too (default: they keep it)"
    )
    p.add_argument(
        "--recompile", action="store_true", help="also compile the program afresh for the new model and compare"
    )
    p.add_argument("--out", type=Path, default=Path("runs/port"), help="folder for both evals and ported.json")
    p.set_defaults(handler=cmd_port)


def cmd_port(args: argparse.Namespace) -> int:
    from madspy.port import port

    task = task_from_args(args)
    r = port(
        args.program,
        args.to,
        task,
        out=args.out,
        n=args.n,
        seed=args.seed,
        data_dir=args.data_dir,
        concurrency=args.concurrency,
        all_roles=args.all_roles,
        recompile=args.recompile,
        progress=True,
        api_base=args.api_base,
    )
    _comparison_table(f"port {r.source_model} -> {r.target_model} on {task.name}", r.summary, r.comparison)
    print(
        f"transfer gap (target - source accuracy): {r.gap:+.3f}; tokens {r.comparison.tokens_b:.0f} -> "
        f"{r.comparison.tokens_a:.0f} per question"
    )
    print(f"ported program: {r.program}")
    if r.recompiled is not None:
        print(f"recompiled for {r.target_model} (held-out questions): {r.recompiled.verdict}")
    return 0


def add_show(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="render a transcript JSON on the terminal")
    p.add_argument("transcript", type=Path, help="a transcript JSON (madspy run --transcript, eval transcripts/)")
    p.set_defaults(handler=cmd_show)


def _transcript(path: Path) -> Transcript:
    from pydantic import ValidationError

    from madspy.core.errors import InputError
    from madspy.programs.transcript import Transcript

    if not path.is_file():
        raise InputError(f"transcript not found: {path}")
    try:
        return Transcript.load(path)
    except ValidationError:
        raise InputError(f"{path} is not a madspy transcript") from None


def cmd_show(args: argparse.Namespace) -> int:
    from madspy.render import render_transcript

    render_transcript(_transcript(args.transcript))
    return 0


def add_report(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="an HTML page of a transcript JSON or of an eval folder")
    p.add_argument(
        "path", type=Path, help="a transcript JSON (-> .html beside it) or an eval folder (-> report.html in it)"
    )
    p.add_argument("--programs", help="comma-separated programs of the eval to show (default: all)")
    p.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from madspy.report import write_eval_report, write_transcript_report

    if args.path.is_dir():
        programs = [p.strip() for p in args.programs.split(",")] if args.programs else None
        print(write_eval_report(args.path, programs))
        return 0
    _transcript(args.path)  # a clear error before rendering
    print(write_transcript_report(args.path))
    return 0


def add_export_pairs(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-pairs", help="DPO preference pairs (wrong answer revised into a right one)")
    p.add_argument("eval_dir", type=Path, help="an eval folder (madspy eval --out)")
    p.add_argument("--out", type=Path, required=True, help="JSONL file: prompt, chosen, rejected, meta")
    p.set_defaults(handler=cmd_export_pairs)


def cmd_export_pairs(args: argparse.Namespace) -> int:
    from madspy.pairs import export_pairs

    print(f"{export_pairs(args.eval_dir, args.out)} pairs written to {args.out}")
    return 0
