"""What happened in a debate: every round, every call, the votes and why it stopped.

A ``Transcript`` round-trips through JSON and renders on a terminal.

Example:
    >>> from madspy.programs.transcript import Transcript
    >>> t = Transcript(question="What is 2+2?")
    >>> Transcript.from_json(t.to_json()) == t
    True
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from madspy.programs.flips import Flip
from madspy.programs.memory import MaskDecision
from madspy.signatures import Role



class Call(BaseModel):
    """One LM call of one role: its inputs in short, its output, cost and timing."""

    role: Role
    agent: int | None = None
    round: int
    inputs: dict[str, str] = Field(default_factory=dict)
    output: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # prompt tokens the backend took from its prefix (KV) cache, not recomputed
    cached: bool = False  # answered from DSPy's cache: tokens estimated with LiteLLM's counter, not billed
    mean_logprob: float | None = None  # model confidence, when log-probabilities were asked for
    started_s: float = 0.0
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class Round(BaseModel):
    """One round: its calls, each agent's vote after the round, and notable events."""

    index: int
    calls: list[Call] = Field(default_factory=list)
    votes: dict[str, str] = Field(default_factory=dict)
    flips: list[Flip] = Field(default_factory=list)
    echo_ratio: float | None = None
    masks: list[MaskDecision] = Field(default_factory=list)
    referee: dict[str, Any] | None = None  # relevance, converged, off_topic_summary, intervention
    events: list[str] = Field(default_factory=list)
    wall_s: float = 0.0


class Usage(BaseModel):
    """Token and call totals of a debate."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens: served from the backend's prefix cache
    calls: int = 0
    failed_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(cls, calls: list[Call]) -> Usage:
        return cls(
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            cached_prompt_tokens=sum(c.cached_prompt_tokens for c in calls),
            calls=len(calls),
            failed_calls=sum(not c.ok for c in calls),
        )


class Decision(BaseModel):
    """How the final answer was chosen."""

    protocol: str
    answer: str | None
    confidence: float
    tally: dict[str, int] = Field(default_factory=dict)
    note: str = ""
    judge_status: str | None = None  # the resolver's own status, when it decided
    candidates: dict[str, float] = Field(default_factory=dict)  # every answer's score, where a protocol scores


class Transcript(BaseModel):
    """The full record of one debate."""

    question: str
    config: dict[str, Any] = Field(default_factory=dict)
    started_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    rounds: list[Round] = Field(default_factory=list)
    decision: Decision | None = None
    status: str = "undetermined"
    stop_reason: str = ""
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = 0.0

    def calls(self) -> list[Call]:
        return [c for r in self.rounds for c in r.calls]

    def conformity_flips(self) -> set[tuple[int, int]]:
        """(agent, round) of every flip that cited no argument: what Free-MAD does not count."""
        return {(f.agent, r.index) for r in self.rounds for f in r.flips if f.kind == "conformity"}

    def to_json(self, indent: int | None = None) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Transcript:
        return cls.model_validate_json(text)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Transcript:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
