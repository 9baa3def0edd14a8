"""madspy: multi-agent debate for LLMs as one DSPy program.

Example:
    >>> import madspy
    >>> debate = madspy.Debate(madspy.DebateConfig.with_agents(3, rounds=2))   # embedded local model
    >>> # result = debate(question="What is 17 * 23?")
    >>> # result.answer, result.confidence, result.status, result.stop_reason, result.usage
    >>> # madspy.save(debate, "compiled/mine.json"); madspy.load("compiled/mine.json")
    >>> # madspy.evaluate("gsm8k", "openai/gpt-4o-mini", ["cot", "debate"], out="runs/g", n=50)
    >>> # madspy.redecide("runs/g")      # the same debates decided by majority, confidence, ... (no LM call)
    >>> # madspy.compile_program("arithmetic", "local/smollm2-135m", "bootstrap", out="compiled/a.json")
    >>> # madspy.ab("compiled/a.json", "handwritten", "arithmetic", "local/smollm2-135m", out="runs/ab")
"""

from madspy.core.errors import InputError, MadspyError, ModelError, ProgramFileError
from madspy.core.models import make_lm
from madspy.programs import AgentConfig, Debate, DebateConfig, RoleConfig, StopConfig, Transcript
from madspy.programs.artifact import load_program as load
from madspy.programs.artifact import save_program as save
from madspy.programs.debate import as_dict

# Heavier parts (pandas, FastAPI, optimizers) load on first use, so `import madspy` stays quick.
_LAZY = {
    "evaluate": "madspy.evaluation",
    "compare": "madspy.evaluation",
    "redecide": "madspy.redecide",
    "compile_program": "madspy.optimizers.compile",
    "compile": "madspy.optimizers.compile:compile_program",
    "save_handwritten": "madspy.optimizers.compile",
    "ab": "madspy.ab",
    "port": "madspy.port",
    "export_pairs": "madspy.pairs",
    "create_app": "madspy.server.app",
    "ServeSettings": "madspy.server.app",
    "write_eval_report": "madspy.report",
    "write_transcript_report": "madspy.report",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, _, attr = _LAZY[name].partition(":")
        return getattr(importlib.import_module(module), attr or name)
    raise AttributeError(f"module 'madspy' has no attribute {name!r}")


__all__ = [*_LAZY,
    "AgentConfig",
    "Debate",
    "DebateConfig",
    "InputError",
    "MadspyError",
    "ModelError",
    "ProgramFileError",
    "RoleConfig",
    "StopConfig",
    "Transcript",
    "as_dict",
    "load",
    "make_lm",
    "save",
]
