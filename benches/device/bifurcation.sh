#!/usr/bin/env bash
# Simulated bifurcation on the GPU (issue 17), one session's run: the release binary built on the
# 2-core machine and carried as target/release/rlsolver, the Gset graphs carried in .devdata/gset.
# For each chain count, `bench bifurcation` at 1 s and 10 s per graph (steps sized by a timed
# probe); the same command with --device cpu on the 2-core machine gives the CPU column. The
# reports go under $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
TORCH_LIB=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=./target/release/rlsolver
GSET=${GSET:-.devdata/gset}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for chains in ${CHAINS:-1024 4096 16384}; do
  $BIN bench bifurcation --instances "$GSET" --time-limit 1,10 --seeds 0,1,2 --chains "$chains" --device cuda \
    --output "$OUT/bifurcation-$chains.md" 2>"$OUT/bifurcation-$chains.log" | tail -n +4
done
