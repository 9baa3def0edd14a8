"""madspy: multi-agent debate for LLMs as one DSPy program.

Example:
    >>> import madspy
    >>> debate = madspy.Debate(madspy.DebateConfig.with_agents(3, rounds=2))   # embedded local model
    >>> # result = debate(question="What is 17 * 23?")
    >>> # result.answer, result.confidence, result.status, result.stop_reason, result.usage
    >>> # madspy.save(debate, "compiled/mine.json"); madspy.load("compiled/mine.json")
"""

from madspy.errors import InputError, MadspyError, ModelError, ProgramFileError
from madspy.models import make_lm
from madspy.programs import AgentConfig, Debate, DebateConfig, RoleConfig, StopConfig, Transcript
from madspy.programs.artifact import load_program as load
from madspy.programs.artifact import save_program as save
from madspy.programs.debate import as_dict

__all__ = [
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
