"""madspy: multi-agent debate for LLMs as one DSPy program.

Every public name loads on first use, so ``import madspy`` is quick and importing one layer
(``madspy.core``, ``madspy.programs``...) pulls in nothing above it.

Example (the names; see the README for runs)::

    import madspy
    debate = madspy.Debate(madspy.DebateConfig.with_agents(3, rounds=2))   # the embedded local model
    result = debate(question="What is 17 * 23?")
    result.answer, result.confidence, result.status, result.stop_reason, result.usage
    madspy.save(debate, "compiled/mine.json"); madspy.load("compiled/mine.json")
    madspy.evaluate(["plain", "cot", "debate"], "gsm8k", "openai/gpt-4o-mini", out="runs/g", n=50)
    mine = madspy.Task.from_file("mine.jsonl", answer_kind="number", question_field="q", answer_field="a")
    madspy.evaluate(["cot", "debate"], mine, "openai/gpt-4o-mini", out="runs/mine")   # your own questions
    madspy.redecide("runs/g")      # the same debates decided by majority, confidence, ... (no LM call)
    madspy.compile_program("arithmetic", "local/smollm2-135m", "bootstrap", train=8, dev=8, out="compiled/a.json")
    madspy.ab("compiled/a.json", "handwritten", "arithmetic", "local/smollm2-135m", out="runs/ab")
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# LiteLLM fetches its model price map from the network at import unless told otherwise; every
# madspy module is under this package, so this runs before any of them imports LiteLLM.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# name -> "module" (the same name there) or "module:attribute"
_PUBLIC = {
    "MadspyError": "madspy.core.errors",
    "InputError": "madspy.core.errors",
    "BackendError": "madspy.core.errors",
    "ConfigError": "madspy.core.errors",
    "ModelError": "madspy.core.errors",
    "ProgramFileError": "madspy.core.errors",
    "make_lm": "madspy.core.models",
    "Role": "madspy.signatures",
    "AgentConfig": "madspy.programs",
    "Debate": "madspy.programs",
    "DebateConfig": "madspy.programs",
    "preset": "madspy.programs.presets",
    "RoleConfig": "madspy.programs",
    "StopConfig": "madspy.programs",
    "Transcript": "madspy.programs",
    "Status": "madspy.programs.transcript",
    "StopReason": "madspy.programs.transcript",
    "as_dict": "madspy.programs.debate",
    "load": "madspy.programs.artifact:load_program",
    "save": "madspy.programs.artifact:save_program",
    "Task": "madspy.data",
    "SeededSplit": "madspy.data",
    "evaluate": "madspy.evaluation",
    "compare": "madspy.comparison",
    "EvalRow": "madspy.rows",
    "redecide": "madspy.redecide",
    "compile_program": "madspy.optimizers.compile",
    "compile": "madspy.optimizers.compile",
    "save_handwritten": "madspy.optimizers.compile",
    "ab": "madspy.ab",
    "port": "madspy.port",
    "export_pairs": "madspy.pairs",
    "create_app": "madspy.server.app",
    "ServeSettings": "madspy.server.app",
    "write_eval_report": "madspy.report",
    "write_transcript_report": "madspy.report",
}


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        module, _, attr = _PUBLIC[name].partition(":")
        return getattr(importlib.import_module(module), attr or name)
    raise AttributeError(f"module 'madspy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


__all__ = sorted(_PUBLIC)
