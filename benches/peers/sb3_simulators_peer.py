"""Peer runs for `rlsolver bench simulators`: Stable-Baselines3 on the same gymnasium tasks, with
the hyperparameters the bench gives both sides (src/bench/simulators.rs holds the table), on this
machine. The tasks come as JSON on stdin:
  [{"algorithm", "env", "budget", "eval_every", "eval_episodes", "seeds", "sb3": {kwargs},
    "normalize_observations": bool}]
and one JSON object goes to stdout: {"versions": {...}, "runs": [{algorithm, env, seed,
final_return, evaluations: [[step, mean]], train_s, wall_s}]} (progress on stderr).

Evaluation as rlsolver's run loop: every eval_every env steps, eval_episodes deterministic episodes
on fresh starts; the time spent evaluating is left out of train_s.
"""

import importlib
import json
import os
import sys
import time

# The result goes to a private copy of stdout; fd 1 points at stderr, since pybullet prints to
# stdout from C.
RESULT = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)

import gymnasium as gym
import numpy as np
import stable_baselines3
import torch
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.noise import NormalActionNoise
from stable_baselines3.common.vec_env import VecNormalize


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def make_env(env_id):
    # "module:Id" registers the module's envs first, as gymnasium.make does.
    if ":" in env_id:
        importlib.import_module(env_id.split(":")[0])
        env_id = env_id.split(":", 1)[1]
    return env_id


class Evaluations(BaseCallback):
    def __init__(self, env_id, every, episodes, seed, normalizer):
        super().__init__()
        self.env_id, self.every, self.episodes, self.seed = env_id, every, episodes, seed
        self.normalizer = normalizer
        self.next_eval, self.eval_s, self.curve = every, 0.0, []

    def evaluate(self):
        started = time.perf_counter()
        env = gym.make(self.env_id)
        returns = []
        for episode in range(self.episodes):
            obs, _ = env.reset(seed=self.seed * 1_000_003 + len(self.curve) * 1000 + episode)
            done, total = False, 0.0
            while not done:
                x = self.normalizer.normalize_obs(obs) if self.normalizer is not None else obs
                action, _ = self.model.predict(x, deterministic=True)
                obs, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
        env.close()
        self.curve.append([self.num_timesteps, float(np.mean(returns))])
        self.eval_s += time.perf_counter() - started

    def _on_step(self):
        if self.num_timesteps >= self.next_eval:
            self.next_eval += self.every
            self.evaluate()
        return True


def build(task, env, seed):
    kwargs = dict(task["sb3"])
    algorithm = task["algorithm"]
    if algorithm == "sac":
        return SAC("MlpPolicy", env, seed=seed, device="cpu", **kwargs)
    if algorithm == "td3":
        noise = kwargs.pop("action_noise_std")
        n = env.action_space.shape[0]
        return TD3("MlpPolicy", env, seed=seed, device="cpu",
                   action_noise=NormalActionNoise(np.zeros(n), noise * np.ones(n)), **kwargs)
    if algorithm == "ppo":
        return PPO("MlpPolicy", env, seed=seed, device="cpu", **kwargs)
    raise ValueError(f"no SB3 peer for {algorithm}")


def main():
    torch.set_num_threads(max(1, torch.get_num_threads()))
    tasks = json.load(sys.stdin)
    runs = []
    for task in tasks:
        env_id = make_env(task["env"])
        for seed in task["seeds"]:
            started = time.perf_counter()
            env = make_vec_env(env_id, n_envs=task.get("n_envs", 1), seed=seed)
            normalizer = None
            if task.get("normalize_observations"):
                env = normalizer = VecNormalize(env, norm_obs=True, norm_reward=False)
            model = build(task, env, seed)
            callback = Evaluations(env_id, task["eval_every"], task["eval_episodes"], seed, normalizer)
            model.learn(total_timesteps=task["budget"], callback=callback)
            if not callback.curve or callback.curve[-1][0] < task["budget"]:
                callback.evaluate()
            wall = time.perf_counter() - started
            run = {
                "algorithm": task["algorithm"], "env": task["env"], "seed": seed,
                "final_return": callback.curve[-1][1], "evaluations": callback.curve,
                "train_s": wall - callback.eval_s, "wall_s": wall,
            }
            log(f"sb3 {task['algorithm']} {task['env']} seed {seed}: {run['final_return']:.1f} "
                f"in {run['train_s']:.1f} s")
            runs.append(run)
    import importlib.metadata as m
    versions = {p: m.version(p) for p in ["stable-baselines3", "torch", "gymnasium", "mujoco"]}
    versions["torch_threads"] = torch.get_num_threads()
    RESULT.write(json.dumps({"versions": versions, "runs": runs}))
    RESULT.flush()


if __name__ == "__main__":
    main()
