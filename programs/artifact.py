"""Save and load debate programs as one JSON file (never pickle).

The file holds, per role predictor, its instructions and demos (keyed by role
name, not by position), the debate config, a manifest (library versions, date and
whatever the caller adds: task, model, optimizer, scores) and a SHA-256 of the
rest. Loading validates all of it and says what is wrong.

A program file holds what the program is, not where it runs: the config is saved without
``CALLER_FIELDS`` (server, timeouts, retries, cache, concurrency, credit ledger), and a file that
still holds them (saved by an earlier madspy) loads with them ignored and one warning. The caller
gives them (``load_program(path, api_base=...)``, flags, serve's settings). A model string that names a
server (a URL) is refused, in a file and when saving.

Example::

    from madspy.programs import Debate
    from madspy.programs.artifact import load_program, save_program
    save_program(Debate(), "compiled/handwritten.json", manifest={"task": "gsm8k"})
    debate = load_program("compiled/handwritten.json")
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_jsonable_python

from madspy.core.errors import ConfigError, InputError, ProgramFileError
from madspy.core.models import portable_model
from madspy.programs.config import CALLER_FIELDS, DebateConfig
from madspy.programs.debate import Debate
from madspy.programs.steps import with_free_text

FORMAT = "madspy.program/2"
# Format 1 named roles by their step (propose, revise, critique, resolve); format 2 by the role (signatures.Role).
_FORMAT_1 = "madspy.program/1"
_ROLES_OF_FORMAT_1 = {"propose": "proposer", "revise": "reviser", "critique": "critic", "resolve": "resolver"}
_log = logging.getLogger(__name__)


class RoleState(BaseModel):
    """What an artifact keeps of one role: its instructions and demos."""

    model_config = ConfigDict(extra="forbid")
    instructions: str
    demos: list[dict[str, Any]]


def content_digest(body: dict[str, Any]) -> str:
    """SHA-256 of ``body`` as canonical JSON (sorted keys, no spaces): what a saved program's hash covers."""
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _versions() -> dict[str, str]:
    return {name: version(name) for name in ("madspy", "dspy")}


def program_state(debate: Debate) -> dict[str, Any]:
    """Instructions and demos of every role predictor, by name."""
    return {
        name: {
            "instructions": predictor.signature.instructions,
            "demos": [to_jsonable_python(dict(demo)) for demo in predictor.demos],
        }
        for name, predictor in debate.named_predictors()
    }


