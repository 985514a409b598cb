"""The MIP peers of `rlsolver bench nphard`: OR-Tools CP-SAT and HiGHS on the same instance for
the same seconds and threads, each answer re-scored here from its selection.

Pinned (install into the project's .venv): ortools==9.15.6755 highspy==1.15.1 (`make peers`).

Usage, one JSON object on stdout:
  mip_peer.py KIND SOLVER FILE SECONDS THREADS SEED
KIND and FILE:
  knapsack   Pisinger's text (`n W`, then `p w` per item); maximise the value that fits.
  setcover   OR-Library's SCP text (`m n`, the n costs, then per row its count and 1-based columns).
  mis        DIMACS graph (`p edge n m`, `e u v`): the largest independent set, x_u + x_v <= 1 per edge.
  coloring   DIMACS graph: the fewest colours; x_vc one colour per node, x_uc + x_vc <= y_c per edge and
             colour, y_c >= y_c+1, over as many colours as a largest-first greedy colouring uses.
  bisection  METIS graph (fmt 0 or 1): two parts of floor(n/2) and ceil(n/2) nodes with the least weight
             of edges across, y_uv >= |x_u - x_v|.
SOLVER is cpsat or highs. The object:
{"value", "optimal" (the solver proved it), "bound" (its dual bound), "seconds" (wall time,
model building included)}.
"""

import json
import math
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
    rows = [(-1.0e30, float(capacity), [(i, float(w)) for i, w in enumerate(weights)])]
    return highs_solve(highs_lp(len(values), values, rows, maximize=True), seconds, threads, seed)


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
    rows = [(1.0, 1.0e30, [(j, 1.0) for j in row]) for row in covering]
    return highs_solve(highs_lp(len(costs), costs, rows), seconds, threads, seed)


def read_dimacs(path):
    n, edges = 0, []
    for line in open(path):
        parts = line.split()
        if parts and parts[0] == "p":
            n = int(parts[2])
        elif parts and parts[0] == "e":
            u, v = int(parts[1]) - 1, int(parts[2]) - 1
            if u != v:
                edges.append((min(u, v), max(u, v)))
    return n, sorted(set(edges))


def read_metis(path):
    lines = [l for l in open(path).read().split("\n") if not l.startswith("%")]
    header = lines[0].split()
    n, fmt = int(header[0]), int(header[2]) if len(header) > 2 else 0
    weighted = fmt % 10 == 1
    edges = {}
    for u, line in enumerate(lines[1:n + 1]):
        tokens = [int(t) for t in line.split()]
        pairs = zip(tokens[::2], tokens[1::2]) if weighted else ((v, 1) for v in tokens)
        for v, w in pairs:
            if u != v - 1:
                edges[(min(u, v - 1), max(u, v - 1))] = w
    return n, [(u, v, w) for (u, v), w in sorted(edges.items())]


def highs_lp(num_col, costs, rows, maximize=False):
    """A HiGHS model of 0/1 columns and rows (lower, upper, [(column, coefficient)]); bounds of
    1e30 and beyond are infinite to HiGHS."""
    import highspy
    import numpy as np

    lp = highspy.HighsLp()
    lp.num_col_ = num_col
    lp.num_row_ = len(rows)
    lp.col_cost_ = np.array(costs, dtype=np.double)
    lp.col_lower_ = np.zeros(num_col)
    lp.col_upper_ = np.ones(num_col)
    lp.row_lower_ = np.array([r[0] for r in rows], dtype=np.double)
    lp.row_upper_ = np.array([r[1] for r in rows], dtype=np.double)
    if maximize:
        lp.sense_ = highspy.ObjSense.kMaximize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.cumsum([0] + [len(r[2]) for r in rows]).astype(np.int32)
    lp.a_matrix_.index_ = np.array([j for r in rows for j, _ in r[2]], dtype=np.int32)
    lp.a_matrix_.value_ = np.array([c for r in rows for _, c in r[2]], dtype=np.double)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * num_col
    return lp


def mis_cpsat(n, edges, seconds, threads, seed):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{v}") for v in range(n)]
    for u, v in edges:
        model.AddBoolOr([x[u].Not(), x[v].Not()])
    model.Maximize(sum(x))
    return cpsat_solve(model, x, seconds, threads, seed)


def mis_highs(n, edges, seconds, threads, seed):
    inf = 1.0e30
    rows = [(-inf, 1.0, [(u, 1.0), (v, 1.0)]) for u, v in edges]
    return highs_solve(highs_lp(n, [1.0] * n, rows, maximize=True), seconds, threads, seed)


def greedy_colours(n, edges):
    """Colours of a largest-first greedy colouring: the number the colouring models allow."""
    neighbours = [[] for _ in range(n)]
    for u, v in edges:
        neighbours[u].append(v)
        neighbours[v].append(u)
    colour = [-1] * n
    for v in sorted(range(n), key=lambda v: -len(neighbours[v])):
        used = {colour[u] for u in neighbours[v]}
        colour[v] = next(c for c in range(n) if c not in used)
    return max(colour) + 1 if n else 0


