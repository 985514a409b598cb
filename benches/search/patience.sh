#!/usr/bin/env bash
# Does the work-based patience stop too early? Each graph and seed is solved twice: with default
# options (stops as converged after 1.5 n^2 sweeps without improvement) and for 5 s with the
# patience off. Graphs: a generated 32-node graph and random graphs of mean degree 4
# (`rlsolver generate maxcut --nodes N --edges 2N`, weights 1 or +-1, generator seed 7), n = 50 to
# 400; seeds 0-4. Writes benches/patience-report.md. Usage: bash benches/search/patience.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=./target/release/rlsolver
OUT=benches/patience-report.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
field() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
"$BIN" generate maxcut --nodes 32 --edges 64 --seed 0 > "$TMP/n32.txt"
graphs=(n32)
for n in 50 100 200 400; do
  for w in 1 1,-1; do
    name="n${n}_w${w/,/}"
    "$BIN" generate maxcut --nodes "$n" --edges $((2 * n)) --weights="$w" --seed 7 > "$TMP/$name.txt"
    graphs+=("$name")
  done
done
{
  echo "| graph | seed | default: cut | status | solver ms | 5 s, no patience: cut | same cut |"
  echo "|---|---|---|---|---|---|---|"
  for g in "${graphs[@]}"; do
    for seed in 0 1 2 3 4; do
      default=$("$BIN" solve maxcut --input "$TMP/$g.txt" --seed "$seed" 2>/dev/null)
      long=$("$BIN" solve maxcut --input "$TMP/$g.txt" --seed "$seed" --time-limit 5 --patience inf 2>/dev/null)
      a=$(echo "$default" | field "r['objective']")
      b=$(echo "$long" | field "r['objective']")
      status=$(echo "$default" | field "r['status']")
      ms=$(echo "$default" | field "'%.1f' % r['elapsed_ms']")
      echo "| $g | $seed | $a | $status | $ms | $b | $([ "$a" = "$b" ] && echo yes || echo no) |"
    done
  done
} | tee "$OUT"
