#!/usr/bin/env bash
# CUDA smoke run of the paths beyond Max-Cut (run on the GPU machine with the binary carried):
# MIMO search on CUDA against its CPU result, REDQ and MAPPO training steps on CUDA (speed and
# finiteness). Prints one line each.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
TORCH_LIB=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=./target/release/rlsolver
python3 - <<'PY'
import json, random
random.seed(0)
k = n = 8
h = {"re": [[random.gauss(0, 0.5 ** 0.5) for _ in range(n)] for _ in range(k)],
     "im": [[random.gauss(0, 0.5 ** 0.5) for _ in range(n)] for _ in range(k)]}
json.dump({"channel": h, "power": 100, "noise": 1}, open("/tmp/h.json", "w"))
PY
for dev in cpu cuda; do
  $BIN solve mimo --input /tmp/h.json --time-limit 2 --device $dev --chains 1024 --max-rounds 300 2>$OUT/mimo-$dev.log | python3 -c "
import json, sys; d = json.load(sys.stdin); print('mimo', '$dev', 'rate', round(d['objective'], 4), 'rounds', d['rounds'], 'ms', round(d['elapsed_ms']))"
done
$BIN solve mimo --input /tmp/h.json --method wmmse | python3 -c "import json, sys; print('mimo wmmse rate', round(json.load(sys.stdin)['objective'], 4))"
for run in "redq Pendulum-v1 3000" "mappo simple_spread 100000" "qmix two_step 8000"; do
  set -- $run
  $BIN train --algo $1 --env $2 --steps $3 --eval-every $3 --device cuda 2>$OUT/train-$1.log | python3 -c "
import json, sys; d = json.load(sys.stdin); e = d['evaluations'][-1]
print('train', sys.argv[1], 'cuda steps', d['steps'], 'return', round(e['return_mean'], 2), 'wall_s', round(d['wall_s'], 1))" $1
done
