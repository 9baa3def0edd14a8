"""Why did the committed gsm8k compile get 0 of 6 train debates right? Replays those debates and counts causes.

``compiled/gsm8k-qwen2.5-1.5b.json`` was compiled with bootstrap on 6 questions (its manifest's
``train_ids``) with 2 agents, 1 round, majority, 384 completion tokens per call; no debate was
right, so no demo was kept. This runs that configuration on the same questions at 384 and at
a larger completion limit and reports, per question and call: the answer, whether it is right,
the completion tokens (a reply that reaches the limit was cut), and whether the call failed.

Usage (from the repo root; prints JSON lines, one per question and limit):
    python bench/compile_zero_right.py --model local/qwen2.5-coder-1.5b-instruct-q4_k_m --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import dspy

from madspy.data import get_task
from madspy.optimizers.compile import task_question
from madspy.programs import Debate
from madspy.programs.config import DebateConfig

ARTIFACT = Path(__file__).resolve().parents[1] / "compiled" / "gsm8k-qwen2.5-1.5b.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--limits", default="384,768", help="completion tokens per call to compare")
    args = parser.parse_args()
    manifest = json.loads(ARTIFACT.read_text(encoding="utf-8"))["manifest"]
    ids = manifest["data"]["train_ids"]
    task = get_task("gsm8k")
    examples = {e.id: e for e in task.load("test", data_dir=args.data_dir)}
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    for limit in (int(x) for x in args.limits.split(",")):
        config = DebateConfig.with_agents(2, rounds=1, protocol="majority", max_tokens=limit, cache=False)
        config = config.updated(model=args.model, resolver={"enabled": False})
        debate = Debate(config, normalize=task.normalize)
        for qid in ids:
            example = task_question(examples[qid], task)
            result = debate(question=example.question)
            calls = [
                {
                    "role": str(c.role),
                    "ok": c.ok,
                    "error": (c.error or "")[:80] or None,
                    "completion_tokens": c.completion_tokens,
                    "cut": c.completion_tokens >= limit,
                    "answer": (c.output or {}).get("answer"),
                    "right": task.score((c.output or {}).get("answer"), example.answer) >= 0.5,
                }
                for c in result.transcript.calls()
            ]
            row = {"limit": limit, "id": qid, "gold": example.answer, "answer": result.answer}
            row |= {"right": task.score(result.answer, example.answer) >= 0.5, "status": str(result.status)}
            print(json.dumps(row | {"calls": calls}), flush=True)


if __name__ == "__main__":
    main()
