"""The ``madspy`` command line: a thin layer over the Python API.

Example:
    $ madspy run "What is 17 * 23?" --show
    $ madspy run --file questions.jsonl --json > results.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from madspy.errors import InputError, MadspyError
from madspy.eval_cli import add_bench, add_compare, add_eval

RUN_EXAMPLES = """examples:
  madspy run "What is 17 * 23?" --show
  madspy run "Is 91 prime?" --model openai/gpt-4o-mini --agents 5 --rounds 2 --protocol majority --json
  madspy run --file questions.jsonl > results.jsonl     (one {"question": ...} per line)
"""


def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="debate one question (or a JSONL file of them)", epilog=RUN_EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("question", nargs="?", help="the question to debate")
    p.add_argument("--file", type=Path, help="JSONL file, one {\"question\": ...} per line; one result per line out")
    p.add_argument("--program", type=Path, help="a saved program (JSON) to run instead of the hand-written roles")
    p.add_argument("--preset", help="named settings: debate (default), cot, sc, sc:K, du-mad")
    p.add_argument("--model", help="LiteLLM model string (default local/smollm2-135m, the embedded model)")
    p.add_argument("--agents", type=int, help="number of debaters (default 3)")
    p.add_argument("--rounds", type=int, help="rounds in all, round 0 included (default 3)")
    p.add_argument("--protocol", choices=["majority", "judge"], help="how the final answer is chosen")
    p.add_argument("--max-tokens", type=int, help="completion tokens per call (default 512)")
    p.add_argument("--no-critic", action="store_true", help="switch the critic off")
    p.add_argument("--no-resolver", action="store_true", help="switch the resolver off (implies majority)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse cached LM replies")
    p.add_argument("--transcript", type=Path, help="write the transcript JSON here (a folder with --file)")
    p.add_argument("--show", action="store_true", help="print the whole debate")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_run)


def _debate(args: argparse.Namespace):
    from madspy.programs import Debate, DebateConfig
    from madspy.programs.artifact import load_program
    from madspy.programs.presets import preset

    changes: dict[str, Any] = {
        name: getattr(args, name)
        for name in ("model", "rounds", "protocol", "max_tokens")
        if getattr(args, name) is not None
    }
    if args.agents is not None:
        if args.agents < 1:
            raise InputError("--agents must be at least 1")
        changes["agents"] = [a.model_dump() for a in DebateConfig.default_agents(args.agents)]
    if args.no_critic:
        changes["critic"] = {"enabled": False}
    if args.no_resolver:
        changes["resolver"] = {"enabled": False}
        changes.setdefault("protocol", "majority")
    if args.no_cache:
        changes["cache"] = False
    if args.program and args.preset:
        raise InputError("give --program or --preset, not both")
    if args.program:
        return load_program(args.program, **changes)
    return Debate(preset(args.preset or "debate", **changes))


def _questions(path: Path) -> Iterator[tuple[int, str]]:
    if not path.is_file():
        raise InputError(f"questions file not found: {path}")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{n} is not JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str):
            raise InputError(f"{path}:{n} has no \"question\" string")
        yield n, row["question"]


def _print_result(result: Any, args: argparse.Namespace) -> None:
    from rich.console import Console

    from madspy.programs.debate import as_dict
    from madspy.programs.render import render_transcript

    if args.show:
        render_transcript(result.transcript, Console(stderr=args.json))
    if args.json:
        print(json.dumps(as_dict(result), ensure_ascii=False))
    elif not args.show:
        u = result.usage
        print(result.answer)
        print(f"confidence {result.confidence:.2f} | status {result.status} | stop {result.stop_reason} | "
              f"{u['prompt_tokens']}+{u['completion_tokens']} tokens in {u['calls']} calls | "
              f"{result.transcript.wall_s:.1f}s", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    if (args.question is None) == (args.file is None):
        raise InputError("give a QUESTION or --file, not both and not neither")
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

    from madspy.programs.debate import as_dict

    rows = list(_questions(args.file))
    if args.transcript:
        args.transcript.mkdir(parents=True, exist_ok=True)
    with Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task("debating", total=len(rows))
        for line_no, question in rows:
            try:
                out = as_dict(debate(question=question))
                if args.transcript:
                    Path(args.transcript, f"line{line_no}.json").write_text(json.dumps(out["transcript"]))
            except InputError as e:  # one bad question does not stop the file
                out = {"answer": None, "status": "invalid_input", "error": str(e)}
            print(json.dumps({"line": line_no, **out}, ensure_ascii=False), flush=True)
            progress.advance(bar)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="madspy", description="Multi-agent debate as one DSPy program.")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return parser


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_add_run, add_eval, add_compare, add_bench]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except MadspyError as e:
        print(f"madspy: error: {e}", file=sys.stderr)
        return 2
    except ValidationError as e:
        err = e.errors()[0]
        print(f"madspy: error: {'.'.join(map(str, err['loc'])) or 'config'}: {err['msg']}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("madspy: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
