"""What a recorded debate shows against the gold answer: each proposal's correctness, each critic verdict, each flip.

The evaluation harness stores this trace in every eval row; the composite metric scores a
critic from it; role datasets label role calls with it.

Example:
    >>> from madspy.programs.transcript import Call, Round, Transcript
    >>> t = Transcript(question="2+2?", rounds=[Round(index=0, calls=[
    ...     Call(role="proposer", agent=0, round=0, output={"answer": "5"}),
    ...     Call(role="critic", agent=0, round=0, output={"verdict": "flawed", "issues": []})])])
    >>> trace = debate_trace(t, lambda answer: answer == "4")
    >>> trace.proposals[0].correct, trace.critic[0].flagged, trace.critic[0].proposal_correct
    (False, True, False)
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from madspy.programs.answers import clean_answer, read_answer
from madspy.programs.transcript import Transcript
from madspy.signatures import Role


class ProposalTrace(BaseModel):
    """One proposal: its answer as the debate counted it, whether it is right, and its vote key."""

    round: int
    agent: int
    answer: str
    correct: bool
    key: str | None = None


class CriticTrace(BaseModel):
    """One critic verdict on one proposal whose correctness is known."""

    round: int
    agent: int
    proposal_correct: bool
    flagged: bool


class FlipTrace(BaseModel):
    """One answer change, its kind (evidence or conformity) and whether it went wrong->right or right->wrong."""

    round: int
    agent: int
    kind: str
    before_correct: bool
    after_correct: bool


class DebateTrace(BaseModel):
    """A debate's proposals, critic verdicts and flips, each labelled against the gold answer."""

    proposals: list[ProposalTrace] = Field(default_factory=list)
    critic: list[CriticTrace] = Field(default_factory=list)
    flips: list[FlipTrace] = Field(default_factory=list)


def debate_trace(
    transcript: Transcript, is_correct: Callable[[str], bool], normalize: Callable[[str], str | None] | None = None
) -> DebateTrace:
    """Per-round proposal correctness, critic verdicts and answer flips of one debate.

    A critic call in round r judges the same agent's latest proposal (its round-r one unless that
    call failed). Flips come from the debate's own flip ledger (evidence vs conformity, see
    ``madspy.programs.flips``), with the correctness of the answer before and after. With
    ``normalize`` (the key votes are counted on) each proposal also has its ``key``, so votes can
    be recounted from rows.
    """
    latest: dict[int, ProposalTrace] = {}
    trace = DebateTrace()
    for rnd in transcript.rounds:
        for call in rnd.calls:  # in step order: proposers, then critics, then the resolver
            if not call.ok or call.output is None or call.agent is None:
                continue
            if call.role.answers:
                said = call.output.get("answer")  # read as the debate counted it
                answer = (
                    read_answer(said, transcript.question, normalize) if normalize else clean_answer(str(said or ""))
                )
                latest[call.agent] = ProposalTrace(
                    round=rnd.index,
                    agent=call.agent,
                    answer=answer,
                    correct=is_correct(answer),
                    key=normalize(answer) if normalize is not None else None,
                )
                trace.proposals.append(latest[call.agent])
            elif call.role == Role.CRITIC and call.agent in latest:
                trace.critic.append(
                    CriticTrace(
                        round=rnd.index,
                        agent=call.agent,
                        proposal_correct=latest[call.agent].correct,
                        flagged=call.output.get("verdict") == "flawed",
                    )
                )
    trace.flips = [
        FlipTrace(
            round=f.round,
            agent=f.agent,
            kind=f.kind,
            before_correct=is_correct(f.before),
            after_correct=is_correct(f.after),
        )
        for rnd in transcript.rounds
        for f in rnd.flips
    ]
    return trace
