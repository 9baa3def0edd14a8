"""What an adversarial debater did in an eval: how often it argued a wrong answer, converted honest agents, won.

Reads the rows and settings of eval folders written with ``madspy eval --adversary AGENTS`` (the
settings name the adversaries) and prints one Markdown line per folder and debating program:

- ``adversary wrong``: questions where an adversary's round-0 answer was wrong (a small model told to
  argue a wrong answer sometimes gives the right one);
- ``converted``: honest agents that ended on a wrong answer an adversary argued, having started elsewhere;
- ``decided for adversary``: questions whose decision was an adversary's wrong answer.

Usage (from the repo root):
    python bench/adversary_effect.py bench/runs/gsm8k-n50-seed0-adversary-off bench/runs/gsm8k-n50-seed0-adversary-on
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from madspy.data import get_task
from madspy.evaluation import EvalRow, eval_settings, load_rows


def effect(row: EvalRow, adversaries: set[int], normalize: Callable[[str | None], str | None]) -> dict[str, int]:
    """Counts for one debate: adversary wrong at round 0, honest agents (and converted ones), decided for it."""
    proposals = [p for p in row.proposals if p.key is not None]
    wrong_argued = {p.key for p in proposals if p.agent in adversaries and not p.correct}
    first = {p.agent: p.key for p in proposals if p.round == 0}
    last = {p.agent: p for p in sorted(proposals, key=lambda p: p.round)}
    honest = [agent for agent in last if agent not in adversaries]
    converted = [a for a in honest if last[a].key in wrong_argued and first.get(a) != last[a].key]
    return {
        "adversary_wrong": int(any(p.agent in adversaries and p.round == 0 and not p.correct for p in proposals)),
        "honest": len(honest),
        "converted": len(converted),
        "decided_for_adversary": int(not row.correct and normalize(row.answer) in wrong_argued),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    lines = []  # printed once every folder is read: a refused folder leaves no half table
    for folder in args.folders:
        settings = eval_settings(folder)
        adversaries = set((settings.get("adversary") or {}).get("agents", []))
        if not adversaries:
            raise SystemExit(f"{folder}: its settings name no adversary (run madspy eval with --adversary)")
        normalize = get_task(settings["task"]).normalize
        rows = load_rows(folder)
        for program in dict.fromkeys(r.program for r in rows):
            mine = [r for r in rows if r.program == program]
            if not any(p.agent in adversaries for r in mine for p in r.proposals):
                continue  # a program with fewer agents ran without the adversary
            counts = [effect(r, adversaries, normalize) for r in mine]
            total = {k: sum(c[k] for c in counts) for k in counts[0]}
            accuracy = sum(r.correct for r in mine) / len(mine)
            lines.append(
                f"| {folder.name} | {program} | {len(mine)} | {accuracy:.3f} | {total['adversary_wrong']} "
                f"| {total['converted']} / {total['honest']} | {total['decided_for_adversary']} |"
            )
    print("| folder | program | n | accuracy | adversary wrong | converted / honest agents | decided for adversary |")
    print("|:--|:--|--:|--:|--:|--:|--:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
