"""Peer measurements for `rlsolver bench bridge`: env steps per second of a gymnasium env stepped
with uniformly random actions (16 pre-drawn batches, cycled, as the bridge row draws them)
  - "python": B copies stepped in one Python loop (the env alone, no vectorization layer),
  - "sync": gymnasium's SyncVectorEnv,
  - "async": gymnasium's AsyncVectorEnv (one process per env, shared memory).
Prints one JSON object on stdout: {"versions": {...}, "rows": [{env, batch, mode, steps_per_s}]}.
Each figure is the median of --repeats runs of at least --seconds.
"""

import argparse
import json
import statistics
import sys
import time

import gymnasium as gym
import numpy as np


def rate(step, batch, repeats, seconds):
    rates = []
    for _ in range(repeats):
        start, steps = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            for k in range(16):
                step(k)
            steps += 16 * batch
        rates.append(steps / (time.perf_counter() - start))
    return statistics.median(rates)


def measure(env_id, batch, mode, repeats, seconds):
    if mode == "python":
        envs = [gym.make(env_id) for _ in range(batch)]
        space = envs[0].action_space
        space.seed(0)
        actions = [[space.sample() for _ in range(batch)] for _ in range(16)]
        for i, env in enumerate(envs):
            env.reset(seed=i)

        def step(k):
            for env, a in zip(envs, actions[k]):
                _, _, terminated, truncated, _ = env.step(a)
                if terminated or truncated:
                    env.reset()

        result = rate(step, batch, repeats, seconds)
        for env in envs:
            env.close()
        return result
    vec = gym.make_vec(env_id, num_envs=batch, vectorization_mode=mode)
    vec.action_space.seed(0)
    actions = [vec.action_space.sample() for _ in range(16)]
    vec.reset(seed=0)
    result = rate(lambda k: vec.step(actions[k]), batch, repeats, seconds)
    vec.close()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--envs", default="CartPole-v1,Hopper-v5")
    parser.add_argument("--batches", default="1,16,64")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    rows = []
    for env_id in args.envs.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            for mode in ["python", "sync", "async"]:
                r = measure(env_id, batch, mode, args.repeats, args.seconds)
                print(f"{env_id} B={batch} {mode}: {r:.0f} steps/s", file=sys.stderr, flush=True)
                rows.append({"env": env_id, "batch": batch, "mode": mode, "steps_per_s": r})
    import importlib.metadata as m
    versions = {p: m.version(p) for p in ["gymnasium", "mujoco", "numpy"]}
    versions["python"] = sys.version.split()[0]
    print(json.dumps({"versions": versions, "rows": rows}))


if __name__ == "__main__":
    main()
