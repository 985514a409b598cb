#!/usr/bin/env bash
# Load test: wrk for 30 s per row against POST /v1/problems/maxcut/solve with a
# 32-node, 64-edge graph (`rlsolver generate`, seed 0) and default options. Rows at 8, 16 and 64
# open connections: by Little's law, 1,000 requests/s with a p99 under 50 ms (the target)
# needs fewer than 50 requests in flight, so the bar is read at 8; 64 shows saturation. Starts its
# own server (release binary, --max-concurrent-solves 64 so that the slot limit is not what is
# measured) and writes benches/load-report.md. Needs `wrk` (Debian package).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=./target/release/rlsolver
PORT=${PORT:-8097}
DURATION=${DURATION:-30s}
CONNECTIONS=${CONNECTIONS:-8 16 64}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
$BIN generate maxcut --nodes 32 --edges 64 --seed 0 > "$work/graph.txt"
$BIN serve --port "$PORT" --data-dir "$work/data" --max-concurrent-solves 64 > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -fs "localhost:$PORT/ready" > /dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$PORT/v1/problems/maxcut/solve?seed=0"
curl -fs -H 'content-type: text/plain' --data-binary @"$work/graph.txt" "$url" > "$work/one.json"
for c in $CONNECTIONS; do
  RLSOLVER_LOAD_BODY="$work/graph.txt" wrk --timeout 10s -t2 -c"$c" -d"$DURATION" --latency -s benches/service/solve.lua "$url" | tee "$work/wrk-$c.txt"
done
python3 - "$work" "$DURATION" $CONNECTIONS <<'PY' | tee benches/load-report.md
import json, re, sys
work, duration, connections = sys.argv[1], sys.argv[2], sys.argv[3:]
one = json.load(open(f"{work}/one.json"))
print("# Load test: POST /v1/problems/maxcut/solve\n")
print(f"`bash benches/service/load.sh` (wrk, {duration} per row, 2 threads, 10 s timeout; a 32-node, 64-edge graph, default options: cut {one['objective']}, status {one['status']}, {one['rounds']} rounds, {one['elapsed_ms']:.1f} ms of solver time alone; server and wrk on the same machine).\n")
print("| connections | requests | requests/s | p50 | p90 | p99 | non-2xx | socket errors |")
print("|---|---|---|---|---|---|---|---|")
for c in connections:
    text = open(f"{work}/wrk-{c}.txt").read()
    def latency(p):
        m = re.search(rf"^\s*{p}%\s+(\S+)", text, re.M)
        return m.group(1) if m else "?"
    rps = re.search(r"Requests/sec:\s+(\S+)", text).group(1)
    total = re.search(r"(\d+) requests in", text).group(1)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: (.*)", text)
    print(f"| {c} | {total} | {rps} | {latency(50)} | {latency(90)} | {latency(99)} | {non2xx.group(1) if non2xx else 0} | {errors.group(1) if errors else 'none'} |")
PY
