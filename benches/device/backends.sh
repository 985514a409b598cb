#!/usr/bin/env bash
# The lock-step backends' GPU table in one device run (about 8 minutes): the release binary built
# on the 2-core machine and carried as target/release/rlsolver, the Gset graphs carried in
# .devdata/gset. `bench backends` on CUDA: the whole search with the lock-step backends
# (colour-class parallel tempering, simulated bifurcation; the tensor backend is gpu_check.sh), on G14, G15,
# G22, G49, G50 and the generated 100x100 torus, at 1 s and 10 s, one seed, for each chain count
# B; then `bench bifurcation` for the raw spin updates per second at the largest B. The CPU
# column is `make bench-backends` on the 2-core machine. Reports go under $OUT.
set -u
source "$(dirname "$0")/env.sh"
for chains in ${CHAINS:-1024 4096 16384}; do
  $BIN bench backends --instances "$GSET" --time-limit ${LIMITS:-1,10} --seeds ${SEEDS:-0} --device cuda \
    --chains "$chains" --backends ${BACKENDS:-tempering,bifurcation} \
    --output "$OUT/backends-$chains.md" 2>"$OUT/backends-$chains.log" | tail -n +4
done
$BIN bench bifurcation --instances "$GSET" --time-limit 1 --seeds 0 --chains 16384 --device cuda \
  --output "$OUT/bifurcation-16384.md" 2>"$OUT/bifurcation-16384.log" | tail -n +4
