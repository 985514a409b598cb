//! The algorithm table: one row per algorithm, single- and multi-agent, with its name, the action
//! spaces it takes, its family, the batch of envs it steps, its config (defaults and the ranges
//! declared beside the config's fields) and its builder. A new algorithm is one file (its agent
//! or preset) plus one row here; the CLI, the job service, `GET /v1/algorithms`, checkpoints and
//! the budget check all read this table.

use super::agents::{a2c, ddpg, dqn, ppo, redq, sac, td3, Agent};
use super::env::{ActionSpace, ObservationLayout};
use super::hyper::{Hyperparameters, Range};
use super::marl::run::MultiAgentLearner;
use super::marl::{maddpg, mappo, matd3, qmix, vdn};
use super::random::seeded;
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tch::Device;

/// What a builder needs to know about the env it will train on.
#[derive(Debug, Clone)]
pub struct EnvSpec {
    pub id: String,
    pub observation_dim: usize,
    /// Every agent's action space (the same for all agents).
    pub action_space: ActionSpace,
    /// Multi-agent envs: agents, global-state width, episode limit (1, 0, 0 otherwise).
    pub agents: usize,
    pub state_dim: usize,
    pub episode_limit: usize,
    /// Where an observation's mask and item blocks are (single-agent envs that have them).
    pub layout: ObservationLayout,
}

impl EnvSpec {
    fn discrete(&self, algorithm: &str) -> Result<usize> {
        match &self.action_space {
            ActionSpace::Discrete { n } => Ok(*n),
            ActionSpace::Continuous { .. } => bail!("{algorithm} needs discrete actions; {} is continuous", self.id),
        }
    }

    fn continuous(&self, algorithm: &str) -> Result<(&[f32], &[f32])> {
        match &self.action_space {
            ActionSpace::Continuous { low, high } => Ok((low, high)),
            ActionSpace::Discrete { .. } => bail!("{algorithm} needs continuous actions; {} is discrete", self.id),
        }
    }
}

/// A built agent or multi-agent learner.
pub enum Learner {
    Single(Agent),
    Multi(Box<dyn MultiAgentLearner>),
}

pub struct Algorithm {
    pub name: &'static str,
    /// `discrete` and/or `continuous`.
    pub action_spaces: &'static [&'static str],
    /// off_policy, on_policy, value_decomposition, centralized_critic.
    pub family: &'static str,
    pub multi_agent: bool,
    /// Envs stepped as one batch.
    pub num_envs: usize,
    /// The config's defaults as JSON (what overrides patch field by field).
    pub defaults: fn() -> Value,
    pub ranges: fn() -> Vec<(&'static str, Range)>,
    /// Deserializes a whole configuration as the config type (integers where integers go).
    pub check: fn(&Value) -> Result<()>,
    /// Builds the agent from a whole configuration; initial weights from `seed`.
    pub build: fn(&Value, &EnvSpec, Device, u64) -> Result<Learner>,
}

fn parse<T: Hyperparameters>(config: &Value) -> Result<T> {
    Ok(serde_json::from_value(config.clone())?)
}

fn check<T: Hyperparameters>(config: &Value) -> Result<()> {
    parse::<T>(config).map(drop)
}

fn dqn_row(name: &'static str, preset: fn() -> Value) -> Algorithm {
    Algorithm {
        name,
        action_spaces: &["discrete"],
        family: "off_policy",
        multi_agent: false,
        num_envs: 1,
        defaults: preset,
        ranges: dqn::DqnConfig::ranges,
        check: check::<dqn::DqnConfig>,
        build: |config, env, device, seed| {
            let (config, actions) = (parse(config)?, env.discrete("dqn")?);
            let agent = seeded(seed, || dqn::Dqn::new(config, env.observation_dim, actions, device, seed));
            Ok(Learner::Single(Agent::OffPolicy(Box::new(agent))))
        },
    }
}

fn td3_row(name: &'static str, preset: fn() -> Value) -> Algorithm {
    Algorithm {
        name,
        action_spaces: &["continuous"],
        family: "off_policy",
        multi_agent: false,
        num_envs: 1,
        defaults: preset,
        ranges: td3::Td3Config::ranges,
        check: check::<td3::Td3Config>,
        build: |config, env, device, seed| {
            let (config, (low, high)) = (parse(config)?, env.continuous("td3")?);
            let agent = seeded(seed, || td3::Td3::new(config, env.observation_dim, low, high, device, seed));
            Ok(Learner::Single(Agent::OffPolicy(Box::new(agent))))
        },
    }
}

fn sac_row(name: &'static str, preset: fn() -> Value) -> Algorithm {
    Algorithm {
        name,
        action_spaces: &["continuous"],
        family: "off_policy",
        multi_agent: false,
        num_envs: 1,
        defaults: preset,
        ranges: sac::SacConfig::ranges,
        check: check::<sac::SacConfig>,
        build: |config, env, device, seed| {
            let (config, (low, high)) = (parse(config)?, env.continuous("sac")?);
            let agent = seeded(seed, || sac::Sac::new(config, env.observation_dim, low, high, device, seed));
            Ok(Learner::Single(Agent::OffPolicy(Box::new(agent))))
        },
    }
}

