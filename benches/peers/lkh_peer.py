"""The TSP peer of `rlsolver bench tsp`: LKH-3 (Helsgaun) as PyPI's elkai bundles it, one run on
a TSPLIB file with the same seconds and seed as ours.

Pinned (install into the project's .venv): elkai==2.0.1 (`make peers`).

Usage, one JSON object on stdout:
  lkh_peer.py FILE SECONDS SEED
The object: {"tour": node ids in LKH's order (the file's numbering; empty when LKH had no tour
within the limit), "seconds": wall time of the call}. LKH's parameters: RUNS = 1,
TOTAL_TIME_LIMIT = TIME_LIMIT = SECONDS (the total one covers its preprocessing too, the Held-Karp
ascent and the candidate sets, so LKH runs for the same wall time as ours; TIME_LIMIT alone
leaves that out), SEED = SEED + 1 (LKH wants a positive seed); the rest LKH's defaults (5-opt
sequential moves over 5 alpha-nearest candidates).
"""

import json
import sys
import time

import elkai


def main():
    path, seconds, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    problem = open(path).read()
    params = (
        f"RUNS = 1\nTOTAL_TIME_LIMIT = {seconds}\nTIME_LIMIT = {seconds}\nSEED = {seed + 1}\nPROBLEM_FILE = :stdin:\n"
    )
    start = time.perf_counter()
    tour = elkai._elkai.solve_problem(params, problem)
    print(json.dumps({"tour": list(tour), "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
