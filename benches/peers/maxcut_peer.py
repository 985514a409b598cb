"""The Max-Cut and QUBO peers of `rlsolver bench maxcut` and `bench qubo`: MQLib (Dunning, Gupta &
Silberholz 2018; built from ../shared/peers/mqlib into target/mqlib by `make mqlib`) with BURER2002
(Max-Cut), PALUBECKIS2004bMST2 (QUBO) or its hyper-heuristic, and dwave-samplers' TabuSampler, on
the same file for the same seconds.

Pinned (install into the project's .venv): dwave-samplers==1.8.0 (`make peers`).

Usage, one JSON object on stdout:
  maxcut_peer.py SOLVER FILE SECONDS SEED
SOLVER on a Gset file: burer2002, mqlib-hh or dwave-tabu; on MQLib's QUBO text (`n m`, `i j q`,
1-indexed, maximise x'Qx with Q symmetric): palubeckis, mqlib-hh-qubo or dwave-tabu-qubo. The
object: {"sides": 0/1 per node or variable (the file's order), "seconds": wall time}. The value is
re-scored by the bench from `sides`, not taken from the peer.
"""

import json
import os
import subprocess
import sys
import time

MQLIB = os.path.join(os.path.dirname(__file__), "..", "..", "target", "mqlib")


def read_gset(path):
    numbers = open(path).read().split()
    n, m = int(numbers[0]), int(numbers[1])
    edges = [(int(numbers[2 + 3 * k]) - 1, int(numbers[3 + 3 * k]) - 1, float(numbers[4 + 3 * k])) for k in range(m)]
    return n, edges


def mqlib(path, seconds, seed, heuristic, kind="-fM"):
    flag = ["-hh"] if heuristic is None else ["-h", heuristic]
    command = ["./bin/MQLib", kind, os.path.abspath(path), *flag, "-r", str(seconds), "-s", str(seed), "-ps"]
    out = subprocess.run(command, cwd=MQLIB, capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    values = lines[lines.index("Solution:") + 1].split()
    return [1 if int(v) > 0 else 0 for v in values]


def dwave_tabu(path, seconds, seed):
    import dimod
    from dwave.samplers import TabuSampler

    n, edges = read_gset(path)
    # Max-Cut as an Ising model: cut(s) = sum w (1 - s_i s_j) / 2, so minimise sum w s_i s_j / 2.
    quadratic = {}
    for i, j, w in edges:
        key = (min(i, j), max(i, j))
        quadratic[key] = quadratic.get(key, 0.0) + w / 2.0
    bqm = dimod.BinaryQuadraticModel({i: 0.0 for i in range(n)}, quadratic, 0.0, dimod.SPIN)
    sampleset = TabuSampler().sample(bqm, num_reads=1, timeout=int(seconds * 1000), seed=seed)
    best = sampleset.first.sample
    return [1 if best[i] > 0 else 0 for i in range(n)]


def dwave_tabu_qubo(path, seconds, seed):
    import dimod
    from dwave.samplers import TabuSampler

    numbers = open(path).read().split()
    n, m = int(numbers[0]), int(numbers[1])
    linear, quadratic = {i: 0.0 for i in range(n)}, {}
    for k in range(m):
        i, j, q = int(numbers[2 + 3 * k]) - 1, int(numbers[3 + 3 * k]) - 1, float(numbers[4 + 3 * k])
        # Minimise -x'Qx: a diagonal entry weighs q x_i, an off-diagonal one 2 q x_i x_j.
        if i == j:
            linear[i] -= q
        else:
            key = (min(i, j), max(i, j))
            quadratic[key] = quadratic.get(key, 0.0) - 2.0 * q
    bqm = dimod.BinaryQuadraticModel(linear, quadratic, 0.0, dimod.BINARY)
    sampleset = TabuSampler().sample(bqm, num_reads=1, timeout=int(seconds * 1000), seed=seed)
    best = sampleset.first.sample
    return [int(best[i]) for i in range(n)]


def main():
    solver, path, seconds, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    start = time.perf_counter()
    if solver == "burer2002":
        sides = mqlib(path, seconds, seed, "BURER2002")
    elif solver == "mqlib-hh":
        sides = mqlib(path, seconds, seed, None)
    elif solver == "palubeckis":
        sides = mqlib(path, seconds, seed, "PALUBECKIS2004bMST2", "-fQ")
    elif solver == "mqlib-hh-qubo":
        sides = mqlib(path, seconds, seed, None, "-fQ")
    elif solver == "dwave-tabu-qubo":
        sides = dwave_tabu_qubo(path, seconds, seed)
    else:
        sides = dwave_tabu(path, seconds, seed)
    print(json.dumps({"sides": sides, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