/// PPO and A2C share the agent; `space` picks the policy head.
fn ppo_row(name: &'static str, space: &'static str, num_envs: usize, preset: fn() -> Value) -> Algorithm {
    Algorithm {
        name,
        action_spaces: if space == "discrete" { &["discrete"] } else { &["continuous"] },
        family: "on_policy",
        multi_agent: false,
        num_envs,
        defaults: preset,
        ranges: ppo::PpoConfig::ranges,
        check: check::<ppo::PpoConfig>,
        build: |config, env, device, seed| {
            let config: ppo::PpoConfig = parse(config)?;
            let (width, discrete) = match &env.action_space {
                ActionSpace::Discrete { n } => (1, Some(*n)),
                ActionSpace::Continuous { low, .. } => (low.len(), None),
            };
            if config.normalize_observations && env.layout.action_mask.is_some() {
                bail!("{}'s observations carry an action mask: normalize_observations would blur it", env.id);
            }
            let layout = &env.layout;
            let agent =
                seeded(seed, || ppo::Ppo::new(config, env.observation_dim, width, discrete, layout, device, seed));
            Ok(Learner::Single(Agent::OnPolicy(Box::new(agent))))
        },
    }
}

fn qmix_row(name: &'static str, preset: fn() -> Value) -> Algorithm {
    Algorithm {
        name,
        action_spaces: &["discrete"],
        family: "value_decomposition",
        multi_agent: true,
        num_envs: 8,
        defaults: preset,
        ranges: qmix::QmixConfig::ranges,
        check: check::<qmix::QmixConfig>,
        build: |config, env, device, seed| {
            let (config, actions) = (parse(config)?, env.discrete("qmix")?);
            let shape = (env.agents, env.observation_dim, env.state_dim, actions);
            let learner = seeded(seed, || qmix::Qmix::new(config, shape, env.episode_limit, device, seed));
            Ok(Learner::Multi(Box::new(learner)))
        },
    }
}

fn maddpg_row(name: &'static str, preset: fn() -> Value) -> Algorithm {
    Algorithm {
        name,
        action_spaces: &["discrete", "continuous"],
        family: "centralized_critic",
        multi_agent: true,
        num_envs: 8,
        defaults: preset,
        ranges: maddpg::MaddpgConfig::ranges,
        check: check::<maddpg::MaddpgConfig>,
        build: |config, env, device, seed| {
            let config = parse(config)?;
            let shape = (env.agents, env.observation_dim, env.state_dim);
            let learner = seeded(seed, || maddpg::Maddpg::new(config, shape, &env.action_space, device, seed));
            Ok(Learner::Multi(Box::new(learner)))
        },
    }
}

/// Every algorithm, single-agent first.
pub fn all() -> &'static [Algorithm] {
    static TABLE: std::sync::OnceLock<Vec<Algorithm>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        vec![
            dqn_row("dqn", || json!(dqn::DqnConfig::new(false, false))),
            dqn_row("double_dqn", || json!(dqn::DqnConfig::new(true, false))),
            dqn_row("d3qn", || json!(dqn::DqnConfig::new(true, true))),
            td3_row("ddpg", || json!(ddpg::config())),
            td3_row("td3", || json!(td3::Td3Config::td3())),
            sac_row("sac", || json!(sac::SacConfig::sac())),
            sac_row("redq", || json!(redq::config())),
            ppo_row("a2c", "continuous", 8, || json!(a2c::continuous())),
            ppo_row("ppo", "continuous", 4, || json!(ppo::PpoConfig::ppo_continuous())),
            ppo_row("a2c_discrete", "discrete", 8, || json!(a2c::discrete())),
            ppo_row("ppo_discrete", "discrete", 8, || json!(ppo::PpoConfig::ppo_discrete())),
            qmix_row("vdn", || json!(vdn::config())),
            qmix_row("qmix", || json!(qmix::QmixConfig::new(qmix::Mixer::Qmix))),
            maddpg_row("maddpg", || json!(maddpg::MaddpgConfig::maddpg())),
            maddpg_row("matd3", || json!(matd3::config())),
            Algorithm {
                name: "mappo",
                action_spaces: &["discrete", "continuous"],
                family: "on_policy",
                multi_agent: true,
                num_envs: 32,
                defaults: || json!(mappo::MappoConfig::default()),
                ranges: mappo::MappoConfig::ranges,
                check: check::<mappo::MappoConfig>,
                build: |config, env, device, seed| {
                    let config = parse(config)?;
                    let shape = (env.agents, env.observation_dim, env.state_dim);
                    let limit = env.episode_limit;
                    let learner =
                        seeded(seed, || mappo::Mappo::new(config, shape, &env.action_space, limit, device, seed));
                    Ok(Learner::Multi(Box::new(learner)))
                },
            },
        ]
    })
}

/// The row named `name`; the error suggests the closest name.
pub fn find(name: &str) -> Result<&'static Algorithm> {
    all()
        .iter()
        .find(|a| a.name == name)
        .with_context(|| crate::suggest::unknown("algorithm", name, all().iter().map(|a| a.name)))
}

