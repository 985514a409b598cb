"""Updates by Stable-Baselines3's own `train` from given weights and data, for the tests that
hold our updates to SB3's (`ppo::tests`, `td3::tests`, `sac::tests`). Reads an .npz written by the test: our
variables (`w/<store>/<name>`, tch's VarStore names), the data and the order it is drawn in, and
the settings; runs SB3's update on exactly that data; writes SB3's weights after it under our
names.

Usage: python sb3_update.py ppo|ppo_iteration|td3|td3_run|sac_run|gae IN.npz OUT.npz
  ppo: the rollout (obs, actions, log_probs, values, advantages, returns) and `order`
       [epochs, n], one minibatch permutation per epoch; one `PPO.train`.
  td3: the replay data (obs, actions, rewards, next_obs, terminated) and `indices`
       [updates, batch], each update's minibatch; `TD3.train(updates)` with the target-policy
       noise at 0 (drawn from torch's generator, which ours does not share).
  td3_run: a whole `TD3.learn` on Hopper-v5 (one env, episodes cut at `max_episode_steps`):
       the env reset with `env_seeds`, the warm-up's uniform actions `warmup_actions`
       [warmup, actions] (env units), then each step's exploration noise `explore`
       [steps - warmup, actions] (standard normal, times `exploration_noise`), each update's
       minibatch `indices` [updates, batch] and target-smoothing noise `smoothing`
       [updates, batch, actions] (standard normal), all ours; writes the weights after it, how
       many episodes ended `terminated` and `truncated`, and how many given draws went `unused`.
  sac_run: a whole `SAC.learn` on the same env with the same warm-up and minibatch inputs, every
       Gaussian draw (`Normal.rsample`) ours: per step `explore` [1, actions], then per update
       `current` and `next` [batch, actions] (the current and next observations' samples); the
       temperature starts from ours; writes the weights and `log_alpha` after it and the counts
       as td3_run.
  ppo_iteration: whole `PPO.learn` iterations on Hopper-v5 (episodes cut at
       `max_episode_steps`) under VecNormalize (observations only): the envs reset with
       `env_seeds`, each Gaussian sample drawn as mean + std * `noise`
       [iterations, steps, envs, actions] (ours) instead of from torch's generator, the
       minibatches in `order` [iterations, epochs, steps * envs] (ours, time-major); writes
       the weights after them, the observation statistics (`obs_mean`, `obs_var`,
       `obs_count`), how many episodes ended `terminated` and `truncated`, and how many were
       `carried` across a rollout boundary (envs in mid-episode as a later rollout starts).
  gae: a time-major rollout [steps, envs] (rewards, values, terminated, truncated,
       final_values: V of the final observation where an episode was truncated, last_values);
       SB3's rollout loop's truncation bootstrap and `RolloutBuffer.compute_returns_and_advantage`;
       writes `advantages` and `returns`.
"""

import sys

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO, SAC, TD3
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.noise import ActionNoise
from stable_baselines3.common.type_aliases import ReplayBufferSamples, RolloutBufferSamples


class Shapes(gym.Env):
    def __init__(self, obs_dim, action_dim):
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (action_dim,), np.float32)


def scalar(data, key):
    return data[key].reshape(-1)[0].item()


def tensor(data, key):
    return torch.from_numpy(data[key].copy())


# PPO: SB3's module -> our store/path.
PPO_NAMES = {
    "mlp_extractor.policy_net.0": "actor_critic/actor.mean.layer0",
    "mlp_extractor.policy_net.2": "actor_critic/actor.mean.layer1",
    "action_net": "actor_critic/actor.mean.out",
    "mlp_extractor.value_net.0": "actor_critic/critic.layer0",
    "mlp_extractor.value_net.2": "actor_critic/critic.layer1",
    "value_net": "actor_critic/critic.out",
}


def ppo_name(sb3_name):
    if sb3_name == "log_std":
        return "actor_critic/actor.log_std"
    module, kind = sb3_name.rsplit(".", 1)
    return f"{PPO_NAMES[module]}.{kind}"


def load_ppo(model, data):
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.policy.load_state_dict({name: tensor(data, "w/" + ppo_name(name)) for name in model.policy.state_dict()})


def ppo(data):
    order = data["order"]
    epochs, n = order.shape
    env = Shapes(data["obs"].shape[1], data["actions"].shape[1])
    model = PPO("MlpPolicy", env, n_steps=n, batch_size=int(scalar(data, "batch_size")), n_epochs=epochs,
                ent_coef=0.0, learning_rate=scalar(data, "learning_rate"), clip_range=scalar(data, "clip_range"),
                vf_coef=scalar(data, "vf_coef"), max_grad_norm=scalar(data, "max_grad_norm"), device="cpu")
    load_ppo(model, data)
    rollout = [tensor(data, k) for k in ("obs", "actions", "values", "log_probs", "advantages", "returns")]
    epochs_left = iter(order)

    def get(batch_size):
        permutation = torch.from_numpy(next(epochs_left).copy())
        for start in range(0, n, batch_size):
            yield RolloutBufferSamples(*(t[permutation[start:start + batch_size]] for t in rollout))

    model.rollout_buffer.get = get
    model.train()
    return {"w/" + ppo_name(name): t.detach().numpy() for name, t in model.policy.state_dict().items()}


