"""or-gymnasium's side of `rlsolver bench orgym`: env steps per second of Knapsack-v0..v3 and
BinPacking-v0..v5 with
(Newsvendor-v0, InvManagement-v0/v1, PortfolioOpt-v0: uniform actions on their boxes; TSP-v0/v1,
and VehicleRouting-v0, which have no mask: uniform actions)
uniformly random allowed actions, one env (B = 1) and gymnasium's SyncVectorEnv of B envs.
Prints {env id: {B: steps per second}} as JSON (median of 3 repeats of at least 0.3 s each).

Run: make peers && .venv/bin/python benches/peers/orgym_peer.py --batches 1,4096
"""
import argparse
import json
import sys
import time

import gymnasium as gym
import numpy as np
from or_gymnasium.envs import binpacking as bp
from or_gymnasium.envs.inventory_management import InvManagementBacklogEnv, InvManagementLostSalesEnv
from or_gymnasium.envs.newsvendor import NewsvendorEnv
from or_gymnasium.envs.knapsack import BinaryKnapsackEnv, BoundedKnapsackEnv, KnapsackEnv, OnlineKnapsackEnv
from or_gymnasium.envs.portfolio_opt import PortfolioOptEnv
from or_gymnasium.envs.tsp import TSPDistCost, TSPEnv
from or_gymnasium.envs.vehicle_routing import VehicleRoutingEnv
from or_gymnasium.envs.vmpacking import VMPackingEnv


def masked(cls):
    """A bin-packing env with or-gym's `mask: True` (the observation rlsolver's envs default to)."""

    def make():
        env = cls()
        env.mask = True
        env._build_obs_space()
        return env

    return make


ENVS = {
    "Knapsack-v0": KnapsackEnv,
    "Knapsack-v1": BinaryKnapsackEnv,
    "Knapsack-v2": BoundedKnapsackEnv,
    "Knapsack-v3": OnlineKnapsackEnv,
    "BinPacking-v0": masked(bp.BinPackingEnv),
    "BinPacking-v1": masked(bp.BinPackingLW1),
    "BinPacking-v2": masked(bp.BinPackingPP0),
    "BinPacking-v3": masked(bp.BinPackingPP1),
    "BinPacking-v4": masked(bp.BinPackingBW0),
    "BinPacking-v5": masked(bp.BinPackingBW1),
    "Newsvendor-v0": NewsvendorEnv,
    "InvManagement-v0": InvManagementBacklogEnv,
    "InvManagement-v1": InvManagementLostSalesEnv,
    "PortfolioOpt-v0": PortfolioOptEnv,
    "TSP-v0": TSPEnv,
    "TSP-v1": TSPDistCost,
    # VMPacking-v1 raises when a VM ends (tests/fixtures/orgym/record_vmpacking.py); v0 only.
    "VMPacking-v0": VMPackingEnv,
    "VehicleRouting-v0": VehicleRoutingEnv,
}


def random_allowed(mask, rng):
    """Per row, a uniformly random allowed action (any action when none is)."""
    scores = rng.random(mask.shape) + mask
    return np.argmax(scores, axis=-1)


def rate(make, b, rng):
    continuous = make in (NewsvendorEnv, InvManagementBacklogEnv, InvManagementLostSalesEnv, PortfolioOptEnv)
    unmasked = make in (TSPEnv, TSPDistCost, VehicleRoutingEnv)
    if b == 1:
        env = make()
        obs, _ = env.reset(seed=1)
        if continuous:
            step = lambda obs: env.step(rng.uniform(env.action_space.low, env.action_space.high).astype(np.float32))
        elif unmasked:
            step = lambda obs: env.step(int(rng.integers(env.action_space.n)))
        else:
            step = lambda obs: env.step(int(random_allowed(obs["action_mask"], rng)))
    else:
        env = gym.vector.SyncVectorEnv([make for _ in range(b)])
        obs, _ = env.reset(seed=1)
        if continuous:
            space = env.single_action_space
            step = lambda obs: env.step(rng.uniform(space.low, space.high, size=(b,) + space.shape).astype(np.float32))
        elif unmasked:
            step = lambda obs: env.step(rng.integers(env.single_action_space.n, size=b))
        else:
            step = lambda obs: env.step(random_allowed(obs["action_mask"], rng))
    rates = []
    for _ in range(3):
        start, steps = time.perf_counter(), 0
        while time.perf_counter() - start < 0.3:
            obs, _, terminated, truncated, _ = step(obs)
            if b == 1 and (terminated or truncated):
                obs, _ = env.reset()
            steps += b
        rates.append(steps / (time.perf_counter() - start))
    return float(np.median(rates))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", default="1,4096")
    batches = [int(b) for b in parser.parse_args().batches.split(",")]
    rng = np.random.default_rng(0)
    out = {}
    for env_id, make in ENVS.items():
        out[env_id] = {str(b): rate(make, b, rng) for b in batches}
        print(env_id, out[env_id], file=sys.stderr)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
