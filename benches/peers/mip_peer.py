"""The MIP peers of `rlsolver bench nphard`: OR-Tools CP-SAT and HiGHS on the same instance for
the same seconds and threads, each answer re-scored here from its selection.

Pinned (install into the project's .venv): ortools==9.15.6755 highspy==1.15.1 (`make peers`).

Usage, one JSON object on stdout:
  mip_peer.py knapsack SOLVER FILE SECONDS THREADS SEED
  mip_peer.py setcover SOLVER FILE SECONDS THREADS SEED
SOLVER is cpsat or highs; FILE is Pisinger's text (`n W`, then `p w` per item) or OR-Library's SCP
text (`m n`, the n costs, then per row its count and 1-based columns). The object:
{"value", "optimal" (the solver proved it), "bound" (its dual bound), "seconds" (wall time,
model building included)}.
"""

import json
import sys
import time


def read_knapsack(path):
    numbers = open(path).read().split()
    n, capacity = int(numbers[0]), int(numbers[1])
    values = [int(numbers[2 + 2 * i]) for i in range(n)]
    weights = [int(numbers[3 + 2 * i]) for i in range(n)]
    return values, weights, capacity


def cpsat_solve(model, x, seconds, threads, seed):
    """CP-SAT on `model` over the booleans `x`: (chosen indices, proven, its bound)."""
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = threads
    solver.parameters.random_seed = seed
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return [], False, None
    return [i for i, v in enumerate(x) if solver.Value(v)], status == cp_model.OPTIMAL, solver.BestObjectiveBound()


def highs_solve(lp, seconds, threads, seed):
    """HiGHS on the MIP `lp`: (chosen columns, proven, its dual bound)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(seconds))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", int(seed))
    # Proven means proven: no relative gap left open (the default is 1e-4).
    h.setOptionValue("mip_rel_gap", 0.0)
    h.passModel(lp)
    h.run()
    chosen = [j for j, v in enumerate(h.getSolution().col_value) if v > 0.5]
    optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return chosen, optimal, h.getInfo().mip_dual_bound


def knapsack_cpsat(values, weights, capacity, seconds, threads, seed):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{i}") for i in range(len(values))]
    model.Add(sum(w * v for w, v in zip(weights, x)) <= capacity)
    model.Maximize(sum(p * v for p, v in zip(values, x)))
    return cpsat_solve(model, x, seconds, threads, seed)


def knapsack_highs(values, weights, capacity, seconds, threads, seed):
    import highspy
    import numpy as np

    n = len(values)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = 1
    lp.col_cost_ = np.array(values, dtype=np.double)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.array([-highspy.kHighsInf])
    lp.row_upper_ = np.array([float(capacity)])
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(n + 1, dtype=np.int32)
    lp.a_matrix_.index_ = np.zeros(n, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(weights, dtype=np.double)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    return highs_solve(lp, seconds, threads, seed)


def read_setcover(path):
    numbers = [int(t) for t in open(path).read().split()]
    rows, columns = numbers[0], numbers[1]
    costs = numbers[2:2 + columns]
    k = 2 + columns
    covering = []
    for _ in range(rows):
        count = numbers[k]
        covering.append([c - 1 for c in numbers[k + 1:k + 1 + count]])
        k += 1 + count
    return costs, covering


def setcover_cpsat(costs, covering, seconds, threads, seed):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{j}") for j in range(len(costs))]
    for row in covering:
        model.AddBoolOr([x[j] for j in row])
    model.Minimize(sum(c * v for c, v in zip(costs, x)))
    return cpsat_solve(model, x, seconds, threads, seed)


def setcover_highs(costs, covering, seconds, threads, seed):
    import highspy
    import numpy as np

    n = len(costs)
    columns = [[] for _ in range(n)]
    for i, row in enumerate(covering):
        for j in row:
            columns[j].append(i)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(covering)
    lp.col_cost_ = np.array(costs, dtype=np.double)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.ones(len(covering))
    lp.row_upper_ = np.full(len(covering), highspy.kHighsInf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.cumsum([0] + [len(c) for c in columns]).astype(np.int32)
    lp.a_matrix_.index_ = np.array([i for c in columns for i in c], dtype=np.int32)
    lp.a_matrix_.value_ = np.ones(sum(len(c) for c in columns))
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    return highs_solve(lp, seconds, threads, seed)


def main():
    kind, solver, path, seconds, threads, seed = sys.argv[1:7]
    seconds, threads, seed = float(seconds), int(threads), int(seed)
    start = time.perf_counter()
    if kind == "knapsack":
        values, weights, capacity = read_knapsack(path)
        run = knapsack_cpsat if solver == "cpsat" else knapsack_highs
        chosen, optimal, bound = run(values, weights, capacity, seconds, threads, seed)
        weight = sum(weights[i] for i in chosen)
        value = sum(values[i] for i in chosen) if weight <= capacity else None
    else:
        costs, covering = read_setcover(path)
        run = setcover_cpsat if solver == "cpsat" else setcover_highs
        chosen, optimal, bound = run(costs, covering, seconds, threads, seed)
        picked = set(chosen)
        covers = all(any(j in picked for j in row) for row in covering)
        value = sum(costs[j] for j in chosen) if covers else None
    elapsed = time.perf_counter() - start
    print(json.dumps({"value": value, "optimal": optimal, "bound": bound, "seconds": elapsed}))


if __name__ == "__main__":
    main()
