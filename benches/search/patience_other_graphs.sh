#!/usr/bin/env bash
# The graphs the default patience (1.5 n^2 sweeps) was chosen on, apart from patience.sh's:
# `rlsolver generate maxcut` with generator seeds 11-13, n = 24-200 at mean degree 4 and n = 32-100
# at mean degree 12, weights 1 and +-1. Each graph's reference is a 2 s run without patience
# (seed 99); each is then solved with default options, seeds 0-2. Prints, per size, how many runs
# reach the reference cut and the median solver ms. Usage: bash benches/search/patience_other_graphs.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=./target/release/rlsolver
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
objective() { python3 -c "import json,sys; r=json.load(sys.stdin); print(r['objective'], r['elapsed_ms'])"; }
for spec in 24:2 32:2 50:2 100:2 200:2 32:6 64:6 100:6; do
  n=${spec%:*}; per=${spec#*:}
  for w in 1 1,-1; do
    for g in 11 12 13; do
      "$BIN" generate maxcut --nodes "$n" --edges $((per * n)) --weights="$w" --seed "$g" > "$TMP/g.txt"
      ref=$("$BIN" solve maxcut --input "$TMP/g.txt" --time-limit 2 --patience inf --seed 99 2>/dev/null | objective | cut -d' ' -f1)
      for s in 0 1 2; do
        echo "n${n}_deg$((2 * per)) $ref $("$BIN" solve maxcut --input "$TMP/g.txt" --seed "$s" 2>/dev/null | objective)"
      done
    done
  done
done | python3 -c '
import sys, statistics, collections
by = collections.defaultdict(list)
for line in sys.stdin:
    name, ref, cut, ms = line.split()
    by[name].append((float(cut) >= float(ref) - 1e-9, float(ms)))
for name, runs in by.items():
    print(f"{name}: {sum(h for h, _ in runs)}/{len(runs)} reach the 2 s cut, median {statistics.median(m for _, m in runs):.1f} ms")
'
