"""Command-line options shared by every command: ``--set KEY=VALUE`` (``config.set_changes``), naming a config
field's flag, durations."""

from __future__ import annotations

import argparse
import re


def flag_of(parser: argparse.ArgumentParser, command: str, field: str) -> str:
    """How ``command`` reaches config ``field``: its flag and the field (``--max-tokens (max_tokens)``), else the field.

    Only a flag that takes a value reaches a field; a switch (``--critic``) sets fixed values, and its name is
    not the config section of the same name (an error in section ``critic`` is not one of ``--critic``).

    >>> from madspy.cli import build_parser
    >>> flag_of(build_parser(), "eval", "max_tokens"), flag_of(build_parser(), "run", "stop.agreement_gate")
    ('--max-tokens (max_tokens)', '--agreement-gate (stop.agreement_gate)')
    >>> flag_of(build_parser(), "run", "critic")
    'critic'
    """
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    flags = {a.dest: a.option_strings[0] for a in commands[command]._actions if a.option_strings and a.nargs != 0}
    return f"{flags[field]} ({field})" if field in flags else field


def duration(text: str) -> float:
    """Seconds in a duration written ``90m``, ``2h``, ``45s`` or as plain seconds (an argparse type).

    >>> duration("90m"), duration("2h"), duration("45"), duration("1.5h")
    (5400.0, 7200.0, 45.0, 5400.0)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([smh]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (write 90m, 2h, 45s or seconds)")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
