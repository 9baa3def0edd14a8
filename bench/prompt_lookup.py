"""Does prompt-lookup speculative decoding speed up generation on 2 CPU cores?

A reviser restates its peers' reasoning, so its reply copies n-grams from its prompt: the case
prompt-lookup decoding (Saxena 2023, https://github.com/apoorvumang/prompt-lookup-decoding) is
built for. llama-cpp-python ships it as ``LlamaPromptLookupDecoding``, passed as ``draft_model``;
it turns on ``logits_all``. This times one such completion of ``--tokens`` tokens at temperature 0
in a fresh context each: plain, with ``logits_all`` only (to separate its cost), and with the
draft at each ``--draft`` length. Run it on an idle machine.

Usage (from the repo root; prints one JSON object):
    python bench/prompt_lookup.py --model-path ~/.cache/madspy/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import llama_cpp
from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

PEER = (
    "Agent 1 said: The laptop costs $1000. A 20% discount is 0.20 * 1000 = 200 dollars. "
    "So you pay 1000 - 200 = 800 dollars. The answer is 800."
)
PROMPT = [
    {
        "role": "user",
        "content": "Question: The price of a laptop is $1000. If you get a 20% discount, how much do you "
        f"have to pay?\n{PEER}\nRestate Agent 1's reasoning in your own words and give the answer.",
    }
]


def _time(model_path: Path, tokens: int, threads: int, **extra: Any) -> dict[str, Any]:
    llm = llama_cpp.Llama(model_path=str(model_path), n_ctx=2048, n_threads=threads, verbose=False, **extra)
    started = time.perf_counter()
    out = llm.create_chat_completion(messages=PROMPT, max_tokens=tokens, temperature=0.0)
    wall = time.perf_counter() - started
    llm.close()
    return {"wall_s": round(wall, 2), "text": out["choices"][0]["message"]["content"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-path", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=120)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--draft", type=int, nargs="+", default=[2, 4, 10], help="draft lengths to try")
    args = parser.parse_args()
    runs = {
        "plain": _time(args.model_path, args.tokens, args.threads),
        "logits_all": _time(args.model_path, args.tokens, args.threads, logits_all=True),
    }
    for k in args.draft:
        draft = LlamaPromptLookupDecoding(num_pred_tokens=k)
        runs[f"draft_{k}"] = _time(args.model_path, args.tokens, args.threads, draft_model=draft)
    plain = runs["plain"]
    print(
        json.dumps(
            {
                "model": args.model_path.name,
                "threads": args.threads,
                "tokens": args.tokens,
                "wall_s": {name: run["wall_s"] for name, run in runs.items()},
                "speedup": {name: round(plain["wall_s"] / run["wall_s"], 2) for name, run in runs.items()},
                "same_text": {name: run["text"] == plain["text"] for name, run in runs.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
