"""`RLSolverSampler`: a `dimod.Sampler` that solves binary quadratic models on an rlsolver
server (`qubo` for BINARY models, `ising` for SPIN ones).

Variables travel as 0..n-1 (any hashable dimod label works) and come back in the model's own
labels; every returned sample's energy is recomputed by dimod from the model, so the sample set
is exactly what dimod would compute for those samples.
"""

from __future__ import annotations

from typing import Any

import dimod
import numpy as np

from .client import Client


class RLSolverSampler(dimod.Sampler):
    """Samples the lowest states the server's search finds.

    Parameters of `sample`: `time_limit_s` (the search's wall-clock budget, default 1),
    `seed` (default 0; equal seeds with `max_rounds` give equal answers), `chains`,
    `max_rounds`, and `num_reads`: how many distinct lowest states to return at most (default:
    all the server returns).
    """

    def __init__(self, client: Client | None = None, **defaults: Any):
        self.client = client or Client()
        self.defaults = {"time_limit_s": 1.0, "seed": 0, **defaults}

    @property
    def parameters(self) -> dict[str, list]:
        return {"time_limit_s": [], "seed": [], "chains": [], "max_rounds": [], "num_reads": []}

    @property
    def properties(self) -> dict[str, Any]:
        return {"url": self.client.url, "problems": ["qubo", "ising"], "defaults": dict(self.defaults)}

    def sample(
        self,
        bqm: dimod.BinaryQuadraticModel,
        time_limit_s: float | None = None,
        seed: int | None = None,
        chains: int | None = None,
        max_rounds: int | None = None,
        num_reads: int | None = None,
        **kwargs: Any,
    ) -> dimod.SampleSet:
        self.remove_unknown_kwargs(**kwargs)
        if num_reads is not None and num_reads < 1:
            raise ValueError("num_reads must be at least 1")
        labels = list(bqm.variables)
        if not labels:
            return dimod.SampleSet.from_samples_bqm(([], []), bqm)
        options = {**self.defaults, "time_limit_s": time_limit_s, "seed": seed, "chains": chains, "max_rounds": max_rounds}
        options = {k: v for k, v in options.items() if v is not None}
        # A plain float64 model over 0..n-1, whatever the input's class (DictBQM, Float32BQM).
        index = {v: i for i, v in enumerate(labels)}
        numbered = dimod.BinaryQuadraticModel(
            {index[v]: bias for v, bias in bqm.linear.items()},
            {(index[u], index[v]): bias for (u, v), bias in bqm.quadratic.items()},
            bqm.offset,
            bqm.vartype,
            dtype=np.float64,
        )
        problem = "qubo" if bqm.vartype is dimod.BINARY else "ising"
        report = self.client.solve(problem, numbered.to_serializable(), **options)
        answer = dimod.SampleSet.from_serializable(report["solution"])
        order = [answer.variables.index(i) for i in range(len(labels))]
        samples = np.asarray(answer.record.sample)[:, order]
        info = {k: report.get(k) for k in ("status", "elapsed_ms", "rounds", "chains", "bound", "gap")}
        result = dimod.SampleSet.from_samples_bqm((samples, labels), bqm, info=info).aggregate()
        if num_reads is not None:
            result = result.truncate(num_reads)
        return result
