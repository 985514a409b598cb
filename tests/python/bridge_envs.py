"""Gymnasium envs for tests/gymnasium_bridge.rs: structured spaces and faulty simulators.

Imported by the bridge's workers as `gymnasium:tests.python.bridge_envs:<Id>` (the worker runs
with the server's working folder on sys.path).
"""
import os
import time

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Structured(gym.Env):
    """Dict observation (Box, Discrete, Tuple of MultiDiscrete) and a MultiDiscrete action; the
    reward echoes the decoded action so that the test can check the joint-index decoding, and the
    observation echoes the step count and the last action."""

    def __init__(self):
        self.observation_space = spaces.Dict({
            "position": spaces.Box(-10.0, 10.0, (2,), np.float64),
            "phase": spaces.Discrete(3),
            "last": spaces.Tuple((spaces.MultiDiscrete([3, 4]),)),
        })
        self.action_space = spaces.MultiDiscrete([3, 4])
        self.t = 0
        self.last = np.zeros(2, dtype=np.int64)

    def _obs(self):
        return {
            "position": np.array([self.t, self.start], dtype=np.float64),
            "phase": self.t % 3,
            "last": (self.last.copy(),),
        }

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.start = float(self.np_random.integers(0, 10))
        self.last = np.zeros(2, dtype=np.int64)
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        self.last = np.asarray(action, dtype=np.int64)
        reward = 10.0 * float(action[0]) + float(action[1])
        return self._obs(), reward, self.t >= 5, False, {}


class Faulty(gym.Env):
    """A one-dimensional walk whose process dies (`crash`) or stops answering (`hang`) after
    `after` steps of the process's life."""

    steps_in_process = 0

    def __init__(self, fault="crash", after=30):
        self.fault, self.after = fault, after
        self.observation_space = spaces.Box(-1e6, 1e6, (1,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.x = 0.0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.x = float(self.np_random.uniform(-1, 1))
        return np.array([self.x], dtype=np.float32), {}

    def step(self, action):
        Faulty.steps_in_process += 1
        if Faulty.steps_in_process == self.after:
            if self.fault == "crash":
                os._exit(3)
            time.sleep(3600)
        self.x += float(action[0])
        return np.array([self.x], dtype=np.float32), -abs(self.x), False, False, {}


gym.register("Structured-v0", entry_point=Structured, max_episode_steps=50)
gym.register("Faulty-v0", entry_point=Faulty, max_episode_steps=20)