def hopper(data, envs=1):
    """Hopper-v5, `envs` envs, episodes cut at `max_episode_steps`, reset with our `env_seeds`;
    counts how the episodes end."""
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("Hopper-v5", n_envs=envs, env_kwargs={"max_episode_steps": int(scalar(data, "max_episode_steps"))})
    venv._seeds = [int(s) for s in data["env_seeds"].reshape(-1)]
    ends = {"terminated": 0, "truncated": 0}
    step_wait = venv.step_wait

    def counted():
        obs, rewards, dones, infos = step_wait()
        for done, info in zip(dones, infos):
            if done:
                ends["truncated" if info.get("TimeLimit.truncated") else "terminated"] += 1
        return obs, rewards, dones, infos

    venv.step_wait = counted
    return venv, ends


def ppo_iteration(data):
    from stable_baselines3.common.vec_env import VecNormalize

    iterations, steps, envs, actions = data["noise"].shape
    epochs, n = data["order"].shape[1:]
    noise, order = data["noise"].reshape(-1, envs, actions), data["order"].reshape(-1, n)
    venv, ends = hopper(data, envs)
    env = VecNormalize(venv, norm_obs=True, norm_reward=False)
    model = PPO("MlpPolicy", env, n_steps=steps, batch_size=int(scalar(data, "batch_size")), n_epochs=epochs,
                gamma=scalar(data, "gamma"), gae_lambda=scalar(data, "gae_lambda"), ent_coef=0.0,
                learning_rate=scalar(data, "learning_rate"), clip_range=scalar(data, "clip_range"),
                vf_coef=scalar(data, "vf_coef"), max_grad_norm=scalar(data, "max_grad_norm"), device="cpu")
    load_ppo(model, data)
    distribution = model.policy.action_dist
    draws = iter(torch.from_numpy(noise.copy()))

    def sample():
        gaussian = distribution.distribution
        return gaussian.mean + gaussian.stddev * next(draws)

    distribution.sample = sample
    # Ours index the rollout time-major (t * envs + e); SB3's flattened buffer is env-major.
    permutations = iter((order % envs) * steps + order // envs)
    buffer = model.rollout_buffer
    buffer_get = type(buffer).get

    def get(batch_size=None):
        permutation, drawn = next(permutations), np.random.permutation
        np.random.permutation = lambda size: permutation
        try:
            yield from buffer_get(buffer, batch_size)
        finally:
            np.random.permutation = drawn

    buffer.get = get
    carried = Carried()
    model.learn(total_timesteps=iterations * steps * envs, callback=carried)
    out = {"w/" + ppo_name(name): t.detach().numpy() for name, t in model.policy.state_dict().items()}
    statistics = env.obs_rms
    out.update(obs_mean=statistics.mean, obs_var=statistics.var, obs_count=np.array([statistics.count]),
               terminated=np.array([ends["terminated"]]), truncated=np.array([ends["truncated"]]),
               carried=np.array([carried.count]))
    return out


class Carried(BaseCallback):
    """Counts the envs in mid-episode as each rollout starts (episodes that run across a rollout
    boundary; `learn` starts every env's episode afresh, so the first rollout adds none)."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _on_rollout_start(self):
        self.count += int((~self.model._last_episode_starts.astype(bool)).sum())

    def _on_step(self):
        return True


def td3_layers(data):
    return len([key for key in data.files if key.startswith("w/actor/actor.") and key.endswith(".weight")])


def td3_ours(layer, layers):
    return f"layer{layer}" if layer < layers - 1 else "out"


def critic_layers(data):
    return len([key for key in data.files if key.startswith("w/critic/critic.layer") and key.endswith("_weight")])


def load_critics(state, data):
    """Our critic ensembles ([critics, in, out] per layer) as SB3's `qf<k>` modules."""
    for net in ("critic", "critic_target"):
        for layer in range(critic_layers(data)):
            weight, bias = tensor(data, f"w/{net}/critic.layer{layer}_weight"), tensor(data, f"w/{net}/critic.layer{layer}_bias")
            for k in range(weight.shape[0]):
                state[f"{net}.qf{k}.{2 * layer}.weight"] = weight[k].T.contiguous()
                state[f"{net}.qf{k}.{2 * layer}.bias"] = bias[k, 0]


def dump_critics(out, after, data):
    for net in ("critic", "critic_target"):
        critics = data[f"w/{net}/critic.layer0_weight"].shape[0]
        for layer in range(critic_layers(data)):
            out[f"w/{net}/critic.layer{layer}_weight"] = np.stack(
                [after[f"{net}.qf{k}.{2 * layer}.weight"].T.numpy() for k in range(critics)])
            out[f"w/{net}/critic.layer{layer}_bias"] = np.stack(
                [after[f"{net}.qf{k}.{2 * layer}.bias"].numpy()[None, :] for k in range(critics)])


def td3_actor_names(data):
    """SB3's TD3 actor module -> ours, per layer."""
    layers = td3_layers(data)
    return [(f"mu.{2 * layer}", td3_ours(layer, layers)) for layer in range(layers)]


def load_td3(model, data):
    model.set_logger(Logger(folder=None, output_formats=[]))
    state = {}
    for net in ("actor", "actor_target"):
        for theirs, ours in td3_actor_names(data):
            for kind in ("weight", "bias"):
                state[f"{net}.{theirs}.{kind}"] = tensor(data, f"w/{net}/actor.{ours}.{kind}")
    load_critics(state, data)
    model.policy.load_state_dict(state)


def dump_td3(model, data):
    after = model.policy.state_dict()
    out = {}
    for net in ("actor", "actor_target"):
        for theirs, ours in td3_actor_names(data):
            for kind in ("weight", "bias"):
                out[f"w/{net}/actor.{ours}.{kind}"] = after[f"{net}.{theirs}.{kind}"].numpy()
    dump_critics(out, after, data)
    return out


def td3(data):
    indices = data["indices"]
    updates, batch = indices.shape
    hidden = [int(h) for h in data["hidden"].reshape(-1)]
    env = Shapes(data["obs"].shape[1], data["actions"].shape[1])
    model = TD3("MlpPolicy", env, learning_rate=scalar(data, "learning_rate"), batch_size=batch,
                tau=scalar(data, "tau"), gamma=scalar(data, "gamma"), policy_delay=int(scalar(data, "policy_delay")),
                target_policy_noise=0.0, policy_kwargs={"net_arch": hidden}, buffer_size=1, device="cpu")
    load_td3(model, data)
    replay = [tensor(data, "obs"), tensor(data, "actions"), tensor(data, "next_obs"),
              tensor(data, "terminated").view(-1, 1), tensor(data, "rewards").view(-1, 1)]
    batches = iter(indices)

    def sample(batch_size, env=None):
        i = torch.from_numpy(next(batches).copy())
        return ReplayBufferSamples(*(t[i] for t in replay))

    model.replay_buffer.sample = sample
    model.train(gradient_steps=updates, batch_size=batch)
    return dump_td3(model, data)


class Replayed(ActionNoise):
    """The exploration noise of SB3's `_sample_action`, each call the next row of ours."""

    def __init__(self, rows):
        super().__init__()
        self.rows = iter(rows)

    def __call__(self):
        return next(self.rows)

    def reset(self):
        pass


def replay_ours(model, data):
    """The warm-up's uniform actions and every update's minibatch rows from ours; returns the
    iterators, to check that each was used up."""
    warm, batches = iter(data["warmup_actions"]), iter(data["indices"])
    model.action_space.sample = lambda mask=None: next(warm)
    buffer = model.replay_buffer

    def sample(batch_size, env=None):
        return buffer._get_samples(np.asarray(next(batches), dtype=np.int64), env=env)

    buffer.sample = sample
    return [warm, batches]


def learn_with(model, steps, owner, name, replacement):
    original = getattr(owner, name)
    setattr(owner, name, replacement)
    try:
        model.learn(total_timesteps=steps)
    finally:
        setattr(owner, name, original)


def ended(out, ends, iterators):
    out.update(terminated=np.array([ends["terminated"]]), truncated=np.array([ends["truncated"]]),
               unused=np.array([sum(sum(1 for _ in i) for i in iterators)]))
    return out


def off_policy_settings(data):
    warmup = data["warmup_actions"].shape[0]
    updates, batch = data["indices"].shape
    return dict(learning_rate=scalar(data, "learning_rate"), buffer_size=warmup + updates, learning_starts=warmup,
                batch_size=batch, tau=scalar(data, "tau"), gamma=scalar(data, "gamma"), train_freq=1,
                gradient_steps=1, policy_kwargs={"net_arch": [int(h) for h in data["hidden"].reshape(-1)]},
                device="cpu")


def td3_run(data):
    warmup, action_dim = data["warmup_actions"].shape
    venv, ends = hopper(data)
    # SB3 adds the exploration noise to the warm-up's uniform actions too; ours (Fujimoto et
    # al.'s code) does not, so the warm-up rows of the replayed noise are 0.
    noise = np.concatenate([np.zeros((warmup, action_dim)), data["explore"] * scalar(data, "exploration_noise")])
    model = TD3("MlpPolicy", venv, policy_delay=int(scalar(data, "policy_delay")),
                target_policy_noise=scalar(data, "policy_noise"), target_noise_clip=scalar(data, "noise_clip"),
                action_noise=Replayed(noise.astype(np.float32)), **off_policy_settings(data))
    load_td3(model, data)
    iterators = replay_ours(model, data)
    # The target-policy smoothing noise (`TD3.train`'s `normal_`), each call the next of ours.
    smoothed = iter(torch.from_numpy(data["smoothing"].copy()))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return self.copy_(next(smoothed) * std + mean)

    learn_with(model, noise.shape[0], torch.Tensor, "normal_", normal_)
    return ended(dump_td3(model, data), ends, iterators + [smoothed, model.action_noise.rows])


# SAC: SB3's actor module -> ours (`SquashedGaussianActor`: body, mean, log_std).
def sac_actor_names(data):
    body = len([key for key in data.files if key.startswith("w/actor/actor.body.") and key.endswith(".weight")])
    names = [(f"latent_pi.{2 * layer}", f"body.layer{layer}") for layer in range(body - 1)]
    return names + [(f"latent_pi.{2 * (body - 1)}", "body.out"), ("mu", "mean"), ("log_std", "log_std")]


def sac_run(data):
    venv, ends = hopper(data)
    steps = data["warmup_actions"].shape[0] + data["explore"].shape[0]
    model = SAC("MlpPolicy", venv, ent_coef="auto_1.0", **off_policy_settings(data))
    model.set_logger(Logger(folder=None, output_formats=[]))
    state = {f"actor.{theirs}.{kind}": tensor(data, f"w/actor/actor.{ours}.{kind}")
             for theirs, ours in sac_actor_names(data) for kind in ("weight", "bias")}
    load_critics(state, data)
    model.policy.load_state_dict(state)
    with torch.no_grad():
        model.log_ent_coef.copy_(tensor(data, "w/alpha/log_alpha"))
    iterators = replay_ours(model, data)
    # Every Gaussian draw of SB3's SAC is a `Normal.rsample`: a step's exploration, then per
    # update the current observations' (actor and temperature losses) and the next ones' (target).
    rows = [torch.from_numpy(data[key][u].copy()) for u in range(data["explore"].shape[0])
            for key in ("explore", "current", "next")]
    draws = iter(rows)

    def rsample(self, sample_shape=torch.Size()):
        return self.loc + self.scale * next(draws)

    learn_with(model, steps, torch.distributions.Normal, "rsample", rsample)
    after = model.policy.state_dict()
    out = {f"w/actor/actor.{ours}.{kind}": after[f"actor.{theirs}.{kind}"].numpy()
           for theirs, ours in sac_actor_names(data) for kind in ("weight", "bias")}
    dump_critics(out, after, data)
    out["w/alpha/log_alpha"] = model.log_ent_coef.detach().numpy()
    return ended(out, ends, iterators + [draws])


def gae(data):
    from stable_baselines3.common.buffers import RolloutBuffer

    rewards, values = data["rewards"], data["values"]
    terminated, truncated = data["terminated"].astype(bool), data["truncated"].astype(bool)
    steps, envs = rewards.shape
    env = Shapes(1, 1)
    buffer = RolloutBuffer(steps, env.observation_space, env.action_space, device="cpu",
                           gae_lambda=scalar(data, "gae_lambda"), gamma=scalar(data, "gamma"), n_envs=envs)
    gamma = scalar(data, "gamma")
    starts = np.ones(envs, dtype=bool)
    for t in range(steps):
        # collect_rollouts: a truncated episode's reward takes gamma V(terminal observation).
        r = rewards[t] + gamma * data["final_values"][t] * truncated[t]
        buffer.add(np.zeros((envs, 1), np.float32), np.zeros((envs, 1), np.float32), r, starts,
                   torch.from_numpy(values[t].copy()), torch.zeros(envs))
        starts = terminated[t] | truncated[t]
    buffer.compute_returns_and_advantage(torch.from_numpy(data["last_values"].copy()), starts)
    return {"advantages": buffer.advantages, "returns": buffer.returns}


def main():
    algorithm, source, target = sys.argv[1:4]
    torch.set_num_threads(1)
    data = np.load(source)
    modes = {"ppo": ppo, "ppo_iteration": ppo_iteration, "td3": td3, "td3_run": td3_run, "sac_run": sac_run, "gae": gae}
    np.savez(target, **modes[algorithm](data))


if __name__ == "__main__":
    main()
