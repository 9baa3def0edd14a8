"""Does madspy's structured output cost a local model accuracy? Chain of thought three ways, same questions.

- ``plain``: the question plus "think step by step" as one chat message, free text,
  scored by the task's normalizer (last number, boxed answer, option letter); no DSPy.
- ``json``: madspy's ``cot`` preset as ``madspy eval`` runs it on local models
  (JSONAdapter; the local provider turns the output schema into a llama.cpp grammar).
- ``chat``: the same preset through DSPy's ChatAdapter (free-form ``[[ ## field ## ]]``
  sections; madspy retries a reply that does not parse once, showing the error).
- ``lean``: ``json`` with a short system message (``LeanJSONAdapter`` below): the grammar
  already forces the JSON shape, so DSPy's ~250 tokens of format explanation are dropped;
  the instructions and the output fields' descriptions stay.

The questions are the first ``--n`` of the bench eval's sample (``--sample`` questions,
seed 0), so they are the ones ``bench/run_eval.sh`` runs first.

Usage (from the repo root; prints a Markdown table):
    python bench/format_check.py --model local/$(../shared/tools/fetch-bench-model | tail -n 1) --n 10
"""

from __future__ import annotations

import argparse
import textwrap
import time
from contextlib import nullcontext
from statistics import mean
from unittest import mock

import dspy
import llama_cpp

from madspy.core import local
from madspy.data import get_task
from madspy.evaluation import build_program

PLAIN_SUFFIX = "\nThink step by step, then give the final answer."


class LeanJSONAdapter(dspy.JSONAdapter):
    """JSONAdapter for backends that enforce the output schema with a grammar: no format tutorial."""

    def format_field_description(self, signature) -> str:
        outputs = "\n".join(
            f"- {name}: {field.json_schema_extra.get('desc', '')}" for name, field in signature.output_fields.items()
        )
        return f"Reply with one JSON object with these fields, in this order:\n{outputs}"

    def format_field_structure(self, signature) -> str:
        return f"The input comes as sections: {', '.join(f'[[ ## {n} ## ]]' for n in signature.input_fields)}."

    def format_task_description(self, signature) -> str:
        return textwrap.dedent(signature.instructions).strip()

    def user_message_output_requirements(self, signature) -> None:
        return None


def run_plain(model: str, task, examples, max_tokens: int) -> list[dict]:
    llm = llama_cpp.Llama(
        model_path=str(local.resolve(model)), n_ctx=local.n_ctx(), n_threads=local.n_threads(), verbose=False
    )
    rows = []
    for ex in examples:
        started = time.perf_counter()
        reply = llm.create_chat_completion(
            [{"role": "user", "content": task.ask(ex.question) + PLAIN_SUFFIX}], temperature=0.0, max_tokens=max_tokens
        )
        usage = reply["usage"]
        rows.append(
            {
                "score": task.score(reply["choices"][0]["message"]["content"], ex.answer),
                "prompt": usage["prompt_tokens"],
                "completion": usage["completion_tokens"],
                "retried": 0,
                "failed": 0,
                "wall": time.perf_counter() - started,
            }
        )
    llm.close()
    return rows


def run_cot(model: str, task, examples, adapter: dspy.Adapter | None) -> list[dict]:
    program = build_program("cot", task, model, cache=False)
    rows = []
    with mock.patch("madspy.programs.debate.adapter_for", lambda m: adapter) if adapter else nullcontext():
        for ex in examples:
            started = time.perf_counter()
            result = program(question=task.ask(ex.question))
            calls = result.transcript.calls()
            rows.append(
                {
                    "score": task.score(result.answer, ex.answer),
                    "prompt": result.usage["prompt_tokens"],
                    "completion": result.usage["completion_tokens"],
                    "retried": sum(c.attempts > 1 for c in calls),
                    "failed": result.usage["failed_calls"],
                    "wall": time.perf_counter() - started,
                }
            )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="a local/... model string")
    p.add_argument("--task", default="gsm8k")
    p.add_argument("--data-dir", default="../shared/data")
    p.add_argument("--n", type=int, default=10, help="questions (the first n of the bench sample)")
    p.add_argument("--sample", type=int, default=50, help="the bench eval's sample size")
    p.add_argument("--modes", default="plain,json,chat,lean")
    args = p.parse_args()
    local.register()
    task = get_task(args.task)
    examples = task.load(data_dir=args.data_dir, n=args.sample, seed=0)[: args.n]
    max_tokens = build_program("cot", task, args.model).config.max_tokens
    runs = {
        "plain": lambda: run_plain(args.model, task, examples, max_tokens),
        "json": lambda: run_cot(args.model, task, examples, None),
        "chat": lambda: run_cot(args.model, task, examples, dspy.ChatAdapter(use_json_adapter_fallback=False)),
        "lean": lambda: run_cot(args.model, task, examples, LeanJSONAdapter()),
    }
    print(f"{args.task}, first {len(examples)} of the {args.sample}-question bench sample (seed 0), {args.model}\n")
    print("| mode | right | prompt tokens/q | completion tokens/q | replies retried | calls failed | wall s/q |")
    print("|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        rows = runs[mode]()
        print(
            f"| {mode} | {sum(r['score'] for r in rows):g}/{len(rows)} | {mean(r['prompt'] for r in rows):.0f} | "
            f"{mean(r['completion'] for r in rows):.0f} | {sum(r['retried'] for r in rows)} | "
            f"{sum(r['failed'] for r in rows)} | {mean(r['wall'] for r in rows):.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
