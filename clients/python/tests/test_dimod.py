"""RLSolverSampler against dimod's own sampler checks, inside dimod composites, and on a model
whose ground state dimod's ExactSolver proves."""

import itertools
import random
import unittest

import dimod
import dimod.testing
import pytest
from dwave.preprocessing import FixVariablesComposite, ScaleComposite

from rlsolver import Client
from rlsolver.dimod import RLSolverSampler


def sampler(**options):
    return RLSolverSampler(Client(), time_limit_s=0.2, **options)


@dimod.testing.load_sampler_bqm_tests(sampler)
class TestDimodSamplerSuite(unittest.TestCase):
    """dimod's generated tests: empty, single-variable, offset-only and small dense models of
    both vartypes with mixed labels, each answer checked by `assert_sampleset_energies`."""


def random_bqm(vartype, n, density, seed):
    rng = random.Random(seed)
    labels = [("q", i) if i % 3 == 0 else (f"v{i}" if i % 3 == 1 else i) for i in range(n)]
    bqm = dimod.BinaryQuadraticModel(vartype)
    for v in labels:
        bqm.add_variable(v, rng.uniform(-1, 1))
    for u, v in itertools.combinations(labels, 2):
        if rng.random() < density:
            bqm.add_interaction(u, v, rng.uniform(-2, 2))
    bqm.offset = rng.uniform(-1, 1)
    return bqm


def test_the_sampler_api_is_dimods():
    dimod.testing.assert_sampler_api(sampler())


@pytest.mark.parametrize("vartype", [dimod.SPIN, dimod.BINARY])
def test_small_models_reach_the_exact_ground_state_with_their_labels_and_vartype(vartype):
    bqm = random_bqm(vartype, 12, 0.5, seed=3)
    answer = sampler().sample(bqm, seed=2)
    dimod.testing.assert_sampleset_energies(answer, bqm)
    assert answer.vartype is vartype
    assert set(answer.variables) == set(bqm.variables)
    ground = dimod.ExactSolver().sample(bqm).first.energy
    assert answer.first.energy == pytest.approx(ground)


def test_num_reads_caps_the_distinct_lowest_states():
    bqm = random_bqm(dimod.SPIN, 60, 0.1, seed=5)
    everything = sampler().sample(bqm)
    capped = sampler().sample(bqm, num_reads=1)
    assert len(capped) == 1
    assert capped.first.energy == pytest.approx(everything.first.energy)
    energies = list(everything.record.energy)
    assert energies == sorted(energies)
    assert len({tuple(s) for s in everything.record.sample}) == len(everything)


def test_ising_and_qubo_entry_points_and_composites():
    h, J = {"a": 1.0, "b": -0.5, "c": 0.2}, {("a", "b"): -1.0, ("b", "c"): 1.0}
    answer = sampler().sample_ising(h, J)
    bqm = dimod.BinaryQuadraticModel.from_ising(h, J)
    dimod.testing.assert_sampleset_energies(answer, bqm)
    assert answer.first.energy == pytest.approx(dimod.ExactSolver().sample(bqm).first.energy)
    Q = {(0, 0): -1.0, (1, 1): -1.0, (0, 1): 2.0}
    assert sampler().sample_qubo(Q).first.energy == pytest.approx(-1.0)
    # Composites wrap it as any dimod sampler (dimod's scaling and fixing composites live in
    # dwave-preprocessing since dimod 0.10; `FixedVariableComposite` is its `FixVariablesComposite`).
    model = random_bqm(dimod.SPIN, 12, 0.4, seed=7)
    exact = dimod.ExactSolver().sample(model)
    scaled = ScaleComposite(sampler()).sample(model, scalar=0.5)
    dimod.testing.assert_sampleset_energies(scaled, model)
    assert scaled.first.energy == pytest.approx(exact.first.energy)
    pinned = {("q", 0): 1, "v1": -1}
    fixed = FixVariablesComposite(sampler(), algorithm="explicit").sample(model, fixed_variables=pinned)
    dimod.testing.assert_sampleset_energies(fixed, model)
    assert all(s[("q", 0)] == 1 and s["v1"] == -1 for s in fixed.samples())
    best_pinned = min(e for s, e in exact.data(["sample", "energy"]) if s[("q", 0)] == 1 and s["v1"] == -1)
    assert fixed.first.energy == pytest.approx(best_pinned)
    truncated = dimod.TruncateComposite(sampler(), n=2).sample(model)
    assert 1 <= len(truncated) <= 2 and truncated.first.energy == pytest.approx(exact.first.energy)


def test_unknown_parameters_are_ignored_with_dimods_warning():
    with pytest.warns(dimod.exceptions.SamplerUnknownArgWarning):
        answer = sampler().sample(dimod.BinaryQuadraticModel({"a": 1}, {}, 0, dimod.SPIN), colour="blue")
    assert answer.first.sample == {"a": -1}