pub fn names() -> Vec<&'static str> {
    all().iter().map(|a| a.name).collect()
}

impl Algorithm {
    /// The defaults with `overrides` applied (an object, by field name); unknown fields are an error.
    pub fn configure(&self, overrides: &Value) -> Result<Value> {
        let mut config = (self.defaults)();
        match overrides {
            Value::Null => {}
            Value::Object(patch) => {
                for (key, value) in patch {
                    if config.get(key).is_none() {
                        bail!("{} has no hyperparameter '{key}'", self.name);
                    }
                    config[key] = value.clone();
                }
            }
            _ => bail!("hyperparameters: expected an object"),
        }
        (self.check)(&config)?;
        Ok(config)
    }

    pub fn range(&self, field: &str) -> Option<Range> {
        (self.ranges)().into_iter().find(|(name, _)| *name == field).map(|(_, range)| range)
    }

    /// An error naming both sides when `env_id`'s action space is not one this algorithm takes.
    pub fn check_takes(&self, env_id: &str, space: &ActionSpace) -> Result<()> {
        if !self.takes(space) {
            bail!("{} needs {} actions; {env_id} has {space:?}", self.name, self.action_spaces.join("|"));
        }
        Ok(())
    }

    pub fn takes(&self, space: &ActionSpace) -> bool {
        let kind = match space {
            ActionSpace::Discrete { .. } => "discrete",
            ActionSpace::Continuous { .. } => "continuous",
        };
        self.action_spaces.contains(&kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_every_config_has_one_range_and_its_default_is_in_it() {
        for algorithm in all() {
            let defaults = (algorithm.defaults)();
            let fields: Vec<&String> = defaults.as_object().expect("an object").keys().collect();
            let ranges = (algorithm.ranges)();
            for field in &fields {
                let declared: Vec<_> = ranges.iter().filter(|(name, _)| name == field).collect();
                assert_eq!(declared.len(), 1, "{}: {field} declared {} times", algorithm.name, declared.len());
                let range = declared[0].1;
                assert!(
                    range.check(&defaults[field.as_str()]).is_ok(),
                    "{}: default of {field} outside {range:?}",
                    algorithm.name
                );
            }
            assert_eq!(ranges.len(), fields.len(), "{}: a range names no field", algorithm.name);
        }
    }

    #[test]
    fn names_are_unique_and_the_issue_s_algorithms_are_rows() {
        let mut names = names();
        for wanted in ["a2c", "ddpg", "redq", "vdn", "matd3", "ppo_discrete", "mappo", "d3qn"] {
            assert!(names.contains(&wanted), "{wanted}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all().len());
        assert!(find("ppo-discrete").err().unwrap().to_string().contains("ppo_discrete"));
    }

    #[test]
    fn every_off_policy_algorithm_accepts_the_schedule_by_name() {
        for algorithm in all().iter().filter(|a| a.family == "off_policy") {
            let config = algorithm.configure(&json!({"learning_starts": 7, "buffer_size": 500})).unwrap();
            assert_eq!((config["learning_starts"].as_u64(), config["buffer_size"].as_u64()), (Some(7), Some(500)));
        }
        assert!(find("dqn").unwrap().configure(&json!({"bogus": 1})).is_err());
    }

    #[test]
    fn every_agent_is_built_from_name_and_json_and_takes_live_hyperparameter_changes() {
        use crate::drl::{env, marl};
        for algorithm in all() {
            let spec = if algorithm.multi_agent {
                let id = if algorithm.takes(&ActionSpace::Discrete { n: 2 }) {
                    "simple_spread"
                } else {
                    "simple_spread_continuous"
                };
                marl::run::env_spec(id, marl::make(id, 1).unwrap().as_ref())
            } else {
                let id = if algorithm.action_spaces.contains(&"discrete") { "CartPole-v1" } else { "Pendulum-v1" };
                let e = env::make(id, 1).unwrap();
                EnvSpec {
                    id: id.into(),
                    observation_dim: e.observation_dim(),
                    action_space: e.action_space(),
                    agents: 1,
                    state_dim: 0,
                    episode_limit: 0,
                    layout: e.layout(),
                }
            };
            let config = algorithm.configure(&json!({})).unwrap();
            let mut learner = (algorithm.build)(&config, &spec, Device::Cpu, 1).unwrap();
            let state: &mut dyn super::super::agents::AgentState = match &mut learner {
                Learner::Single(agent) => agent.state(),
                Learner::Multi(learner) => learner.as_mut(),
            };
            let rate = if config.get("learning_rate").is_some() { "learning_rate" } else { "actor_learning_rate" };
            state.set_hyperparameters(&json!({rate: 1e-5})).unwrap();
            let refused = state.set_hyperparameters(&json!({"hidden": [3]}));
            assert!(refused.unwrap_err().to_string().contains("new run"), "{}", algorithm.name);
            assert!(state.set_hyperparameters(&json!({"bogus": 1})).is_err(), "{}", algorithm.name);
        }
    }
}
