"""The trials of a `madspy search` study: their rows, a table, each trial paired with a reference trial.

Every trial of a study answers the same train questions in the same order and keeps each
question's score and tokens (user attributes ``scores`` and ``tokens``), so any two trials can be
compared question by question. This writes one JSON line per trial (``--rows``), prints a table of
every trial with its McNemar counts against ``--reference`` (default trial 0: a new efficient
study's first trial is the preset it would replace) on the questions both answered, and, per knob,
the mean accuracy and tokens of the completed trials at each of its values.

Usage (from the repo root):
    python bench/study_trials.py --storage sqlite:///bench/runs/arc_challenge-validation-search-efficient/study.db \\
        --study arc-efficient --rows bench/runs/arc_challenge-validation-search-efficient/trials.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import optuna

from madspy.optimizers.metrics import mcnemar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", required=True)
    parser.add_argument("--study", required=True)
    parser.add_argument("--reference", type=int, default=0, help="the trial every other is paired with")
    parser.add_argument("--rows", type=Path, help="write one JSON line per trial here")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trials = optuna.load_study(study_name=args.study, storage=args.storage).trials
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as f:
            for t in trials:
                row = {"trial": t.number, "state": t.state.name, "values": t.values, "params": t.params}
                f.write(json.dumps(row | {k: t.user_attrs.get(k) for k in ("scores", "tokens")}) + "\n")
    reference = next(t for t in trials if t.number == args.reference).user_attrs.get("scores") or []
    print(f"study {args.study}: {len(trials)} trials; McNemar (this only vs reference only), trial {args.reference}")
    print("| trial | state | questions | accuracy | tokens/question | vs reference | params |")
    print("|--:|:--|--:|--:|--:|:--|:--|")
    for t in trials:
        scores, tokens = t.user_attrs.get("scores") or [], t.user_attrs.get("tokens") or []
        n = min(len(scores), len(reference))
        paired = mcnemar([s == 1.0 for s in scores[:n]], [s == 1.0 for s in reference[:n]]) if n else None
        versus = f"{paired.a_only} vs {paired.b_only} on {n} (p {paired.p_value:.2f})" if paired else "-"
        accuracy = f"{sum(scores) / len(scores):.3f}" if scores else "-"
        mean_tokens = f"{sum(tokens) / len(tokens):.0f}" if tokens else "-"
        print(f"| {t.number} | {t.state.name} | {len(scores)} | {accuracy} | {mean_tokens} | {versus} | {t.params} |")
    by_knob: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for t in trials:
        if t.state == optuna.trial.TrialState.COMPLETE:
            for knob, value in t.params.items():
                by_knob[knob, str(value)].append((t.values[0], t.values[1]))
    print("\n| knob | value | completed trials | mean accuracy | mean tokens/question |")
    print("|:--|:--|--:|--:|--:|")
    for (knob, value), outcomes in sorted(by_knob.items()):
        accuracy = sum(a for a, _ in outcomes) / len(outcomes)
        tokens = sum(t for _, t in outcomes) / len(outcomes)
        print(f"| {knob} | {value} | {len(outcomes)} | {accuracy:.3f} | {tokens:.0f} |")


if __name__ == "__main__":
    main()
