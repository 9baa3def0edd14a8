"""The debate program and its replaceable parts (config, protocols, stop rules, transcript)."""

from madspy.programs.config import AgentConfig, DebateConfig, RoleConfig, StopConfig
from madspy.programs.debate import Debate
from madspy.programs.transcript import Call, Decision, Round, Transcript, Usage

__all__ = [
    "AgentConfig",
    "Call",
    "Debate",
    "DebateConfig",
    "Decision",
    "RoleConfig",
    "Round",
    "StopConfig",
    "Transcript",
    "Usage",
]
