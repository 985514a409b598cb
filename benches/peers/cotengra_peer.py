"""The TNCO peer of `rlsolver bench tnco`: cotengra's hyper-optimizer (greedy + kahypar trials
tuned by optuna) on the same networks for the same seconds, opt_einsum's greedy, and the scorer
that re-costs any contraction path with cotengra (tests/tensor_network_peer.rs).

Pinned (install into the project's .venv): opt_einsum==3.4.0 cotengra==0.8.3 kahypar==1.3.7
optuna==5.0.0 (`make peers`).

Usage, one JSON object on stdout:
  cotengra_peer.py search NETWORK SECONDS SEED   cotengra hyper-optimizer for SECONDS
  cotengra_peer.py greedy NETWORK                 opt_einsum's greedy path
  cotengra_peer.py score NETWORK PATH_JSON        cost of a path (a JSON list of pairs)
NETWORK is the adjacency-list text of shared/data/tnco or einsum JSON {inputs, output, size_dict}.
Costs are log10 of cotengra's contraction_cost() (the shared README's convention), widths log2.
"""

import ast
import json
import math
import random
import sys
import time


def load(path):
    text = open(path).read()
    if path.endswith(".json"):
        network = json.loads(text)
        inputs = [tuple(str(x) for x in t) for t in network["inputs"]]
        output = tuple(str(x) for x in network.get("output", []))
        size_dict = {str(k): int(v) for k, v in network["size_dict"].items()}
        return inputs, output, size_dict
    adjacency = ast.literal_eval(text)
    inputs = []
    for t, neighbours in enumerate(adjacency):
        inputs.append(tuple(f"{min(t, j)}-{max(t, j)}" for j in neighbours))
    size_dict = {label: 2 for legs in inputs for label in legs}
    return inputs, (), size_dict


def figures(tree, seconds):
    return {
        "cost_log10": math.log10(float(tree.contraction_cost())),
        "largest_log2": float(tree.contraction_width()),
        "seconds": seconds,
    }


def main():
    import cotengra as ctg

    mode, path = sys.argv[1], sys.argv[2]
    inputs, output, size_dict = load(path)
    if mode == "search":
        seconds, seed = float(sys.argv[3]), int(sys.argv[4])
        random.seed(seed)
        try:
            import numpy

            numpy.random.seed(seed)
        except ImportError:
            pass
        optimizer = ctg.HyperOptimizer(
            methods=["greedy", "kahypar"],
            max_time=seconds,
            max_repeats=10**9,
            minimize="flops",
            parallel=False,
            progbar=False,
        )
        start = time.perf_counter()
        tree = optimizer.search(inputs, output, size_dict)
        print(json.dumps(figures(tree, time.perf_counter() - start)))
    elif mode == "greedy":
        import opt_einsum

        start = time.perf_counter()
        linear = opt_einsum.paths.greedy([frozenset(t) for t in inputs], frozenset(output), size_dict)
        seconds = time.perf_counter() - start
        tree = ctg.ContractionTree.from_path(inputs, output, size_dict, path=linear)
        print(json.dumps(figures(tree, seconds)))
    elif mode == "score":
        linear = [tuple(step) for step in json.loads(open(sys.argv[3]).read())]
        tree = ctg.ContractionTree.from_path(inputs, output, size_dict, path=linear)
        print(json.dumps(figures(tree, 0.0)))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
