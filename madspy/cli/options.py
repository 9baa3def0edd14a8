"""Command-line options shared by every command: config fields as flags (their help, type and choices read from the
field, where each setting is described once), naming a config field's flag, durations, and the generated option
reference (``docs/options.md``)."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from madspy.programs.config import DebateConfig


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


def config_field(path: str) -> FieldInfo:
    """The ``DebateConfig`` field at a dotted ``path``: where its description, type and default are written once.

    >>> config_field("stop.agreement_gate").default
    0.85
    """
    model: type[BaseModel] = DebateConfig
    *sections, leaf = path.split(".")
    for section in sections:
        model = model.model_fields[section].annotation
    return model.model_fields[leaf]


def _value_type(annotation: Any) -> tuple[type, tuple[Any, ...] | None]:
    """The type a flag's value is read as, and its choices (a ``Literal``'s values), from a field's annotation."""
    options = [a for a in get_args(annotation) if a is not type(None)] if get_origin(annotation) is not Literal else []
    annotation = options[0] if len(options) == 1 else annotation
    if get_origin(annotation) is Literal:
        return str, get_args(annotation)
    return (annotation if annotation in (int, float) else str), None


def add_config_flag(p: argparse.ArgumentParser, flag: str, path: str) -> None:
    """``flag`` setting config field ``path``: its type, choices and help come from the field itself."""
    field = config_field(path)
    kind, choices = _value_type(field.annotation)
    p.add_argument(flag, dest=path, type=kind, choices=choices, help=field.description)


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, FieldInfo]]:
    """Every field of ``model`` by dotted path, sections first, then their fields; a list's items as ``[i]``."""
    found = []
    for name, field in model.model_fields.items():
        found.append((prefix + name, field))
        sub = field.annotation
        items = get_args(sub)[0] if get_origin(sub) is list else None
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            found += _fields(sub, f"{prefix}{name}.")
        elif isinstance(items, type) and issubclass(items, BaseModel):
            found += _fields(items, f"{prefix}{name}[i].")
    return found


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(its fields below)"
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return f"{len(value)} (see `DebateConfig.default_agents`)"
    return "none" if value is None else f"`{json.dumps(value)}`"


def option_reference(parser: argparse.ArgumentParser) -> str:
    """The Markdown reference of every ``DebateConfig`` setting: default, ``madspy run`` flag, description, all
    read from the config and the parser, so it cannot drift (``docs/options.md``, printed by ``madspy options``).
    """
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    flags: dict[str, list[str]] = {}
    for action in commands["run"]._actions:
        if action.option_strings and action.nargs != 0:
            flags.setdefault(action.dest, []).append(action.option_strings[0])
    lines = [
        "# Settings",
        "",
        "Every setting of a debate program is a field of `madspy.DebateConfig`, saved with the program. Reach one",
        "from `madspy run` by its flag or `--set PATH=VALUE`, from a program spec as `cot[PATH=VALUE]`, and from",
        "Python as `DebateConfig(...)` or `config.updated(...)`. Generated from the config by",
        "`madspy options > docs/options.md`; do not edit by hand.",
        "",
        "| setting | default | `madspy run` flag | what it does |",
        "|:--|:--|:--|:--|",
    ]
    for path, field in _fields(DebateConfig):
        flag = ", ".join(f"`{f}`" for f in flags.get(path, []))
        description = (field.description or "").replace("|", "\\|")
        lines.append(f"| `{path}` | {_default(field)} | {flag} | {description} |")
    return "\n".join(lines) + "\n"


def add_options(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("options", help="print every setting of a debate program (Markdown): default, flag, meaning")
    p.set_defaults(handler=cmd_options)


def cmd_options(args: argparse.Namespace) -> int:
    from madspy.cli import build_parser

    print(option_reference(build_parser()), end="")
    return 0
