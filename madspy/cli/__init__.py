"""The ``madspy`` command line: a thin layer over the Python API, one module per group of commands.

Example::

    madspy run "What is 17 * 23?" --show
    madspy eval --task arithmetic --model local/smollm2-135m --n 20
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable

from pydantic import ValidationError

from madspy.cli.compile import add_compile, add_role_eval, add_roles, add_search
from madspy.cli.evaluate import (
    add_bench,
    add_calibrate,
    add_compare,
    add_eval,
    add_panel,
    add_redecide,
    add_summary,
)
from madspy.cli.options import add_options, flag_of
from madspy.cli.run import add_run
from madspy.cli.serve import add_ab, add_export_pairs, add_port, add_report, add_serve, add_show
from madspy.core.errors import ConfigError, MadspyError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="madspy", description="Multi-agent debate as one DSPy program.")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    for command in sub.choices.values():  # one flag every command takes, defined once
        command.add_argument(
            "--router",
            metavar="FILE",
            help="a LiteLLM Router file (model_list of deployments): model router/NAME is served by its "
            "deployments named NAME, with retries and fallbacks (default: $MADSPY_ROUTER)",
        )
    return parser


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_run,
    add_eval,
    add_summary,
    add_compare,
    add_redecide,
    add_panel,
    add_calibrate,
    add_bench,
    add_serve,
    add_compile,
    add_roles,
    add_role_eval,
    add_search,
    add_ab,
    add_port,
    add_show,
    add_report,
    add_export_pairs,
    add_options,
]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # DSPy warns on stderr about every reply cut at max_tokens; the transcript records what failed.
    logging.getLogger("dspy.clients.lm").setLevel(logging.ERROR)
    # Bootstrapping logs every example whose reply did not parse with the whole reply; the dev scores count them.
    logging.getLogger("dspy.teleprompt.bootstrap").setLevel(logging.CRITICAL)
    try:
        if args.router:
            from madspy.core.routing import use_router

            use_router(args.router)
        return args.handler(args)
    except (ConfigError, ValidationError) as e:  # a setting out of range: name the flag, the field and the range
        error = e if isinstance(e, ConfigError) else ConfigError.of(e)
        print(f"madspy: error: {flag_of(parser, args.command, error.field)}: {error.reason}", file=sys.stderr)
        return 2
    except MadspyError as e:  # the caller's fault exits 2, a backend's 1
        print(f"madspy: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("madspy: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
