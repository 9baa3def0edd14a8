"""What other decision protocols and earlier stops would have answered on an eval's recorded debates, with no LM call.

Every debate transcript keeps each round's votes, so the vote protocols (majority,
plurality, confidence, free) can be replayed on them for free: a protocol choice
(the Debate-or-Vote question) measured on the same debates, next to what they
decided. An agent's confidence in a round is that of its latest proposer call up to
that round. The judge needs an LM call and is not replayed; a protocol that votes
skips the judge's calls (the last round's critiques and the resolver), so their
tokens come off its cost.

Round 0 does not depend on what comes after it, so an earlier stop replays exactly
too: ``stop.decisive_share`` gates (iMAD, 2025: debate only when the first answers
hesitate) decide by the debate's own protocol on round 0's votes when round 0 passes
the gate, at round 0's answering tokens, and keep the recorded debate otherwise.
A gate is replayed only where that is exact: on debates that decided by vote, and
not when a recorded debate stopped at round 0 where the replayed gate would not.
One line is exact on every debate, a judge's too: "round 0, majority vote", the first
answers voted (what ``--rounds 1 --protocol majority`` with the same agents answers), so
each table says whether the debate beat its own first vote.

Example::

    table = redecide("runs/gsm8k", program="debate")
    table.loc["majority", ["accuracy", "brier", "tokens"]]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from madspy.data import recorded_task
from madspy.evaluation import EvalError, eval_settings, load_rows
from madspy.optimizers.metrics import accuracy, brier
from madspy.programs.config import DebateConfig
from madspy.programs.protocols import DecisionContext, Vote, get_protocol
from madspy.programs.stopping import DecisiveVote
from madspy.programs.transcript import StopReason, Transcript, Usage
from madspy.summary import paired_rows

AS_RECORDED = "as recorded"
ROUND0_VOTE = "round 0, majority vote"
VOTING = ("majority", "plurality", "confidence", "free")
EARLY_STOPS = {  # line -> stop.decisive_share
    "stop at round 0 if all agree": 1.0,
    "stop at round 0 if 2/3 agree": 2 / 3,
    "round 0 only": 0.0,
}


def vote_history(transcript: Transcript, normalize: Callable[[str | None], str | None]) -> list[list[Vote]]:
    """The votes after each round, each with its agent's latest proposer confidence."""
    confidence: dict[int, float] = {}
    history = []
    for rnd in transcript.rounds:
        for call in rnd.calls:
            if call.role.answers and call.ok and call.agent is not None and call.output:
                confidence[call.agent] = float(call.output.get("confidence") or 0.0)
        history.append(
            [
                Vote(int(a), answer, normalize(answer) or answer.strip().casefold(), confidence.get(int(a), 0.0))
                for a, answer in rnd.votes.items()
                if answer
            ]
        )
    return history


def judge_tokens(transcript: Transcript) -> int:
    """Tokens of the calls only a judge needs: the last round's critiques and the resolver."""
    last = transcript.rounds[-1].calls if transcript.rounds else []
    calls = [c for c in last if c.role == "critic"] + [c for c in transcript.calls() if c.role == "resolver"]
    return Usage.of(calls).total_tokens


def round0_tokens(transcript: Transcript) -> int:
    """Tokens of round 0's answers: what a debate stopped after round 0 spends (its critique is not due)."""
    return Usage.of([c for c in transcript.rounds[0].calls if c.role.answers]).total_tokens


def round0_vote(
    transcript: Transcript, history: list[list[Vote]], score: Callable[[str | None], float]
) -> tuple[float, float, int]:
    """(score, confidence, tokens) of round 0's answers decided by majority vote, whatever the debate's protocol."""
    if not history or not history[0]:
        return 0.0, 0.0, round0_tokens(transcript) if transcript.rounds else 0
    decided = get_protocol("majority").decide(history[0], DecisionContext(history=history[:1]))
    return score(decided.answer), decided.confidence, round0_tokens(transcript)


