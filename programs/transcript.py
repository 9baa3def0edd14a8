"""What happened in a debate: every round, every call, the votes, its status and why it stopped.

The debate's vocabulary is named here once: ``Status`` (what a result is), ``StopReason`` (why
the debate stopped) and ``EventKind`` (what a round's events say; each ``Event`` carries its
fields and renders to prose for people). A ``Transcript`` round-trips through JSON.

Example:
    >>> from madspy.programs.transcript import Event, EventKind, Transcript
    >>> t = Transcript(question="What is 2+2?")
    >>> Transcript.from_json(t.to_json()) == t
    True
    >>> str(Event(kind=EventKind.ECHO_ALARM, value=0.75, threshold=0.5))
    'echo alarm: 0.75 of flips cite no argument (> 0.5)'
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from madspy.core.vocabulary import Vocabulary
from madspy.programs.flips import Flip
from madspy.programs.memory import MaskDecision
from madspy.signatures import Role


class Status(Vocabulary):
    """What a debate's result is (the resolver's own ``status`` field is a subset)."""

    CONVERGED = "converged"  # the agents settled on one answer, or a stop rule judged them settled
    CONVERGENCE_FAILED = "convergence_failed"  # they still disagree at the last round; the protocol picked
    DEGRADED = "degraded"  # some calls failed, or the last round gave no usable answer and an earlier one decided
    UNDETERMINED = "undetermined"  # the resolver found no supported answer
    FAILED = "failed"  # no agent answered
    BUDGET_EXHAUSTED = "budget_exhausted"  # the token budget is spent; the last votes decided
    TIME_EXHAUSTED = "time_exhausted"  # the time budget is spent; the last votes decided
    INVALID_INPUT = "invalid_input"  # refused before any call (a question too long for the model, say)


class StopReason(Vocabulary):
    """Why a debate stopped when it did."""

    CONFIDENT_AGREEMENT = "confident_agreement"
    DECISIVE_VOTE = "decisive_vote"  # one answer held by enough agents, confidently enough: no debate needed
    STABLE_ANSWERS = "stable_answers"
    REFEREE_CONVERGED = "referee_converged"
    CASCADE_CONFIDENT = "cascade_confident"
    MAX_ROUNDS = "max_rounds"
    ECHO_ALARM = "echo_alarm"
    OFF_TOPIC = "off_topic"
    BUDGET_EXHAUSTED = "budget_exhausted"
    TIME_EXHAUSTED = "time_exhausted"
    ALL_AGENTS_FAILED = "all_agents_failed"


class EventKind(Vocabulary):
    """What happened in a round besides its calls and votes."""

    CALL_FAILED = "call_failed"
    KEPT_PREVIOUS_ANSWER = "kept_previous_answer"
    NO_USABLE_ANSWER = "no_usable_answer"
    CASCADE = "cascade"
    NO_LOGPROBS = "no_logprobs"
    ECHO_ALARM = "echo_alarm"
    DEVILS_ADVOCATE = "devils_advocate"
    OFF_TOPIC = "off_topic"
    EXTRA_ROUND = "extra_round"
    CHALLENGES_DROPPED = "challenges_dropped"
    TALLY_ECHOED = "tally_echoed"
    QUESTION_NEUTRALIZED = "question_neutralized"
    MISCALCULATED = "miscalculated"
    ANSWER_UNREACHED = "answer_unreached"
    QUANTITY_UNUSED = "quantity_unused"
    FRACTIONAL_ANSWER = "fractional_answer"
    ANSWER_UNREADABLE = "answer_unreadable"
    DOUBTED = "doubted"
    PROGRAMS_RUN = "programs_run"
    PROGRAM_DISAGREES = "program_disagrees"
    DECISIVE_VOTE_REFUTED = "decisive_vote_refuted"
    NOTE = "note"  # free text (transcripts written before events were structured)


_PROSE: dict[EventKind, str] = {
    EventKind.CALL_FAILED: "{who} failed: {error}",
    EventKind.KEPT_PREVIOUS_ANSWER: "agent {agent} keeps its previous answer",
    EventKind.NO_USABLE_ANSWER: "agent {agent} gave no usable answer",
    EventKind.CASCADE: "cascade: agent {agent} alone is {not_}confident enough to skip the debate",
    EventKind.NO_LOGPROBS: "objective mask: the backend returned no log-probabilities; subjective strict mask used",
    EventKind.ECHO_ALARM: "echo alarm: {value:.2f} of flips cite no argument (> {threshold})",
    EventKind.DEVILS_ADVOCATE: "agent {agent} plays devil's advocate next round",
    EventKind.OFF_TOPIC: "referee: relevance {value:.2f} < {threshold}; intervention sent to all agents",
    EventKind.EXTRA_ROUND: "referee: agreement {value:.2f} < {threshold}; one more round",
    EventKind.CHALLENGES_DROPPED: "critic on agent {agent}: {count} challenge(s) naming no step dropped",
    EventKind.TALLY_ECHOED: "the resolver returned the tally, not an answer",
    EventKind.QUESTION_NEUTRALIZED: "instructions or answer claims in the question were removed before anyone read it",
    EventKind.MISCALCULATED: "calculator on agent {agent}: {count} wrong calculation(s), e.g. {text}",
    EventKind.ANSWER_UNREACHED: "answer check on agent {agent}: {text}",
    EventKind.QUANTITY_UNUSED: "quantity check on agent {agent}: {text}",
    EventKind.FRACTIONAL_ANSWER: "integer check on agent {agent}: {text}",
    EventKind.ANSWER_UNREADABLE: "readable check on agent {agent}: {text}",
    EventKind.DOUBTED: "doubt check on agent {agent}: {text}",
    EventKind.PROGRAMS_RUN: "program check: {count} program(s) computed a number: {text}",
    EventKind.PROGRAM_DISAGREES: "program check on agent {agent}: {text}",
    EventKind.DECISIVE_VOTE_REFUTED: "the winning answer fails a check in {count} of its proposals: debate on",
    EventKind.NOTE: "{text}",
}


class Event(BaseModel):
    """One event of a round: its kind and the fields it needs (``str(event)`` is its prose)."""

    kind: EventKind
    agent: int | None = None
    role: Role | None = None
    value: float | None = None  # what was measured (echo ratio, relevance, agreement)
    threshold: float | None = None  # the limit it crossed
    count: int | None = None
    flag: bool | None = None  # a yes/no outcome (cascade: confident enough)
    error: str | None = None
    text: str = ""

    def __str__(self) -> str:
        who = f"{self.role} {self.agent}" if self.agent is not None else f"{self.role}"
        return _PROSE[self.kind].format(**self.model_dump(), who=who, not_="" if self.flag else "not ")


LENGTH = "length"  # the finish reason of a reply cut by max_tokens (OpenAI's, LiteLLM's and llama.cpp's word)


class Call(BaseModel):
    """One LM call of one role: its inputs (whole: role datasets are built from them), its output, cost and timing."""

    role: Role
    agent: int | None = None
    round: int
    inputs: dict[str, Any] = Field(default_factory=dict)
    output: dict[str, Any] | None = None
    error: str | None = None
    reply: str | None = None  # a failed call's last reply, as the model wrote it (cut, or not parsed): for audit
    attempts: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # prompt tokens the backend took from its prefix (KV) cache, not recomputed
    cached: bool = False  # answered from DSPy's cache: tokens estimated with LiteLLM's counter, not billed
    mean_logprob: float | None = None  # model confidence, when log-probabilities were asked for
    # "length" when the reply reached max_tokens (the call then failed: nothing cut short is read as an answer)
    finish_reason: str | None = None
    deployment: str | None = None  # which deployment of a ``router/`` model answered
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
    events: list[Event] = Field(default_factory=list)
    wall_s: float = 0.0

    @field_validator("events", mode="before")
    @classmethod
    def _prose_is_a_note(cls, events: Any) -> Any:
        """Events written as prose (transcripts saved before they were structured) load as notes."""
        if not isinstance(events, list):
            return events
        return [{"kind": EventKind.NOTE, "text": e} if isinstance(e, str) else e for e in events]

    def happened(self, kind: EventKind) -> list[Event]:
        """This round's events of one kind."""
        return [e for e in self.events if e.kind == kind]


class Usage(BaseModel):
    """Token and call totals of a debate."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens: served from the backend's prefix cache
    calls: int = 0
    failed_calls: int = 0
    length_calls: int = 0  # of failed_calls: replies that reached max_tokens before their last field

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
            length_calls=sum(c.finish_reason == LENGTH for c in calls),
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
    vote_share: float | None = None  # share of the final votes held by the answer chosen
    calibrated_confidence: float | None = None  # the program's calibrator applied to confidence (reported)
    signals: dict[str, float] = Field(default_factory=dict)  # what a calibrator reads (``calibration.signals``)


class Transcript(BaseModel):
    """The full record of one debate."""

    question: str
    config: dict[str, Any] = Field(default_factory=dict)
    started_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    rounds: list[Round] = Field(default_factory=list)
    decision: Decision | None = None
    status: Status = Status.UNDETERMINED
    stop_reason: StopReason | None = None
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = 0.0

    @field_validator("stop_reason", mode="before")
    @classmethod
    def _unfinished_has_no_reason(cls, reason: Any) -> Any:
        return reason or None  # transcripts saved before StopReason wrote "" for an unfinished debate

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
