"""Two programs' eval rows pooled over several samples, paired by question: accuracy, McNemar, bootstrap CI.

``madspy compare`` pairs two programs inside one sample. When a comparison was run as several
samples (seed 0, then seed 1), this pools them: each question counts once (the first sample
that paired it), so a question drawn by two seeds is not counted twice. No LM call.

Each ``--sample`` is ``A_FOLDER`` or ``A_FOLDER:B_FOLDER`` (when program B's rows of that
sample sit in another eval folder of the same questions).

Usage (from the repo root):
    python bench/pooled_pairs.py --a compiled/gsm8k-proposer-qwen2.5-1.5b.json \
        --b bench/programs/debate-no-critic-2of3.json \
        --sample bench/runs/gsm8k-n50-seed0-compiled-proposer:bench/runs/gsm8k-n50-seed0-dumad-debate \
        --sample bench/runs/gsm8k-n50-seed1-proposer-ab
"""

from __future__ import annotations

import argparse
from pathlib import Path

from madspy.evaluation import load_rows
from madspy.optimizers.metrics import mcnemar, paired_bootstrap
from madspy.rows import EvalRow


def rows_of(folder: Path, program: str) -> dict[str, EvalRow]:
    return {r.id: r for r in load_rows(folder) if r.program == program}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="program A, as eval names it")
    parser.add_argument("--b", required=True, help="program B, as eval names it")
    parser.add_argument("--sample", action="append", required=True, help="A_FOLDER or A_FOLDER:B_FOLDER")
    args = parser.parse_args()
    pairs: dict[str, tuple[EvalRow, EvalRow]] = {}
    for sample in args.sample:
        folder_a, _, folder_b = sample.partition(":")
        a, b = rows_of(Path(folder_a), args.a), rows_of(Path(folder_b or folder_a), args.b)
        shared = sorted(set(a) & set(b))
        repeated = [q for q in shared if q in pairs]
        for q in shared:
            pairs.setdefault(q, (a[q], b[q]))
        print(f"{sample}: {len(shared)} paired questions, {len(repeated)} already counted {repeated or ''}")
    right_a = [ra.correct for ra, _ in pairs.values()]
    right_b = [rb.correct for _, rb in pairs.values()]
    n = len(pairs)
    test = mcnemar(right_a, right_b)
    ci = paired_bootstrap([float(x) for x in right_a], [float(x) for x in right_b])
    tokens_a = sum(ra.tokens for ra, _ in pairs.values()) / n
    tokens_b = sum(rb.tokens for _, rb in pairs.values()) / n
    print(f"n={n}  A {sum(right_a) / n:.3f}  B {sum(right_b) / n:.3f}  tokens/q {tokens_a:.0f} / {tokens_b:.0f}")
    print(f"only A right {test.a_only}, only B right {test.b_only}, McNemar p = {test.p_value:.3g} ({test.method})")
    print(f"A - B = {ci.mean_difference:+.3f}, 95% bootstrap CI {ci.low:+.3f} to {ci.high:+.3f}")


if __name__ == "__main__":
    main()