def early_stop(
    transcript: Transcript,
    config: DebateConfig,
    history: list[list[Vote]],
    share: float,
    recorded: tuple[float, float, int],
    score: Callable[[str | None], float],
) -> tuple[float, float, int] | None:
    """(score, confidence, tokens) had the debate (run with ``config``) stopped after round 0
    when one answer held ``share`` of the votes.

    The recorded outcome when round 0 does not pass the gate; None when the replay is not exact
    (the debate decides by a judge, or it stopped at round 0 on its own gate where this one goes on).
    """
    protocol = config.decision_protocol
    if protocol not in VOTING or not history:
        return None
    passes = DecisiveVote(share, 0.0, agents=len(config.agents)).check(history[:1])
    if passes is None:
        stopped_on_gate = len(transcript.rounds) == 1 and transcript.stop_reason == StopReason.DECISIVE_VOTE
        return None if stopped_on_gate else recorded
    decided = get_protocol(protocol).decide(history[0], DecisionContext(history=history[:1]))
    return score(decided.answer), decided.confidence, round0_tokens(transcript)


def redecide(
    folder: str | Path, program: str = "debate", paired: bool = False, skip_missing: bool = False
) -> pd.DataFrame:
    """Per decision (as recorded, each vote protocol, round 0 voted, each exact early stop) on ``program``'s
    debates in an eval ``folder``: n, accuracy with its 95% interval, mean confidence, Brier score and mean
    tokens per question.

    ``paired`` keeps only the questions every program of the folder finished (as ``summary --paired``).
    ``skip_missing`` re-decides only the rows whose transcript exists (the table's ``n`` says how many);
    without it a missing transcript is an error.
    """
    folder = Path(folder)
    task = recorded_task(eval_settings(folder))
    rows = load_rows(folder)
    rows = [r for r in (paired_rows(rows) if paired else rows) if r.program == program]
    if not rows:
        programs = ", ".join(sorted({r.program for r in load_rows(folder)}))
        raise EvalError(f"no rows of {program!r} in {folder}; programs there: {programs}")
    kept: dict[str, list[tuple[float, float, int]]] = {name: [] for name in (AS_RECORDED, *VOTING, ROUND0_VOTE)}
    stops: dict[str, list[tuple[float, float, int]]] = {name: [] for name in EARLY_STOPS}
    inexact: set[str] = set()  # early stops some debate cannot replay: left out of the table
    missing = [r for r in rows if not (folder / r.transcript).is_file()]
    if missing and not skip_missing:
        raise EvalError(
            f"{folder / missing[0].transcript} is missing ({len(missing)} of {len(rows)} transcripts): its row "
            "cannot be re-decided; --skip-missing re-decides the rows whose transcripts exist"
        )
    rows = [r for r in rows if (folder / r.transcript).is_file()]
    if not rows:
        raise EvalError(f"no transcript of {program!r} in {folder}: nothing to re-decide")
    for row in rows:
        path = folder / row.transcript
        transcript = Transcript.load(path)
        spent = row.usage.prompt_tokens + row.usage.completion_tokens
        recorded = (row.score, float(row.confidence or 0.0), spent)
        kept[AS_RECORDED].append(recorded)
        judged = transcript.decision is not None and transcript.decision.protocol == "judge"
        voting_cost = spent - (judge_tokens(transcript) if judged else 0)
        history = vote_history(transcript, task.normalize)
        ctx = DecisionContext(history=history, conformity=transcript.conformity_flips())
        final = history[-1] if history else []
        for name in VOTING:
            decision = get_protocol(name).decide(final, ctx) if final else None
            score = task.score(decision.answer if decision else None, row.gold)
            kept[name].append((score, decision.confidence if decision else 0.0, voting_cost))
        scored = lambda answer, gold=row.gold: task.score(answer, gold)  # noqa: E731
        kept[ROUND0_VOTE].append(round0_vote(transcript, history, scored))
        config = DebateConfig.model_validate(transcript.config)
        for name, share in EARLY_STOPS.items():
            replayed = early_stop(transcript, config, history, share, recorded, scored)
            if replayed is None:
                inexact.add(name)
            else:
                stops[name].append(replayed)
    kept |= {name: values for name, values in stops.items() if name not in inexact}
    lines = {}
    for name, values in kept.items():
        scores, confidences, tokens = zip(*values, strict=True)
        acc = accuracy(scores)
        lines[name] = {
            "n": acc.n,
            "accuracy": acc.mean,
            "ci_low": acc.low,
            "ci_high": acc.high,
            "confidence": sum(confidences) / acc.n,
            "brier": brier(confidences, [s == 1.0 for s in scores]),
            "tokens": sum(tokens) / acc.n,
        }
    return pd.DataFrame.from_dict(lines, orient="index")
