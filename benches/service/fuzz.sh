#!/usr/bin/env bash
# Schemathesis against a running server built from this tree: every operation of
# openapi/openapi.json, coverage + fuzzing + stateful phases for MAX_TIME seconds; fails on any 5xx
# or any response that violates the document (status, content type, headers, body schema), and on
# any request the document calls invalid that the server accepts (negative_data_rejection).
# The server runs with small limits so generated solves and training jobs stay short; the document
# is the one it serves, which declares those limits as maxima.
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-8098}
MAX_TIME=${MAX_TIME:-120}
CHECKS=${CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,negative_data_rejection}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
./target/release/rlsolver serve --port "$PORT" --data-dir "$work/data" --max-time-limit-s 1 --default-time-limit-s 0.2 \
  --max-nodes 2000 --max-edges 20000 --max-training-steps 2000 > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -fs "localhost:$PORT/ready" > /dev/null && break; sleep 0.1; done
.venv/bin/schemathesis run "http://127.0.0.1:$PORT/openapi.json" --url "http://127.0.0.1:$PORT" \
  --checks "$CHECKS" --max-time "$MAX_TIME" --workers 1 --seed 0
