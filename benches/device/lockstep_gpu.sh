#!/usr/bin/env bash
# The lock-step backends' GPU measurements in one device run (about 8 minutes; timeout_s 600):
# the release binary built on the 2-core machine and carried as target/release/rlsolver, the Gset
# graphs carried in .devdata/gset.
#   1. the GPU table: benches/device/backends.sh (the search with the lock-step backends on G14,
#      G15, G22, G49, G50 and the 100x100 torus, 1 s and 10 s, B = 1024, 4096, 16384, seed 0) and
#      the raw simulated-bifurcation spin updates per second;
#   2. device envs: env steps/s at B = 4096 and 65,536 and PPO time to threshold on CUDA against
#      the native loop (`bench device-envs --device cuda`, seed 0).
# The CPU columns are `make bench-backends` and `make bench-device-envs` here. Reports under $OUT.
set -u
source "$(dirname "$0")/env.sh"
bash "$(dirname "$0")/backends.sh"
$BIN bench device-envs --device cuda --seeds ${SEEDS:-0} --output "$OUT/device-envs-cuda.md" \
  2>"$OUT/device-envs-cuda.log" | tail -n +3
