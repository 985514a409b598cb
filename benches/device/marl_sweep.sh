#!/usr/bin/env bash
# Multi-agent verify runs on the GPU machine's 16 CPU cores (one thread per run, all in
# parallel, each cut at LIMIT seconds): MAPPO at 32 and 128 envs, MADDPG at 3M steps,
# QMIX/VDN at 1M steps on the CPU and one QMIX run on CUDA. Every run writes its evaluation
# curve (64 episodes, like tests/marl_verify.rs) to $OUT/runs.tar.gz; summary.txt has the last
# evaluation of each run and the random/heuristic baselines of the verify table.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-540}
TORCH_LIB=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
BIN=$PWD/target/release/rlsolver
RUNS=/tmp/runs; mkdir -p $RUNS
launch() { # name algo steps seed device num_envs hyper
  local extra=(); [ "$6" != "-" ] && extra=(--num-envs "$6")
  timeout "$LIMIT" "$BIN" train --algo "$2" --env simple_spread --steps "$3" --seed "$4" --device "$5" \
    --eval-every $(($3 / 10)) --eval-episodes 64 --hyper "$7" "${extra[@]}" --out "$RUNS/$1" \
    >"$RUNS/$1.json" 2>"$RUNS/$1.log" &
}
for s in 0 1 2; do
  launch mappo32-s$s mappo 8000000 $s cpu - '{}'
  launch mappo128-s$s mappo 7000000 $s cpu 128 '{}'
  launch maddpg3m-s$s maddpg 3000000 $s cpu - '{}'
  launch qmix1m-s$s qmix 1000000 $s cpu - '{"updates_per_collection": 4}'
  launch vdn1m-s$s vdn 1000000 $s cpu - '{"updates_per_collection": 4}'
done
launch qmix2m-cuda-s0 qmix 2000000 0 cuda - '{}'
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv > $OUT/gpu.txt 2>&1
wait
{
  nproc; lscpu | grep "Model name"
  for f in $RUNS/*/metrics.jsonl; do
    python3 -c "
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
if not rows: print(sys.argv[1].split('/')[-2], 'no evaluation'); sys.exit()
last = rows[-1]
print(sys.argv[1].split('/')[-2], 'evals', len(rows), 'step', last['step'], 'return', round(last['return_mean'], 2), 'wall_s', round(last['wall_s']))" $f
  done
} > $OUT/summary.txt 2>&1
tar czf $OUT/runs.tar.gz -C /tmp runs
cat $OUT/summary.txt