def coloring_cpsat(n, edges, k, seconds, threads, seed):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{v}_{c}") for v in range(n) for c in range(k)]
    y = [model.NewBoolVar(f"y{c}") for c in range(k)]
    for v in range(n):
        model.AddExactlyOne(x[v * k:(v + 1) * k])
    for u, v in edges:
        for c in range(k):
            model.Add(x[u * k + c] + x[v * k + c] <= y[c])
    for c in range(k - 1):
        model.Add(y[c] >= y[c + 1])
    model.Minimize(sum(y))
    return cpsat_solve(model, x, seconds, threads, seed)


def coloring_highs(n, edges, k, seconds, threads, seed):
    inf = 1.0e30
    y = n * k
    rows = [(1.0, 1.0, [(v * k + c, 1.0) for c in range(k)]) for v in range(n)]
    rows += [(-inf, 0.0, [(u * k + c, 1.0), (v * k + c, 1.0), (y + c, -1.0)]) for u, v in edges for c in range(k)]
    rows += [(0.0, inf, [(y + c, 1.0), (y + c + 1, -1.0)]) for c in range(k - 1)]
    costs = [0.0] * (n * k) + [1.0] * k
    chosen, optimal, bound = highs_solve(highs_lp(n * k + k, costs, rows), seconds, threads, seed)
    return [j for j in chosen if j < n * k], optimal, bound


def bisection_cpsat(n, edges, seconds, threads, seed):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.NewBoolVar(f"x{v}") for v in range(n)]
    y = [model.NewBoolVar(f"y{e}") for e in range(len(edges))]
    for e, (u, v, _) in enumerate(edges):
        model.Add(y[e] >= x[u] - x[v])
        model.Add(y[e] >= x[v] - x[u])
    model.Add(sum(x) >= n // 2)
    model.Add(sum(x) <= (n + 1) // 2)
    model.Minimize(sum(w * y[e] for e, (_, _, w) in enumerate(edges)))
    return cpsat_solve(model, x, seconds, threads, seed)


def bisection_highs(n, edges, seconds, threads, seed):
    inf = 1.0e30
    rows = []
    for e, (u, v, _) in enumerate(edges):
        rows.append((0.0, inf, [(n + e, 1.0), (u, -1.0), (v, 1.0)]))
        rows.append((0.0, inf, [(n + e, 1.0), (u, 1.0), (v, -1.0)]))
    rows.append((float(n // 2), float((n + 1) // 2), [(v, 1.0) for v in range(n)]))
    costs = [0.0] * n + [float(w) for _, _, w in edges]
    chosen, optimal, bound = highs_solve(highs_lp(n + len(edges), costs, rows), seconds, threads, seed)
    return [j for j in chosen if j < n], optimal, bound


def graph_value(kind, solver, path, seconds, threads, seed):
    """The re-scored value of a graph problem's answer (None: infeasible or none)."""
    cpsat = solver == "cpsat"
    if kind == "mis":
        n, edges = read_dimacs(path)
        chosen, optimal, bound = (mis_cpsat if cpsat else mis_highs)(n, edges, seconds, threads, seed)
        picked = set(chosen)
        independent = not any(u in picked and v in picked for u, v in edges)
        return (len(picked) if independent else None), optimal, bound
    if kind == "coloring":
        n, edges = read_dimacs(path)
        k = greedy_colours(n, edges)
        chosen, optimal, bound = (coloring_cpsat if cpsat else coloring_highs)(n, edges, k, seconds, threads, seed)
        colour = {j // k: j % k for j in chosen}
        proper = len(colour) == n and all(colour[u] != colour[v] for u, v in edges)
        return (len(set(colour.values())) if proper else None), optimal, bound
    n, edges = read_metis(path)
    chosen, optimal, bound = (bisection_cpsat if cpsat else bisection_highs)(n, edges, seconds, threads, seed)
    side = set(chosen)
    balanced = n // 2 <= len(side) <= (n + 1) // 2
    cut = sum(w for u, v, w in edges if (u in side) != (v in side))
    return (cut if balanced else None), optimal, bound


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
    elif kind in ("mis", "coloring", "bisection"):
        value, optimal, bound = graph_value(kind, solver, path, seconds, threads, seed)
    else:
        costs, covering = read_setcover(path)
        run = setcover_cpsat if solver == "cpsat" else setcover_highs
        chosen, optimal, bound = run(costs, covering, seconds, threads, seed)
        picked = set(chosen)
        covers = all(any(j in picked for j in row) for row in covering)
        value = sum(costs[j] for j in chosen) if covers else None
    elapsed = time.perf_counter() - start
    # A solver without a finite bound (no solution yet) reports none: JSON has no infinities.
    bound = float(bound) if bound is not None and math.isfinite(bound) else None
    print(json.dumps({"value": value, "optimal": optimal, "bound": bound, "seconds": elapsed}))


if __name__ == "__main__":
    main()
