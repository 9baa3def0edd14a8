"""Does decoding a round's sequences in one llama.cpp batch generate faster than one sequence at a time?

A debate round asks several agents at once, and on GPUs (and in llama.cpp's server with
``--parallel``) their sequences share each forward pass: the weights are read once per
step for all of them. If generation here were bound by memory bandwidth, a step for 3
sequences would cost little more than a step for 1 and a round would generate up to 3x
faster. This measures it with llama.cpp's multi-sequence batch API: one prompt of
``--prompt-tokens`` tokens is evaluated once and copied to every sequence, then
``--steps`` greedy decoding steps run for 1, 2 and 3 sequences at once (each measured
twice, in the order 1 2 3 3 2 1), on an idle machine.

Usage (from the repo root; prints one JSON object):
    python bench/batched_decoding.py --model-path ~/.cache/madspy/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import llama_cpp as L
import numpy as np

TEXT = "The quick brown fox jumps over the lazy dog while the farmer counts his sheep. "


class Batched:
    """One context holding ``seqs`` sequences that share a prompt."""

    def __init__(self, path: Path, seqs: int, threads: int, prompt_tokens: int, steps: int):
        L.llama_backend_init()
        self.model = L.llama_model_load_from_file(str(path).encode(), L.llama_model_default_params())
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        params = L.llama_context_default_params()
        params.n_seq_max, params.n_batch = seqs, 512
        params.n_ctx = seqs * (prompt_tokens + steps + 64)  # the cells are split between the sequences
        params.n_threads = params.n_threads_batch = threads
        self.ctx = L.llama_init_from_model(self.model, params)
        self.memory = L.llama_get_memory(self.ctx)
        self.batch = L.llama_batch_init(512, 0, seqs)
        self.prompt = self._tokens(prompt_tokens)

    def _tokens(self, n: int) -> list[int]:
        text = (TEXT * (n // 10 + 1)).encode()
        buffer = (L.llama_token * (len(text) + 8))()
        count = L.llama_tokenize(self.vocab, text, len(text), buffer, len(buffer), True, False)
        return list(buffer[:count])[:n]

    def _decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        """Evaluate (token, position, sequence, wants logits) items in one llama_decode."""
        self.batch.n_tokens = len(items)
        for j, (token, pos, seq, logits) in enumerate(items):
            self.batch.token[j], self.batch.pos[j], self.batch.logits[j] = token, pos, logits
            self.batch.n_seq_id[j], self.batch.seq_id[j][0] = 1, seq
        if L.llama_decode(self.ctx, self.batch) != 0:
            raise RuntimeError("llama_decode failed")

    def _greedy(self, index: int) -> int:
        logits = np.ctypeslib.as_array(L.llama_get_logits_ith(self.ctx, index), shape=(self.n_vocab,))
        return int(np.argmax(logits))

    def evaluate_prompt(self, seqs: int) -> int:
        """The prompt in sequence 0, copied to the others; returns the first generated token."""
        last = len(self.prompt) - 1
        for start in range(0, len(self.prompt), 512):
            chunk = self.prompt[start : start + 512]
            self._decode([(t, start + i, 0, start + i == last) for i, t in enumerate(chunk)])
        for seq in range(1, seqs):
            L.llama_memory_seq_cp(self.memory, 0, seq, -1, -1)
        return self._greedy(len(self.prompt[(last // 512) * 512 :]) - 1)

    def generate(self, k: int, first: int, steps: int) -> float:
        """Seconds for ``steps`` greedy steps of ``k`` sequences decoded together (their new cells removed after)."""
        n, tokens = len(self.prompt), [first] * k
        started = time.perf_counter()
        for step in range(steps):
            self._decode([(tokens[s], n + step, s, True) for s in range(k)])
            tokens = [self._greedy(s) for s in range(k)]
        elapsed = time.perf_counter() - started
        for seq in range(k):
            L.llama_memory_seq_rm(self.memory, seq, n, -1)
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-path", type=Path, required=True)
    parser.add_argument("--prompt-tokens", type=int, default=300)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()

    bench = Batched(args.model_path, 3, args.threads, args.prompt_tokens, args.steps)
    first = bench.evaluate_prompt(3)
    bench.generate(1, first, 4)  # warm up
    times: dict[int, list[float]] = {1: [], 2: [], 3: []}
    for k in (1, 2, 3, 3, 2, 1):
        times[k].append(bench.generate(k, first, args.steps))
    step_ms = {k: round(1000 * min(v) / args.steps, 1) for k, v in times.items()}
    print(
        json.dumps(
            {
                "model": args.model_path.name,
                "threads": args.threads,
                "prompt_tokens": len(bench.prompt),
                "steps": args.steps,
                "step_ms": step_ms,  # best of two runs
                "tokens_per_s": {k: round(1000 * k / ms, 1) for k, ms in step_ms.items()},
                "speedup_3_vs_1": round(3 * step_ms[1] / step_ms[3], 2),  # throughput of 3 together vs 1 alone
            }
        )
    )


if __name__ == "__main__":
    main()
