"""`RLSolverOptimizer`: an `opt_einsum.paths.PathOptimizer` whose contraction orders come from
the server's `tensor_network` search, so `opt_einsum.contract(eq, *arrays,
optimize=RLSolverOptimizer())` (and quimb or cotengra, which take opt_einsum optimizers)
contract in our order."""

from __future__ import annotations

import math
from typing import Any

from opt_einsum.paths import PathOptimizer

from .client import Client


class RLSolverOptimizer(PathOptimizer):
    """Posts each network to the server and returns its path (opt_einsum's linear form).

    `time_limit_s` and `seed` are the search's; `memory_limit` (elements of the largest
    intermediate, from opt_einsum) becomes the server's `max_intermediate_log2`, and an order
    that meets it only by slicing is refused with `ValueError` (opt_einsum does not slice).
    The latest report is kept as `last_report` (its `cost_log10`, `tree`, ...).
    """

    def __init__(self, client: Client | None = None, time_limit_s: float = 1.0, seed: int = 0, **options: Any):
        self.client = client or Client()
        self.options = {"time_limit_s": time_limit_s, "seed": seed, **options}
        self.last_report: dict | None = None

    def __call__(self, inputs, output, size_dict, memory_limit=None):
        inputs = [sorted(map(str, term)) for term in inputs]
        if len(inputs) == 1:
            return [(0,)]
        if len(inputs) == 2:
            return [(0, 1)]
        instance: dict[str, Any] = {
            "inputs": inputs,
            "output": sorted(map(str, output)),
            "size_dict": {str(k): int(v) for k, v in size_dict.items()},
        }
        if memory_limit is not None and memory_limit > 0:
            instance["max_intermediate_log2"] = math.log2(memory_limit)
        report = self.client.solve("tensor_network", instance, **self.options)
        self.last_report = report
        if report["solution"].get("sliced_indices"):
            raise ValueError(f"meeting memory_limit={memory_limit} needs slicing {report['solution']['sliced_indices']}")
        return [tuple(step) for step in report["solution"]["path"]]