def _portable_models(data: Any) -> Any:
    """``data`` with every ``model`` string made portable (no machine's path to a local GGUF)."""
    if isinstance(data, dict):
        return {
            k: portable_model(v) if k == "model" and isinstance(v, str) else _portable_models(v)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [_portable_models(v) for v in data]
    return data


def _model_strings(data: Any) -> set[str]:
    """Every ``model`` string in a config (as saved: a dict), its roles' and agents' included, on or off."""
    if isinstance(data, dict):
        found = {v for k, v in data.items() if k == "model" and isinstance(v, str)}
        return found.union(*(_model_strings(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(_model_strings(v) for v in data))
    return set()


def _naming_servers(models: set[str]) -> list[str]:
    """The model strings among ``models`` that hold a URL (``huggingface/https://...`` sends prompts to it)."""
    return sorted(m for m in models if "://" in m)


def save_program(debate: Debate, path: str | Path, manifest: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``debate`` to ``path`` as a validated JSON artifact; returns what was written.

    Local GGUF files in the models folder are saved by name (``local/<name>``), not by path. The config's
    ``CALLER_FIELDS`` (server, timeouts, retries, cache, concurrency, credit ledger) are not saved: whoever
    runs the program gives them. A model string holding a server's URL is refused.
    """
    config = debate.config.model_dump(mode="json", exclude=CALLER_FIELDS)
    servers = _naming_servers(_model_strings(config))
    if servers:
        raise ProgramFileError(
            f"cannot save {path}: model {servers[0]!r} names a server; save the model's name and give the server "
            "as api_base when running the program"
        )
    body = _portable_models(
        {
            "format": FORMAT,
            "config": config,
            "roles": program_state(debate),
            "manifest": {
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "versions": _versions(),
                **(manifest or {}),
            },
        }
    )
    return _write(Path(path), body)


def _write(path: Path, body: dict[str, Any]) -> dict[str, Any]:
    document = {**body, "sha256": content_digest(body)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return document


def amend_manifest(path: str | Path, entries: dict[str, Any]) -> dict[str, Any]:
    """Add or replace ``entries`` in a saved program's manifest, keep everything else, and hash it again.

    For what is measured after saving (held-out scores): config and roles are untouched, so the
    program answers and fingerprints as before and eval folders that ran it stay valid; only the
    config's ``CALLER_FIELDS`` a file of an earlier madspy holds are dropped (they are ignored on
    loading). The file is validated first, as ``load_program`` does; a program that does not load is
    not amended.

    Example::

        amend_manifest("compiled/mine.json", {"held_out": [{"task": "gsm8k", "n": 100, "accuracy": 0.51}]})
    """
    path = Path(path)
    document = _read(path)
    _rebuild(path, document)
    body = {k: v for k, v in document.items() if k != "sha256"}
    body["config"] = _program_fields(body["config"])
    body["manifest"] = {**body["manifest"], **to_jsonable_python(entries)}
    return _write(path, body)


def adopt_roles(debate: Debate, path: str | Path, roles: Sequence[str]) -> dict[str, Any]:
    """Give ``debate``'s ``roles`` the instructions and demos they have in the program file ``path``: a role
    compiled in one setting, reused in another (a debate's compiled proposer in a self-consistency vote).
    Returns what a manifest records of it.

    Example::

        debate = Debate(preset("sc:3", kind=TaskKind.NUMERIC))
        adopt_roles(debate, "compiled/gsm8k-proposer.json", ["proposer"])
    """
    path = Path(path)
    document = _read(path)
    source, target = dict(_rebuild(path, document).named_predictors()), dict(debate.named_predictors())
    unknown = [role for role in roles if role not in target]
    if unknown or not roles:
        given = ", ".join(roles) or "none"
        raise InputError(f"roles to take from {path}: name some of {', '.join(target)} (got {given})")
    for role in roles:
        target[role].signature = target[role].signature.with_instructions(source[role].signature.instructions)
        target[role].demos = [demo.copy() for demo in source[role].demos]
    return {"program": path.as_posix(), "sha256": document["sha256"], "roles": list(roles)}


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ProgramFileError(f"program file not found: {path}")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProgramFileError(f"{path} is not valid JSON ({e}); was it truncated?") from None
    if not isinstance(document, dict):
        raise ProgramFileError(f"{path} is not a madspy program (expected a JSON object)")
    return document


def _check_compatible(path: Path, document: dict[str, Any]) -> None:
    fmt = document.get("format")
    if fmt not in (FORMAT, _FORMAT_1):
        raise ProgramFileError(f"{path} has format {fmt!r}; this madspy reads {FORMAT!r} and {_FORMAT_1!r}")
    manifest = document.get("manifest")
    versions = manifest.get("versions") if isinstance(manifest, dict) else None
    if not isinstance(versions, dict):
        raise ProgramFileError(f"{path} has no manifest.versions; not a madspy program")
    saved, current = str(versions.get("dspy", "")), version("dspy")
    if saved.split(".")[:2] != current.split(".")[:2]:
        raise ProgramFileError(
            f"{path} was saved with dspy {saved or 'unknown'}; this install has dspy {current} "
            "(programs move between dspy minor versions only by recompiling)"
        )
    saved, current = str(versions.get("madspy", "")), version("madspy")
    if saved.split(".")[:1] != current.split(".")[:1]:
        raise ProgramFileError(
            f"{path} was saved by madspy {saved or 'unknown'}; this is madspy {current} "
            "(programs move between madspy major versions only by recompiling)"
        )


def _role_states(path: Path, document: dict[str, Any]) -> dict[str, RoleState]:
    """The artifact's roles, by their format-2 names, each checked to be instructions and demos."""
    roles = document["roles"]
    if not isinstance(roles, dict):
        raise ProgramFileError(f"{path}: roles is not an object of role -> instructions and demos")
    if document["format"] == _FORMAT_1:
        roles = {_ROLES_OF_FORMAT_1.get(name, name): state for name, state in roles.items()}
    try:
        return {name: RoleState.model_validate(state) for name, state in roles.items()}
    except ValidationError as e:
        raise ProgramFileError(f"{path}: a role is not instructions and demos ({ConfigError.of(e)})") from None


def _program_fields(config: dict[str, Any]) -> dict[str, Any]:
    """A saved config without the ``CALLER_FIELDS`` an earlier madspy saved in it."""
    return {k: v for k, v in config.items() if k not in CALLER_FIELDS}


def _ignoring_caller_fields(path: Path, config: Any) -> Any:
    """``_program_fields`` of a saved config, with one warning naming those of its ``CALLER_FIELDS`` that were
    not at their default (what the program now runs without); a config that is not an object, as it is."""
    if not isinstance(config, dict):
        return config  # refused by validation
    ignored = sorted(k for k in CALLER_FIELDS & config.keys() if config[k] != DebateConfig.model_fields[k].default)
    if ignored:
        _log.warning(
            "%s: ignoring %s saved in the program file: where a program runs and what it writes come from "
            "the caller (flags, environment, serve's settings)",
            path,
            ", ".join(ignored),
        )
    return _program_fields(config)


def load_program(path: str | Path, **config_overrides: Any) -> Debate:
    """Read, validate and rebuild a ``Debate`` from a JSON artifact.

    ``config_overrides`` replace config fields (for example ``model=`` to port a
    program to another model) after validation. They are the only source of the config's
    ``CALLER_FIELDS`` (``api_base=``, ``timeout_s=``, ``credit_ledger=``...): a file that holds them
    loads with them at their defaults, and a warning names those it set otherwise.
    """
    path = Path(path)
    return _rebuild(path, _read(path), **config_overrides)


def _rebuild(path: Path, document: dict[str, Any], **config_overrides: Any) -> Debate:
    """``load_program`` of a file already read (``_read``): validated, then rebuilt."""
    missing = {"format", "config", "roles", "manifest", "sha256"} - document.keys()
    if missing:
        raise ProgramFileError(f"{path} lacks {', '.join(sorted(missing))}; not a madspy program")
    _check_compatible(path, document)
    body = {k: v for k, v in document.items() if k != "sha256"}
    if content_digest(body) != document["sha256"]:
        raise ProgramFileError(f"{path} does not match its sha256: it was edited or corrupted after saving")
    try:
        saved = DebateConfig.model_validate(_ignoring_caller_fields(path, document["config"]))
    except ValidationError as e:
        raise ProgramFileError(f"{path} has an invalid config: {ConfigError.of(e)}") from None
    states = _role_states(path, document)
    config = saved.updated(**config_overrides)  # an override out of range raises ConfigError naming its field
    servers = _naming_servers(_model_strings(document["config"]) & config.models())
    if servers:
        raise ProgramFileError(
            f"{path} names a server in model {servers[0]!r}; a program file names models: give the server as "
            "api_base, or another model"
        )
    debate = Debate(config)
    predictors = dict(debate.named_predictors())
    unknown = states.keys() - predictors.keys()
    if unknown:
        raise ProgramFileError(f"{path} has roles this madspy does not know: {', '.join(sorted(unknown))}")
    for name, state in states.items():
        predictor = predictors[name]
        predictor.signature = predictor.signature.with_instructions(state.instructions)
        # Demos of answering roles saved before free-text reasoning hold their steps as a list: now its text.
        predictor.demos = [dspy.Example(**with_free_text(demo)) for demo in state.demos]
    debate.manifest = document["manifest"]
    return debate
