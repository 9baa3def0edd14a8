"""What other decision protocols would have answered on recorded debates, with no LM call.

Re-applies madspy's vote protocols (majority, plurality, confidence, free) to the votes
recorded in every debate transcript of an eval folder, and prints each one's accuracy
and calibration next to what the debate itself decided (e.g. the judge). An agent's confidence in a
round is that of its latest proposer call up to that round. The judge needs an LM call,
so it is not replayed; a protocol that votes skips the judge's calls (the critique of
the last round and the resolver), whose tokens are shown as saved.

Usage (from the repo root; prints a Markdown table):
    python bench/redecide.py bench/runs/gsm8k-n50-seed0 [--program debate]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from madspy.data import get_task
from madspy.evaluation import load_rows
from madspy.optimizers.metrics import accuracy, brier
from madspy.programs.protocols import DecisionContext, Vote, get_protocol
from madspy.programs.transcript import Transcript

VOTING = ("majority", "plurality", "confidence", "free")


def vote_history(transcript: Transcript, normalize) -> list[list[Vote]]:
    """The votes after each round, with each agent's latest proposer confidence."""
    confidence: dict[int, float] = {}
    history = []
    for rnd in transcript.rounds:
        for call in rnd.calls:
            if call.role == "proposer" and call.ok and call.agent is not None:
                confidence[call.agent] = float(call.output.get("confidence") or 0.0)
        history.append([Vote(int(a), answer, normalize(answer) or answer.strip().lower(), confidence.get(int(a), 0.0))
                        for a, answer in rnd.votes.items() if answer])
    return history


def judge_tokens(transcript: Transcript) -> int:
    """Tokens of the calls only a judge decision needs: the last round's critiques and the resolver."""
    last = transcript.rounds[-1].calls if transcript.rounds else []
    calls = [c for c in last if c.role == "critic"] + [c for r in transcript.rounds for c in r.calls
                                                      if c.role == "resolver"]
    return sum(c.prompt_tokens + c.completion_tokens for c in calls)


def redecide(folder: Path, program: str) -> list[dict]:
    """One line per protocol on ``folder``'s debates: accuracy (95% interval), confidence, Brier, tokens."""
    settings = json.loads((folder / "settings.json").read_text())
    task = get_task(settings["task"])
    rows = [r for r in load_rows(folder) if r["program"] == program]
    if not rows:
        raise SystemExit(f"no rows of {program!r} in {folder}")
    scores: dict[str, list[float]] = {name: [] for name in ("as recorded", *VOTING)}
    tokens: dict[str, list[int]] = {name: [] for name in scores}
    confidences: dict[str, list[float]] = {name: [] for name in scores}
    for row in rows:
        transcript = Transcript.load(folder / row["transcript"])
        recorded = row["usage"]["prompt_tokens"] + row["usage"]["completion_tokens"]
        judged = transcript.decision is not None and transcript.decision.protocol == "judge"
        scores["as recorded"].append(row["score"])
        tokens["as recorded"].append(recorded)
        confidences["as recorded"].append(float(row.get("confidence") or 0.0))
        history = vote_history(transcript, task.normalize)
        ctx = DecisionContext(history=history, conformity={(f.agent, r.index) for r in transcript.rounds
                                                           for f in r.flips if f.kind == "conformity"})
        final = history[-1] if history else []
        for name in VOTING:
            decision = get_protocol(name).decide(final, ctx) if final else None
            scores[name].append(task.score(decision.answer if decision else None, row["gold"]))
            confidences[name].append(decision.confidence if decision else 0.0)
            tokens[name].append(recorded - (judge_tokens(transcript) if judged else 0))
    lines = []
    for name, values in scores.items():
        acc = accuracy(values)
        lines.append({"decision": name, "n": acc.n, "accuracy": acc.mean, "ci_low": acc.low, "ci_high": acc.high,
                      "confidence": sum(confidences[name]) / len(values),
                      "brier": brier(confidences[name], [v == 1.0 for v in values]),
                      "tokens": sum(tokens[name]) / len(values)})
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="an eval folder (madspy eval --out)")
    p.add_argument("--program", default="debate", help="the program whose debates are re-decided (default debate)")
    args = p.parse_args()
    lines = redecide(args.folder, args.program)
    print("| decision | n | accuracy | 95% CI | confidence | Brier | tokens/question |\n|:--|--:|--:|:--|--:|--:|--:|")
    for line in lines:
        print(f"| {line['decision']} | {line['n']} | {line['accuracy']:.3f} | {line['ci_low']:.3f}-{line['ci_high']:.3f}"
              f" | {line['confidence']:.3f} | {line['brier']:.3f} | {line['tokens']:.0f} |")


if __name__ == "__main__":
    main()
