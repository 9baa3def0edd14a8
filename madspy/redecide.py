"""What other decision protocols would have answered on an eval's recorded debates, with no LM call.

Every debate transcript keeps each round's votes, so the vote protocols (majority,
plurality, confidence, free) can be replayed on them for free: a protocol choice
(the Debate-or-Vote question) measured on the same debates, next to what they
decided. An agent's confidence in a round is that of its latest proposer call up to
that round. The judge needs an LM call and is not replayed; a protocol that votes
skips the judge's calls (the last round's critiques and the resolver), so their
tokens come off its cost.

Example::

    table = redecide("runs/gsm8k", program="debate")
    table.loc["majority", ["accuracy", "brier", "tokens"]]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from madspy.data import get_task
from madspy.evaluation import EvalError, load_rows, paired_rows, read_settings
from madspy.optimizers.metrics import accuracy, brier
from madspy.programs.protocols import DecisionContext, Vote, get_protocol
from madspy.programs.transcript import Transcript, Usage

AS_RECORDED = "as recorded"
VOTING = ("majority", "plurality", "confidence", "free")


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


def redecide(folder: str | Path, program: str = "debate", paired: bool = False) -> pd.DataFrame:
    """Per decision (as recorded, then each vote protocol) on ``program``'s debates in an eval ``folder``:
    n, accuracy with its 95% interval, mean confidence, Brier score and mean tokens per question.

    ``paired`` keeps only the questions every program of the folder finished (as ``summary --paired``).
    """
    folder = Path(folder)
    settings = read_settings(folder)
    if "task" not in settings:
        raise EvalError(f"{folder} is not an eval folder (no settings.json): give the folder madspy eval wrote")
    task = get_task(settings["task"])
    rows = load_rows(folder)
    rows = [r for r in (paired_rows(rows) if paired else rows) if r.program == program]
    if not rows:
        programs = ", ".join(sorted({r.program for r in load_rows(folder)}))
        raise EvalError(f"no rows of {program!r} in {folder}; programs there: {programs}")
    kept: dict[str, list[tuple[float, float, int]]] = {name: [] for name in (AS_RECORDED, *VOTING)}
    for row in rows:
        path = folder / row.transcript
        if not path.is_file():
            raise EvalError(f"{path} is missing: its row cannot be re-decided")
        transcript = Transcript.load(path)
        spent = row.usage.prompt_tokens + row.usage.completion_tokens
        kept[AS_RECORDED].append((row.score, float(row.confidence or 0.0), spent))
        judged = transcript.decision is not None and transcript.decision.protocol == "judge"
        voting_cost = spent - (judge_tokens(transcript) if judged else 0)
        history = vote_history(transcript, task.normalize)
        ctx = DecisionContext(history=history, conformity=transcript.conformity_flips())
        final = history[-1] if history else []
        for name in VOTING:
            decision = get_protocol(name).decide(final, ctx) if final else None
            score = task.score(decision.answer if decision else None, row.gold)
            kept[name].append((score, decision.confidence if decision else 0.0, voting_cost))
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
