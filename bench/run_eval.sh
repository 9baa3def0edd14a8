#!/usr/bin/env bash
# Evaluate cot, sc, du-mad and debate on the bench model (Qwen2.5-Coder-1.5B, local GGUF)
# for gsm8k and arc_challenge, and append the summary tables to bench/RESULTS.md.
#
# Usage (from anywhere):  bench/run_eval.sh
# Overrides (environment): TASKS="gsm8k arc_challenge"  N=50  PROGRAMS=cot,sc,du-mad,debate  SEED=0
#   DATA_DIR=../shared/data (relative to the repo root)  OUT_ROOT=bench/runs  CONCURRENCY=1
#   MAX_TOKENS= (empty: the programs' default)  MODEL= (empty: local/<name of the fetched bench GGUF>, found through MADSPY_MODELS_DIR)
#   MATCHED_K= (empty: K of sc-matched measured after the sc and debate rows; a number runs it alongside)
#   RESULTS=bench/RESULTS.md (where tables are appended)  RECORD_ONLY=1: run nothing, record the rows so far (the questions every program finished)
# Takes hours on 2 cores (about 15 tokens/s). Rerunning resumes: finished rows are skipped.
# Quick check: N=2 PROGRAMS=cot TASKS=gsm8k bench/run_eval.sh
set -euo pipefail
cd "$(dirname "$0")/.."

TASKS="${TASKS:-gsm8k arc_challenge}"
N="${N:-50}"
PROGRAMS="${PROGRAMS:-cot,sc,du-mad,debate}"
SEED="${SEED:-0}"
DATA_DIR="${DATA_DIR:-../shared/data}"
OUT_ROOT="${OUT_ROOT:-bench/runs}"
CONCURRENCY="${CONCURRENCY:-1}"  # a local model serializes its calls: more only queues them
MAX_TOKENS="${MAX_TOKENS:-}"
MATCHED_K="${MATCHED_K:-}"
RECORD_ONLY="${RECORD_ONLY:-}"
if [ -z "${MODEL:-}" ]; then  # the fetched GGUF, by name (a machine's path would end up in the tables)
  gguf="$(../shared/tools/fetch-bench-model | tail -n 1)"
  export MADSPY_MODELS_DIR="$(dirname "$gguf")"
  MODEL="local/$(basename "$gguf" .gguf)"
fi
RESULTS="${RESULTS:-bench/RESULTS.md}"

cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || true)"
machine="$(nproc) cores${cpu:+ ($cpu)}, $(uname -sm)"

for task in $TASKS; do
  out="$OUT_ROOT/$task-n$N-seed$SEED"
  cmd=(madspy eval --task "$task" --model "$MODEL" --programs "$PROGRAMS" --n "$N" --seed "$SEED"
       --data-dir "$DATA_DIR" --concurrency "$CONCURRENCY" --out "$out")
  [ -n "$MAX_TOKENS" ] && cmd+=(--max-tokens "$MAX_TOKENS")
  [ -n "$MATCHED_K" ] && cmd+=(--sc-matched-k "$MATCHED_K")
  if [ -z "$RECORD_ONLY" ]; then
    echo "+ ${cmd[*]}" >&2
    "${cmd[@]}"
  fi
  madspy summary "$out" --paired > /dev/null  # the summary and cost tables of the questions all programs finished
  done_n="$(python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["n"])' "$out/summary.csv")"
  {
    echo
    echo "## madspy eval: $task, $done_n of $N questions ($(date -u +%Y-%m-%d))"
    echo
    if [ "$done_n" -lt "$N" ]; then
      echo "**Partial**: the run is not finished; every program below answered the same $done_n questions."
      echo "Rerun the command to resume it."
      echo
    fi
    echo "- model: \`$MODEL\`"
    echo "- madspy: commit \`$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\`"
    echo "- machine: $machine"
    echo "- command: \`${cmd[*]}\` (via bench/run_eval.sh)"
    echo "- rows: \`$out/rows.jsonl\`"
    echo
    cat "$out/summary.md"
    echo
    echo "Mean cost per question by role and by round (\`$out/cost.md\`):"
    echo
    cat "$out/cost.md"
  } >> "$RESULTS"
done
echo "appended to $RESULTS" >&2
