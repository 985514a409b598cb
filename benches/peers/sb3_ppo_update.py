"""One PPO update by Stable-Baselines3 from given weights, rollout and minibatch order, for
`ppo::tests` (src/drl/agents/ppo.rs): reads an .npz with our variables (`w/<name>`), the
rollout (obs, actions, log_probs, values, advantages, returns), `order` [epochs, n] and the
settings, runs SB3's own `PPO.train` on exactly those minibatches, and writes SB3's weights
after it under our names.

Usage: python sb3_ppo_update.py IN.npz OUT.npz
"""

import sys

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.type_aliases import RolloutBufferSamples

# SB3's name -> ours (tch's VarStore paths, `Ppo::new`).
NAMES = {
    "mlp_extractor.policy_net.0": "actor.mean.layer0",
    "mlp_extractor.policy_net.2": "actor.mean.layer1",
    "action_net": "actor.mean.out",
    "mlp_extractor.value_net.0": "critic.layer0",
    "mlp_extractor.value_net.2": "critic.layer1",
    "value_net": "critic.out",
}


def ours(sb3_name):
    if sb3_name == "log_std":
        return "actor.log_std"
    module, kind = sb3_name.rsplit(".", 1)
    return f"{NAMES[module]}.{kind}"


class Shapes(gym.Env):
    def __init__(self, obs_dim, action_dim):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (action_dim,), np.float32)


def main():
    data = np.load(sys.argv[1])
    settings = {k: float(data[k].reshape(-1)[0]) for k in ("learning_rate", "clip_range", "vf_coef", "max_grad_norm")}
    order = data["order"]
    epochs, n = order.shape
    batch = int(data["batch_size"].reshape(-1)[0])
    torch.set_num_threads(1)
    env = Shapes(data["obs"].shape[1], data["actions"].shape[1])
    model = PPO("MlpPolicy", env, n_steps=n, batch_size=batch, n_epochs=epochs, ent_coef=0.0,
                learning_rate=settings["learning_rate"], clip_range=settings["clip_range"],
                vf_coef=settings["vf_coef"], max_grad_norm=settings["max_grad_norm"], device="cpu")
    model.set_logger(Logger(folder=None, output_formats=[]))
    state = {name: torch.from_numpy(data["w/" + ours(name)].copy()) for name in model.policy.state_dict()}
    model.policy.load_state_dict(state)
    tensors = {k: torch.from_numpy(data[k].copy()) for k in ("obs", "actions", "log_probs", "values", "advantages", "returns")}
    epochs_left = iter(order)

    def get(batch_size):
        permutation = torch.from_numpy(next(epochs_left).copy())
        for start in range(0, n, batch_size):
            i = permutation[start:start + batch_size]
            yield RolloutBufferSamples(tensors["obs"][i], tensors["actions"][i], tensors["values"][i],
                                       tensors["log_probs"][i], tensors["advantages"][i], tensors["returns"][i])

    model.rollout_buffer.get = get
    model.train()
    after = {"w/" + ours(name): t.detach().numpy() for name, t in model.policy.state_dict().items()}
    np.savez(sys.argv[2], **after)


if __name__ == "__main__":
    main()
