"""The tables of an eval's rows: one line per program (``summarize``) and its cost by role and round.

``summarize`` gives accuracy with a 95% Wilson interval, the round-0 vote's accuracy, calibration (Brier,
ECE), the critic's hit and false-alarm rates, tokens, calls, wall time, flips and accuracy by difficulty
stratum; ``cost_breakdown`` reads the transcripts for calls, tokens and latency per role and per round.
Difficulty strata (hard < 30% <= medium <= 70% < easy) come from each question's single-agent accuracy: the
share of ``sc``'s independent samples that are right, or ``cot``'s one answer without ``sc`` rows (then every
question is "easy" or "hard").

Example::

    from madspy.evaluation import load_rows
    from madspy.summary import summarize
    summarize(load_rows("runs/gsm8k"))[["accuracy", "tokens"]]
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from madspy.optimizers import metrics
from madspy.optimizers.traces import ProposalTrace
from madspy.rows import EvalRow


def _rate(value: float | None) -> float:
    return float("nan") if value is None else value


def single_agent_accuracy(rows: Sequence[EvalRow]) -> dict[str, float]:
    """Per question, the share of right single-agent answers: ``sc``'s samples, else ``cot``'s answer.

    >>> samples = [ProposalTrace(round=0, agent=i, answer="x", correct=c) for i, c in enumerate([1, 0, 0, 1, 1])]
    >>> sc = EvalRow(program="sc", id="q1", gold="x", status="converged", proposals=samples)
    >>> single_agent_accuracy([sc, EvalRow(program="cot", id="q1", gold="x", status="converged")])
    {'q1': 0.6}
    """
    samples = {r.id: [p.correct for p in r.proposals] for r in rows if r.program == "sc"}
    if any(samples.values()):
        return {question: sum(right) / len(right) for question, right in samples.items() if right}
    return {r.id: float(r.correct) for r in rows if r.program == "cot"}


def first_vote_right(proposals: Sequence[ProposalTrace]) -> float | None:
    """Whether the plurality of the round-0 answers is right (ties split evenly); None below two answers.

    The vote a debate would take without debating: compare it with the final accuracy
    to see what the later rounds added. Needs the proposals' ``key`` (``debate_trace``).

    >>> votes = lambda *keys: [ProposalTrace(round=0, agent=i, answer=k, key=k, correct=k == "7")
    ...                        for i, k in enumerate(keys)]
    >>> first_vote_right(votes("7", "7", "9")), round(first_vote_right(votes("7", "8", "9")), 3)
    (1.0, 0.333)
    """
    first = [p for p in proposals if p.key is not None and p.round == 0]
    if len(first) < 2:
        return None
    counts = Counter(p.key for p in first)
    tied = [key for key, n in counts.items() if n == max(counts.values())]
    right = {p.key for p in first if p.correct}
    return sum(key in right for key in tied) / len(tied)


def _programs(rows: Sequence[EvalRow], order: Sequence[str]) -> list[str]:
    """The programs of ``rows``: those in ``order`` first, the others alphabetically."""
    return list(dict.fromkeys([*order, *sorted({r.program for r in rows})]))


def summarize(rows: Sequence[EvalRow], order: Sequence[str] = ()) -> pd.DataFrame:
    """One line per program: accuracy (95% Wilson CI), calibration, critic rates, cost, flips, strata.

    ``order`` lists programs to put first; others follow alphabetically.
    """
    programs = _programs(rows, order)
    strata = metrics.difficulty_strata(single_agent_accuracy(rows))
    lines = []
    for name in programs:
        mine = [r for r in rows if r.program == name]
        if not mine:
            continue
        acc = metrics.accuracy([r.score for r in mine])
        correct = [r.correct for r in mine]
        confidence = [r.confidence for r in mine]
        critic = metrics.critic_rates((c.proposal_correct, c.flagged) for r in mine for c in r.critic)
        flips = metrics.flip_stats(f.model_dump() for r in mine for f in r.flips)
        none = metrics.FlipCounts(0, 0, 0)
        stratum = metrics.by_stratum({r.id: r.score for r in mine if r.id in strata}, strata)
        first_votes = [v for r in mine if (v := first_vote_right(r.proposals)) is not None]
        lines.append(
            {
                "program": name,
                "n": len(mine),
                "accuracy": acc.mean,
                "ci_low": acc.low,
                "ci_high": acc.high,
                "acc_first_vote": sum(first_votes) / len(first_votes) if first_votes else float("nan"),
                "confidence": sum(confidence) / len(mine),
                "brier": metrics.brier(confidence, correct),
                "ece": metrics.ece(confidence, correct),
                "critic_hit_rate": _rate(critic.hit_rate),
                "critic_false_alarm": _rate(critic.false_alarm_rate),
                "tokens": sum(r.tokens for r in mine) / len(mine),
                "prompt_tokens": sum(r.usage.prompt_tokens for r in mine) / len(mine),
                "completion_tokens": sum(r.usage.completion_tokens for r in mine) / len(mine),
                "cached_prompt_tokens": sum(r.usage.cached_prompt_tokens for r in mine) / len(mine),
                "calls": sum(r.usage.calls for r in mine) / len(mine),
                "unreadable": sum(r.readable is False for r in mine),  # no answer the task reads: no number, no option
                "cut_at_max_tokens": sum(r.usage.length_calls > 0 for r in mine),
                "wall_s": sum(r.wall_s for r in mine) / len(mine),
                "flips_evidence": flips.get("evidence", none).flips,
                "flips_conformity": flips.get("conformity", none).flips,
                "right_to_wrong": flips["all"].right_to_wrong,
                "wrong_to_right": flips["all"].wrong_to_right,
                **{f"acc_{s}": _rate(stratum[s].mean) for s in metrics.STRATA},
                "statuses": " ".join(f"{s}:{c}" for s, c in sorted(Counter(str(r.status) for r in mine).items())),
            }
        )
    return pd.DataFrame(lines).set_index("program") if lines else pd.DataFrame()


def cost_breakdown(rows: Sequence[EvalRow], out: str | Path, order: Sequence[str] = ()) -> pd.DataFrame:
    """Each program's mean cost per question by role and by round, read from the rows' transcripts.

    One line per (program, ``"role"`` or ``"round"``, role name or round index) with
    calls, cached calls (answered by the LM cache, e.g. a request another program made
    first: no model time, tokens estimated), prompt_tokens, cached_prompt_tokens (of those, taken
    from the backend's prefix cache), completion_tokens and
    latency_s (summed over calls, so concurrent calls add up, and including the time a
    call waited for its model: a local model runs one call at a time) per question.
    Rows without a transcript (invalid input) count as questions that cost nothing.
    """
    out = Path(out)
    fields = ("calls", "cached", "prompt_tokens", "cached_prompt_tokens", "completion_tokens", "latency_s")
    lines = []
    for name in _programs(rows, order):
        mine = [r for r in rows if r.program == name]
        transcripts = [
            json.loads((out / r.transcript).read_text(encoding="utf-8"))
            for r in mine
            if r.transcript and (out / r.transcript).is_file()
        ]
        cost = metrics.cost_summary(transcripts)
        for by, parts in (("role", cost.by_role), ("round", cost.by_round)):
            lines += [
                {"program": name, "by": by, "part": str(part)}
                | {field: getattr(usage, field) / len(mine) for field in fields}
                for part, usage in parts.items()
            ]
    return pd.DataFrame(lines).set_index(["program", "by", "part"]) if lines else pd.DataFrame()


def paired_rows(rows: Sequence[EvalRow]) -> list[EvalRow]:
    """The rows of questions every program has a row for (drops a question a stopped run left half done).

    >>> rows = [EvalRow(program=p, id=i, gold="x", status="converged") for p, i in [("a", "1"), ("b", "1"), ("a", "2")]]
    >>> [(r.program, r.id) for r in paired_rows(rows)]
    [('a', '1'), ('b', '1')]
    """
    programs = {r.program for r in rows}
    done: dict[str, set[str]] = {}
    for r in rows:
        done.setdefault(r.id, set()).add(r.program)
    return [r for r in rows if done[r.id] == programs]


def write_tables(out: str | Path, **tables: pd.DataFrame) -> list[Path]:
    """Save each table as ``<name>.csv`` and ``<name>.md`` in ``out``; returns their paths."""
    paths = []
    for name, table in tables.items():
        csv, md = Path(out) / f"{name}.csv", Path(out) / f"{name}.md"
        table.to_csv(csv)
        md.write_text(table.to_markdown(floatfmt=".3f") + "\n", encoding="utf-8")
        paths += [csv, md]
    return paths


__all__ = ["cost_breakdown", "first_vote_right", "paired_rows", "single_agent_accuracy", "summarize", "write_tables"]
