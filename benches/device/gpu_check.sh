#!/usr/bin/env bash
# One device run's checks (run from the repo root on the GPU machine, binary built here and
# carried as target/release/rlsolver, Gset graphs carried in .devdata/gset):
#   Max-Cut search on CUDA at the default chain count and at fixed ones, and the DRL agents on CUDA.
# Prints one line per run; the full JSON goes under $OUT.
set -u
source "$(dirname "$0")/env.sh"
summary() { python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); h = d.get('history') or [{}]
print(sys.argv[2], 'objective', d['objective'], 'chains', d['chains'], 'rounds', d['rounds'], 'device', d['device'],
      'time_to_best_s', round(h[-1].get('elapsed_ms', 0) / 1000, 2))" "$1" "$2"; }
for g in G1 G14 G15 G22 G49 G50; do
  $BIN solve maxcut --input $GSET/$g.txt --time-limit ${LIMIT:-10} --device cuda > $OUT/$g-cuda.json 2>$OUT/$g-cuda.log && summary $OUT/$g-cuda.json "$g default"
done
for g in G14 G22; do
  for c in 64 1024; do
    $BIN solve maxcut --input $GSET/$g.txt --time-limit ${LIMIT:-10} --device cuda --chains $c > $OUT/$g-c$c.json 2>/dev/null && summary $OUT/$g-c$c.json "$g chains=$c"
  done
done
for run in "sac Pendulum-v1 3000" "ppo_discrete CartPole-v1 20000" "ppo Pendulum-v1 20000"; do
  set -- $run
  $BIN train --algo $1 --env $2 --steps $3 --eval-every $3 --device cuda 2>/dev/null > $OUT/train-$1.json
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); e = d['evaluations'][-1]
print('train', sys.argv[2], 'cuda steps', d['steps'], 'return', round(e['return_mean'], 1), 'train_s', round(d['train_s'], 1))" $OUT/train-$1.json $1
done
