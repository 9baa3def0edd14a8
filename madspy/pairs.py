"""Preference pairs for DPO from eval transcripts (seed 000, section 6.1).

Where an agent revised a wrong answer into a right one, its revision is
"chosen" and its earlier answer "rejected"; the critiques of the earlier answer
(the critic outputs) go into ``meta`` as the explanation. Right and wrong come from the task's scorer
against the gold answer of the row, so right-to-wrong changes never become pairs.

Example::

    from madspy.pairs import export_pairs
    export_pairs("runs/gsm8k", "pairs.jsonl")     # -> number of pairs written
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from madspy.data import Task, recorded_task
from madspy.evaluation import eval_settings, load_rows
from madspy.programs.steps import with_free_text
from madspy.programs.transcript import Call, Transcript


def completion(output: dict[str, Any]) -> str:
    """A proposer's output as a completion: its reasoning, then its answer."""
    reasoning = with_free_text(output).get("reasoning") or ""
    return "\n".join([*filter(None, [str(reasoning)]), f"Answer: {output.get('answer')}"])


def transcript_pairs(t: Transcript, is_correct: Callable[[str], bool]) -> list[dict[str, Any]]:
    """The wrong-then-right revisions of every agent in one debate, as preference pairs."""
    latest: dict[int, Call] = {}
    pairs = []
    for rnd in t.rounds:
        for call in rnd.calls:
            if not call.role.answers or call.agent is None or not call.ok or call.output is None:
                continue
            before = latest.get(call.agent)
            latest[call.agent] = call
            if (
                before is None
                or is_correct(str(before.output.get("answer") or ""))
                or not is_correct(str(call.output.get("answer") or ""))
            ):
                continue
            critiques = [
                c.output
                for r in t.rounds
                for c in r.calls
                if c.role == "critic" and c.agent == call.agent and c.round == before.round and c.output
            ]
            agent_model = (t.config.get("agents") or [{}] * (call.agent + 1))[call.agent].get("model")
            pairs.append(
                {
                    "prompt": t.question,
                    "chosen": completion(call.output),
                    "rejected": completion(before.output),
                    "meta": {
                        "agent": call.agent,
                        "rejected_round": before.round,
                        "chosen_round": call.round,
                        "evidence_ref": call.output.get("evidence_ref"),
                        "critiques": critiques,
                        "model": agent_model or t.config.get("model"),
                    },
                }
            )
    return pairs


def eval_folder_task(eval_dir: Path) -> Task:
    """The task an eval folder was run on (from its settings); refuses a folder that is not one."""
    return recorded_task(eval_settings(eval_dir))


def export_pairs(eval_dir: str | Path, out: str | Path) -> int:
    """Write the preference pairs of every transcript of an eval folder to ``out`` (JSONL); returns how many."""
    eval_dir = Path(eval_dir)
    task = eval_folder_task(eval_dir)
    count = 0
    with open(out, "w", encoding="utf-8") as f:
        for row in load_rows(eval_dir):
            if not row.transcript:
                continue
            t = Transcript.load(eval_dir / row.transcript)
            for pair in transcript_pairs(t, partial(task.right, gold=row.gold, question=t.question)):
                pair["meta"] |= {"program": row.program, "id": row.id, "gold": row.gold}
                f.write(json.dumps(pair, ensure_ascii=False) + "\n")
                count += 1
    return count
