"""Command-line options shared by every command: ``--set KEY=VALUE``, naming a config field's flag, durations."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from madspy.core.errors import InputError


def put(changes: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = changes
    for name in parents:
        node = node.setdefault(name, {})
    node[leaf] = value


def _set_value(text: str) -> tuple[str, Any]:
    path, sep, raw = text.partition("=")
    if not sep or not path:
        raise InputError(f"--set expects KEY=VALUE, got {text!r}")
    try:
        return path, json.loads(raw)
    except json.JSONDecodeError:
        return path, raw


def set_changes(items: list[str], changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """``changes`` (default none) with ``--set KEY=VALUE`` items put in: dotted paths, values as JSON, else text.

    >>> set_changes(["stop.agreement_gate=0.9", "memory=summary"])
    {'stop': {'agreement_gate': 0.9}, 'memory': 'summary'}
    """
    changes = {} if changes is None else changes
    for item in items:
        put(changes, *_set_value(item))
    return changes


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
