"""The TSP peer of `rlsolver bench tsp`: LKH-3 (Helsgaun) as PyPI's elkai bundles it, one run on
a TSPLIB file with the same seconds and seed as ours.

Pinned (install into the project's .venv): elkai==2.0.1 (`make peers`).

Usage, one JSON object on stdout:
  lkh_peer.py FILE SECONDS SEED
The object: {"tour": node ids in LKH's order (the file's numbering), "seconds": wall time of the
call}. LKH's parameters: RUNS = 1, TIME_LIMIT = SECONDS (its own clock covers the search after
preprocessing, as LKH defines it), SEED = SEED + 1 (LKH wants a positive seed); the rest LKH's
defaults (5-opt sequential moves over 5 alpha-nearest candidates, Held-Karp ascent first).
"""

import json
import sys
import time

import elkai


def main():
    path, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    problem = open(path).read()
    params = f"RUNS = 1\nTIME_LIMIT = {seconds}\nSEED = {seed + 1}\nPROBLEM_FILE = :stdin:\n"
    start = time.perf_counter()
    tour = elkai._elkai.solve_problem(params, problem)
    print(json.dumps({"tour": list(tour), "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
