"""Peer measurements for `rlsolver bench drl`: gymnasium env throughput and Stable-Baselines3
training seconds to a return threshold, with the hyperparameters rlsolver uses by default
(src/drl/run.rs `defaults`, src/drl/agents/*), on this machine with 2 torch threads.

Prints one JSON object on stdout (progress on stderr):
  {"versions": {...}, "env_throughput": [{env, batch, steps_per_s}],
   "threshold": [{algorithm, env, seed, reached_at, train_s}]}

Evaluation protocol, as in rlsolver's run loop: every 1000 env steps, 10 deterministic episodes;
stop at the threshold; the time spent evaluating is excluded from train_s.
"""

import argparse
import json
import statistics
import sys
import time

import gymnasium as gym
import numpy as np
import stable_baselines3
import torch
from stable_baselines3 import PPO, SAC
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

ENVS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def throughput(env_id, batch, repeats, seconds):
    if batch == 1:
        env = gym.make(env_id)
    else:
        try:
            env = gym.make_vec(env_id, num_envs=batch, vectorization_mode="vector_entry_point")
        except Exception:
            if batch > 64:
                return None
            env = gym.make_vec(env_id, num_envs=batch, vectorization_mode="sync")
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(16)]
    env.reset(seed=0)
    rates = []
    for _ in range(repeats):
        start, steps = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            for a in actions:
                if batch == 1:
                    _, _, terminated, truncated, _ = env.step(a)
                    if terminated or truncated:
                        env.reset()
                else:
                    env.step(a)  # vector envs auto-reset
            steps += len(actions) * batch
        rates.append(steps / (time.perf_counter() - start))
    env.close()
    return statistics.median(rates)


class ThresholdStop(BaseCallback):
    """Evaluates every `every` steps on the evaluation clock; stops at the threshold."""

    def __init__(self, env_id, threshold, every, seed):
        super().__init__()
        self.env_id, self.threshold, self.every, self.seed = env_id, threshold, every, seed
        self.next_eval, self.eval_s, self.reached_at = every, 0.0, None

    def _on_step(self):
        if self.num_timesteps < self.next_eval:
            return True
        self.next_eval += self.every
        started = time.perf_counter()
        env = gym.make(self.env_id)
        returns = []
        for episode in range(10):
            obs, _ = env.reset(seed=self.seed + 1_000_003 + episode)
            done, total = False, 0.0
            while not done:
                action, _ = self.model.predict(obs, deterministic=True)
                obs, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
        self.eval_s += time.perf_counter() - started
        if np.mean(returns) >= self.threshold:
            self.reached_at = self.num_timesteps
            return False
        return True


def ppo_cartpole(seed):
    env = make_vec_env("CartPole-v1", n_envs=8, seed=seed)
    return PPO("MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
               ent_coef=0.0, learning_rate=1e-3, clip_range=0.2, seed=seed, device="cpu")


def sac_pendulum(seed):
    env = make_vec_env("Pendulum-v1", n_envs=1, seed=seed)
    return SAC("MlpPolicy", env, learning_rate=1e-3, buffer_size=100_000, learning_starts=1000, batch_size=256,
               tau=0.005, gamma=0.99, train_freq=1, gradient_steps=1, ent_coef="auto_1.0",
               policy_kwargs=dict(net_arch=[256, 256]), seed=seed, device="cpu")


TASKS = [
    ("ppo_discrete", "CartPole-v1", 475.0, 100_000, ppo_cartpole),
    ("sac", "Pendulum-v1", -200.0, 20_000, sac_pendulum),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--batches", default="1,64,4096")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5)
    args = parser.parse_args()
    torch.set_num_threads(2)
    report = {
        "versions": {"stable_baselines3": stable_baselines3.__version__, "gymnasium": gym.__version__,
                     "torch": torch.__version__, "numpy": np.__version__},
        "env_throughput": [],
        "threshold": [],
    }
    for env_id in ENVS:
        for batch in [int(b) for b in args.batches.split(",")]:
            rate = throughput(env_id, batch, args.repeats, args.seconds)
            log(f"gymnasium {env_id} B={batch}: {rate}")
            if rate is not None:
                report["env_throughput"].append({"env": env_id, "batch": batch, "steps_per_s": rate})
    for algorithm, env_id, threshold, budget, build in TASKS:
        for seed in [int(s) for s in args.seeds.split(",")]:
            model = build(seed)
            stop = ThresholdStop(env_id, threshold, 1000, seed)
            started = time.perf_counter()
            model.learn(total_timesteps=budget, callback=stop)
            train_s = time.perf_counter() - started - stop.eval_s
            log(f"sb3 {algorithm} {env_id} seed {seed}: reached at {stop.reached_at}, {train_s:.1f} s")
            report["threshold"].append({"algorithm": algorithm, "env": env_id, "seed": seed,
                                        "reached_at": stop.reached_at, "train_s": train_s})
    print(json.dumps(report))


if __name__ == "__main__":
    main()
