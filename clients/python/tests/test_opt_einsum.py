"""RLSolverOptimizer inside opt_einsum: a generated random circuit's network contracts to the
same numbers with our path as with opt_einsum's greedy one, at no higher cost."""

import numpy as np
import opt_einsum
from opt_einsum.testing import rand_equation
import pytest

from rlsolver import Client
from rlsolver.opt_einsum import RLSolverOptimizer

SYMBOLS = [opt_einsum.get_symbol(i) for i in range(400)]


def circuit_network(qubits, layers, seed):
    """A brickwork circuit's tensor network, amplitude <0|C|0>: single-qubit states, random
    two-qubit gates on alternating neighbour pairs, closed by output states; every index of
    dimension 2, no open indices."""
    rng = np.random.default_rng(seed)
    wires = list(range(qubits))
    next_symbol = qubits
    terms, arrays = [], []
    for q in range(qubits):
        terms.append(SYMBOLS[q])
        arrays.append(rng.normal(size=2) + 1j * rng.normal(size=2))
    for layer in range(layers):
        for q in range(layer % 2, qubits - 1, 2):
            a, b = wires[q], wires[q + 1]
            c, d = next_symbol, next_symbol + 1
            next_symbol += 2
            terms.append(SYMBOLS[a] + SYMBOLS[b] + SYMBOLS[c] + SYMBOLS[d])
            arrays.append(rng.normal(size=(2, 2, 2, 2)) + 1j * rng.normal(size=(2, 2, 2, 2)))
            wires[q], wires[q + 1] = c, d
    for q in range(qubits):
        terms.append(SYMBOLS[wires[q]])
        arrays.append(rng.normal(size=2))
    return ",".join(terms) + "->", arrays


def test_contractions_with_our_path_equal_greedy_ones_at_no_higher_cost(client):
    eq, arrays = circuit_network(qubits=8, layers=6, seed=1)
    optimizer = RLSolverOptimizer(client, time_limit_s=1.0, seed=0)
    ours_path, ours_info = opt_einsum.contract_path(eq, *arrays, optimize=optimizer)
    greedy_path, greedy_info = opt_einsum.contract_path(eq, *arrays, optimize="greedy")
    assert optimizer.last_report is not None and optimizer.last_report["problem"] == "tensor_network"
    assert ours_info.opt_cost <= greedy_info.opt_cost
    ours = opt_einsum.contract(eq, *arrays, optimize=ours_path)
    theirs = opt_einsum.contract(eq, *arrays, optimize=greedy_path)
    assert ours == pytest.approx(theirs, rel=1e-9)
    # The optimizer object itself goes straight into contract.
    direct = opt_einsum.contract(eq, *arrays, optimize=RLSolverOptimizer(client, time_limit_s=0.2))
    assert direct == pytest.approx(theirs, rel=1e-9)


def test_open_indices_and_tiny_networks():
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(5, 6))
    optimizer = RLSolverOptimizer(time_limit_s=0.2)
    assert np.allclose(opt_einsum.contract("ij,jk,kl->il", a, b, c, optimize=optimizer), a @ b @ c)
    assert optimizer([{"i", "j"}], {"i"}, {"i": 2, "j": 3}) == [(0,)]
    assert optimizer([{"i", "j"}, {"j"}], {"i"}, {"i": 2, "j": 3}) == [(0, 1)]


def test_a_memory_limit_that_needs_slicing_is_refused(client):
    eq, arrays = circuit_network(qubits=8, layers=6, seed=2)
    with pytest.raises(ValueError, match="slicing"):
        opt_einsum.contract_path(eq, *arrays, optimize=RLSolverOptimizer(client, time_limit_s=0.2), memory_limit=4)


def test_random_networks_from_opt_einsum_helpers(client):
    for seed in range(3):
        eq, shapes = rand_equation(8, 3, seed=seed)
        arrays = [np.random.default_rng(seed).normal(size=s) for s in shapes]
        ours = opt_einsum.contract(eq, *arrays, optimize=RLSolverOptimizer(client, time_limit_s=0.2, seed=seed))
        assert np.allclose(ours, opt_einsum.contract(eq, *arrays, optimize="greedy"))


def test_cotengra_contracts_with_our_order(client):
    import cotengra as ctg  # make test installs it (make tnco-peer)
    eq, shapes = rand_equation(10, 3, seed=4)
    arrays = [np.random.default_rng(4).normal(size=s) for s in shapes]
    optimizer = RLSolverOptimizer(client, time_limit_s=0.3)
    ours = ctg.einsum(eq, *arrays, optimize=optimizer)
    assert optimizer.last_report is not None
    assert np.allclose(ours, opt_einsum.contract(eq, *arrays, optimize="greedy"))
