"""Does running two llama.cpp contexts side by side (one thread each) beat one context with every thread?

Generation on CPU is bound by memory bandwidth, so two streams at 1 thread might together
generate faster than one stream at 2 threads: if they did, a debate's independent calls (the
round's proposals) could run in parallel on the local backend. This times, on an idle machine,
2 completions of ``--tokens`` tokens at temperature 0: one after the other in one context with
``--threads`` threads, then at once in two contexts with ``--threads // 2`` threads each.

Usage (from the repo root; prints one JSON object):
    python bench/parallel_contexts.py --model-path ~/.cache/madspy/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path

import llama_cpp

PROMPT = [{"role": "user", "content": "Write a long story about a cat and a dog who become friends."}]


def _complete(llm: llama_cpp.Llama, tokens: int, out: list[float]) -> None:
    started = time.perf_counter()
    llm.create_chat_completion(messages=PROMPT, max_tokens=tokens, temperature=0.0)
    out.append(time.perf_counter() - started)


def _context(path: Path, threads: int) -> llama_cpp.Llama:
    return llama_cpp.Llama(model_path=str(path), n_ctx=1024, n_threads=threads, n_threads_batch=threads, verbose=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-path", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()

    one = _context(args.model_path, args.threads)
    _complete(one, 8, [])  # warm up: load the weights into the page cache
    serial: list[float] = []
    started = time.perf_counter()
    for _ in range(2):
        one.reset()  # no prefix reuse between the two
        _complete(one, args.tokens, serial)
    serial_s = time.perf_counter() - started
    one.close()

    pair = [_context(args.model_path, max(1, args.threads // 2)) for _ in range(2)]
    parallel: list[float] = []
    workers = [threading.Thread(target=_complete, args=(llm, args.tokens, parallel)) for llm in pair]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    parallel_s = time.perf_counter() - started
    print(
        json.dumps(
            {
                "tokens_per_completion": args.tokens,
                "threads": args.threads,
                "serial_one_context_s": round(serial_s, 2),
                "parallel_two_contexts_s": round(parallel_s, 2),
                "speedup": round(serial_s / parallel_s, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
