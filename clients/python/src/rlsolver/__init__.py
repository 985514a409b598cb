"""rlsolver's Python client: `Client` for the REST API, `rlsolver.dimod.RLSolverSampler` (a
dimod sampler), `rlsolver.opt_einsum.RLSolverOptimizer` (an opt_einsum path optimizer) and
training from Python (`train`, `TrainingJob.policy`, `Policy.predict`, `evaluate`).

The module-level functions use a client built from `RLSOLVER_URL` and `RLSOLVER_API_KEY`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .client import Client, Policy, Population, SolveJob, TrainingJob
from .errors import (
    BadRequest,
    Busy,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    RLSolverError,
    ServerError,
    Unauthorized,
)
from .events import Event

try:
    __version__ = version("rlsolver")
except PackageNotFoundError:  # a source checkout on sys.path
    __version__ = "0.0.0"

__all__ = [
    "BadRequest",
    "Busy",
    "Client",
    "Conflict",
    "Event",
    "Forbidden",
    "InvalidInput",
    "NotFound",
    "PayloadTooLarge",
    "Policy",
    "Population",
    "RLSolverError",
    "ServerError",
    "SolveJob",
    "TrainingJob",
    "Unauthorized",
    "evaluate",
    "solve",
    "train",
]


def solve(problem: str, instance: Any = None, *, text: str | None = None, **options: Any) -> dict:
    """`Client().solve`."""
    with Client() as client:
        return client.solve(problem, instance, text=text, **options)


def train(algorithm: str, env: str, total_steps: int, *, client: Client | None = None, **options: Any) -> TrainingJob:
    """Queues a training job (`Client.train`); its `events()` stream the learning curve and
    `policy()` gives the trained policy."""
    return (client or Client()).train(algorithm, env, total_steps, **options)


def evaluate(policy: Policy, env: Any, episodes: int = 10, seed: int = 0) -> tuple[float, float]:
    """Mean and standard deviation of the return of `episodes` episodes of a Gymnasium env (an id
    or an `Env`), each action the server's (`Policy.predict`); episode k is reset with seed
    `seed + k`."""
    import gymnasium
    import numpy as np

    made = gymnasium.make(env) if isinstance(env, str) else env
    discrete = isinstance(made.action_space, gymnasium.spaces.Discrete)
    returns = []
    try:
        for k in range(episodes):
            observation, _ = made.reset(seed=seed + k)
            total, done = 0.0, False
            while not done:
                action = policy.predict([np.asarray(observation, dtype=np.float32).ravel()])[0]
                step = int(action[0]) if discrete else np.asarray(action, dtype=np.float32)
                observation, reward, terminated, truncated, _ = made.step(step)
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
    finally:
        if isinstance(env, str):
            made.close()
    return float(np.mean(returns)), float(np.std(returns))
