#!/usr/bin/env bash
# Per-round cost of the Max-Cut search with default options (4 chains on 2 cores here) on random
# graphs of mean degree 4 (`rlsolver generate maxcut --nodes N --edges 2N`), n = 32 ... 10,000:
# median over seeds 0-2 of elapsed / rounds at a 5-round budget (every patience here outlasts 5
# rounds). Below n ~ 160 a default round is shortened to an eighth of the patience (32 nodes: 48
# Metropolis sweeps per chain instead of 2,000), so that row is not comparable with the others. Writes benches/round-cost-report.md. Usage: bash benches/search/round_cost.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=./target/release/rlsolver
OUT=benches/round-cost-report.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
{
  echo "| n | edges | ms per round, median of seeds 0-2 | seeds' ms per round |"
  echo "|---|---|---|---|"
  for n in 32 800 2000 10000; do
    "$BIN" generate maxcut --nodes "$n" --edges $((2 * n)) --seed 0 > "$TMP/g.txt"
    per_round=()
    for seed in 0 1 2; do
      per_round+=("$("$BIN" solve maxcut --input "$TMP/g.txt" --seed "$seed" --max-rounds 5 2>/dev/null |
        python3 -c "import json,sys; r=json.load(sys.stdin); print('%.2f' % (r['elapsed_ms'] / r['rounds']))")")
    done
    median=$(printf '%s\n' "${per_round[@]}" | sort -g | sed -n 2p)
    echo "| $n | $((2 * n)) | $median | ${per_round[*]} |"
  done
} | tee "$OUT"
