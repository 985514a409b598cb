#!/usr/bin/env bash
# Simulated bifurcation on the GPU, one device run: the release binary built on the
# 2-core machine and carried as target/release/rlsolver, the Gset graphs carried in .devdata/gset.
# For each chain count, `bench bifurcation` at 1 s and 10 s per graph (steps sized by a timed
# probe); the same command with --device cpu on the 2-core machine gives the CPU column. The
# reports go under $OUT.
set -u
source "$(dirname "$0")/env.sh"
for chains in ${CHAINS:-1024 4096 16384}; do
  $BIN bench bifurcation --instances "$GSET" --time-limit 1,10 --seeds 0,1,2 --chains "$chains" --device cuda \
    --output "$OUT/bifurcation-$chains.md" 2>"$OUT/bifurcation-$chains.log" | tail -n +4
done
