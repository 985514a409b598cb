//! Training jobs: the catalog of algorithms and environments, the request a client submits, its
//! validation (every error names its field), and the run itself (single- or multi-agent).

use super::budget;
use crate::drl;
use crate::drl::env::Envs;
use crate::drl::env::{self, ActionSpace};
use crate::drl::hooks::RunHooks;
use crate::drl::marl;
use crate::problems::ProblemError;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;
use utoipa::ToSchema;

/// A deep-RL algorithm as `GET /v1/algorithms` lists it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AlgorithmInfo {
    pub name: String,
    /// `discrete`, `continuous` or `discrete|continuous`.
    pub action_space: String,
    /// off_policy, on_policy, value_decomposition, centralized_critic.
    pub family: String,
    pub multi_agent: bool,
    /// Envs stepped as one batch.
    pub num_envs: usize,
    /// Every hyperparameter with its default (override any of them in `hyperparameters`).
    #[schema(value_type = Object)]
    pub hyperparameters: serde_json::Value,
    /// Constraints the server checks on overrides, by hyperparameter.
    #[schema(value_type = Object)]
    pub ranges: serde_json::Value,
}

/// An environment as `GET /v1/envs` lists it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EnvInfo {
    pub id: String,
    pub multi_agent: bool,
    pub observation_dim: usize,
    /// `{"kind": "discrete", "n": ..}` or `{"kind": "continuous", "low": [..], "high": [..]}`.
    #[schema(value_type = Object)]
    pub action_space: serde_json::Value,
    /// Multi-agent envs: agents and global-state width.
    pub agents: Option<usize>,
    pub state_dim: Option<usize>,
}

/// Every algorithm of the table, as `GET /v1/algorithms` lists it.
pub fn algorithms() -> Vec<AlgorithmInfo> {
    drl::algorithms::all()
        .iter()
        .map(|a| AlgorithmInfo {
            name: a.name.to_string(),
            action_space: a.action_spaces.join("|"),
            family: a.family.to_string(),
            multi_agent: a.multi_agent,
            num_envs: a.num_envs,
            hyperparameters: (a.defaults)(),
            ranges: drl::hyper::ranges_schema(&(a.ranges)()),
        })
        .collect()
}

pub fn envs() -> Vec<EnvInfo> {
    let catalog = crate::problems::envs(Default::default());
    let mut list: Vec<EnvInfo> = catalog
        .ids()
        .into_iter()
        .map(|id| {
            let e = catalog.make(id, 1).expect("listed");
            EnvInfo {
                id: id.to_string(),
                multi_agent: false,
                observation_dim: e.observation_dim(),
                action_space: serde_json::to_value(e.action_space()).unwrap_or_default(),
                agents: None,
                state_dim: None,
            }
        })
        .collect();
    list.extend(marl::ENV_IDS.iter().map(|id| {
        let e = marl::make(id, 1).expect("listed");
        EnvInfo {
            id: id.to_string(),
            multi_agent: true,
            observation_dim: e.observation_dim(),
            action_space: serde_json::to_value(e.action_space()).unwrap_or_default(),
            agents: Some(e.num_agents()),
            state_dim: Some(e.state_dim()),
        }
    }));
    list
}

/// `POST /v1/training/jobs`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrainingRequest {
    /// See `GET /v1/algorithms`.
    pub algorithm: String,
    /// See `GET /v1/envs`; single-agent algorithms take single-agent envs, multi-agent ones
    /// multi-agent envs.
    pub env: String,
    /// Env-step budget (summed over the batch of envs).
    pub total_steps: usize,
    #[serde(default)]
    pub seed: u64,
    /// Stop early once an evaluation (confirmed over 100 more episodes) reaches this return
    /// (single-agent only).
    #[serde(default)]
    pub target_return: Option<f64>,
    /// Overrides of the algorithm's defaults, by name (see `GET /v1/algorithms`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub hyperparameters: Option<serde_json::Value>,
    /// Evaluate every this many env steps (default: a tenth of the budget).
    #[serde(default)]
    pub eval_every: Option<usize>,
    /// Deterministic episodes per evaluation (default 10).
    #[serde(default)]
    pub eval_episodes: Option<usize>,
    /// An OR-Gym env's parameters changed from the id's, by field (its solve endpoint's
    /// instance schema, plus the observation options `node_features` for TSP and
    /// `planning_features` for Knapsack-v3, InvManagement and PortfolioOpt); StockTrading-v0's
    /// market and period (`stocks`, `train_days`, `test_days`, `data_seed`, `split`, `hmax`,
    /// costs); for a
    /// `gymnasium:<id>` env, `gymnasium.make`'s keyword arguments (also accepted as
    /// `env_kwargs`); single-agent only.
    #[serde(default, alias = "env_kwargs")]
    #[schema(value_type = Option<Object>)]
    pub env_config: Option<serde_json::Value>,
}

/// Caps on what a training request may ask for.
#[derive(Debug, Clone)]
pub struct TrainingLimits {
    pub max_total_steps: usize,
    pub max_eval_episodes: usize,
    /// Parameter and memory budget of one run (see `budget`).
    pub resources: budget::ResourceLimits,
}

impl Default for TrainingLimits {
    fn default() -> Self {
        TrainingLimits { max_total_steps: 10_000_000, max_eval_episodes: 1000, resources: Default::default() }
    }
}

fn space_kind(space: &ActionSpace) -> &'static str {
    match space {
        ActionSpace::Discrete { .. } => "discrete",
        ActionSpace::Continuous { .. } => "continuous",
    }
}

impl TrainingRequest {
    pub fn is_multi_agent(&self) -> bool {
        marl::run::is_multi_agent(&self.algorithm)
    }

    pub fn eval_every(&self) -> usize {
        self.eval_every.unwrap_or((self.total_steps / 10).max(1))
    }

    /// Checks every field; the error names the first bad one. A `gymnasium:` env is made once,
    /// its Python run as `bridge` says.
    pub fn validate(&self, limits: &TrainingLimits, envs: &Envs) -> Result<(), ProblemError> {
        let algorithm = drl::algorithms::find(&self.algorithm)
            .map_err(|error| ProblemError::invalid("algorithm", format!("{error:#}")))?;
        // Whether the env took `env_config` (OR-Gym envs do; others and multi-agent ones do not).
        let mut configured_env = false;
        let env_space = if algorithm.multi_agent {
            marl::make(&self.env, 1).map(|e| {
                let shape = (e.observation_dim(), e.num_agents(), e.state_dim(), e.episode_limit());
                (e.action_space(), shape)
            })
        } else if env::gymnasium::gymnasium_id(&self.env).is_some() {
            // Starts the env in Python once: an unknown id or a missing package is this request's
            // 422, not a failed job.
            let kwargs = self.env_config.clone().unwrap_or_default();
            let e = envs
                .make_configured(&self.env, 1, &kwargs)
                .map_err(|error| ProblemError::invalid("env", format!("{}: {error:#}", self.env)))?;
            configured_env = true;
            Some((e.action_space(), (e.observation_dim(), 1, 0, 0)))
        } else {
            let configured = self.env_config.as_ref().and_then(|c| envs.configure(&self.env, 1, c));
            match configured {
                Some(configured) => {
                    let e = configured.map_err(|e| {
                        let field = if e.field == "env_config" {
                            e.field.to_string()
                        } else {
                            format!("env_config.{}", e.field)
                        };
                        if e.too_large {
                            ProblemError::too_large(&field, e.message)
                        } else {
                            ProblemError::invalid(&field, e.message)
                        }
                    })?;
                    configured_env = true;
                    Some((e.action_space(), (e.observation_dim(), 1, 0, 0)))
                }
                None => envs.make(&self.env, 1).map(|e| (e.action_space(), (e.observation_dim(), 1, 0, 0))),
            }
        };
        if self.env_config.is_some() && !configured_env {
            return Err(ProblemError::invalid("env_config", format!("{} takes no env parameters", self.env)));
        }
        let (space, (observation_dim, agents, state_dim, episode_steps)) = env_space.ok_or_else(|| {
            let ids = if algorithm.multi_agent { marl::ENV_IDS.to_vec() } else { envs.ids() };
            ProblemError::invalid(
                "env",
                format!("{} for {}", crate::suggest::unknown("env", &self.env, ids.iter().copied()), self.algorithm),
            )
        })?;
        if !algorithm.takes(&space) {
            return Err(ProblemError::invalid(
                "env",
                format!(
                    "{} needs {} actions; {} has {} actions",
                    self.algorithm,
                    algorithm.action_spaces.join("|"),
                    self.env,
                    space_kind(&space)
                ),
            ));
        }
        crate::problems::check_seed(self.seed)?;
        if self.total_steps == 0 || self.total_steps > limits.max_total_steps {
            return Err(ProblemError::invalid("total_steps", format!("expected 1..={}", limits.max_total_steps)));
        }
        if self.eval_every == Some(0) {
            return Err(ProblemError::invalid("eval_every", "expected at least 1"));
        }
        if let Some(e) = self.eval_episodes {
            if e == 0 || e > limits.max_eval_episodes {
                return Err(ProblemError::invalid(
                    "eval_episodes",
                    format!("expected 1..={}", limits.max_eval_episodes),
                ));
            }
        }
        if self.target_return.is_some_and(|t| !t.is_finite()) {
            return Err(ProblemError::invalid("target_return", "expected a finite number"));
        }
        if self.target_return.is_some() && algorithm.multi_agent {
            return Err(ProblemError::invalid("target_return", "multi-agent runs train for their step budget"));
        }
        // Each override against its declared range, then the whole configuration as the
        // algorithm's config type: what the run will use.
        if let Some(overrides) = &self.hyperparameters {
            let overrides =
                overrides.as_object().ok_or_else(|| ProblemError::invalid("hyperparameters", "expected an object"))?;
            for (key, value) in overrides {
                let field = format!("hyperparameters.{key}");
                let range = algorithm.range(key).ok_or_else(|| {
                    ProblemError::invalid(&field, format!("{} has no hyperparameter '{key}'", self.algorithm))
                })?;
                range.check(value).map_err(|message| ProblemError::invalid(&field, message))?;
            }
        }
        let overrides = self.hyperparameters.clone().unwrap_or(serde_json::Value::Null);
        let merged = algorithm
            .configure(&overrides)
            .map_err(|error| ProblemError::invalid("hyperparameters", format!("{error:#}")))?;
        let action_dim = match &space {
            ActionSpace::Discrete { n } => *n,
            ActionSpace::Continuous { low, .. } => low.len(),
        };
        let shape = budget::EnvShape { observation_dim, action_dim, agents, state_dim, episode_steps };
        budget::check(&merged, shape, algorithm.num_envs, &limits.resources)
    }

    /// Runs the job in `run_dir` (blocking); with `resume` it continues the checkpoint there
    /// exactly. Returns the outcome summary.
    pub fn run(&self, run_dir: &Path, resume: bool, hooks: RunHooks, envs: &Envs) -> Result<(serde_json::Value, bool)> {
        let request = drl::TrainRequest {
            algorithm: self.algorithm.clone(),
            env: self.env.clone(),
            total_steps: self.total_steps,
            seed: self.seed,
            eval_every: Some(self.eval_every()),
            eval_episodes: Some(self.eval_episodes.unwrap_or(10)),
            target_return: self.target_return,
            overrides: self.hyperparameters.clone().unwrap_or_else(|| json!({})),
            env_config: self.env_config.clone().unwrap_or(serde_json::Value::Null),
            out_dir: Some(run_dir.to_path_buf()),
            resume,
            hooks,
            envs: envs.clone(),
            ..Default::default()
        };
        let summary = drl::train(&request)?;
        let result = json!({
            "steps": summary.steps, "wall_s": summary.wall_s, "train_s": summary.train_s,
            "final_return": summary.final_return(), "reached_target_at": summary.reached_target_at,
        });
        Ok((result, summary.cancelled))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: serde_json::Value) -> Result<(), ProblemError> {
        serde_json::from_value::<TrainingRequest>(value)
            .unwrap()
            .validate(&TrainingLimits::default(), &crate::problems::envs(Default::default()))
    }

    #[test]
    fn every_bad_field_is_named() {
        for (value, field) in [
            (json!({"algorithm": "nope", "env": "CartPole-v1", "total_steps": 10}), "algorithm"),
            (json!({"algorithm": "ppo_discrete", "env": "Nope-v0", "total_steps": 10}), "env"),
            (json!({"algorithm": "sac", "env": "CartPole-v1", "total_steps": 10}), "env"),
            (json!({"algorithm": "qmix", "env": "CartPole-v1", "total_steps": 10}), "env"),
            (json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 0}), "total_steps"),
            (
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 10, "eval_episodes": 0}),
                "eval_episodes",
            ),
            (
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 10, "hyperparameters": {"bogus": 1}}),
                "hyperparameters.bogus",
            ),
            (
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 10, "hyperparameters": {"gamma": 2.0}}),
                "hyperparameters.gamma",
            ),
            (
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 10, "hyperparameters": {"gamma": "x"}}),
                "hyperparameters.gamma",
            ),
            (
                json!({"algorithm": "mappo", "env": "simple_spread", "total_steps": 10, "target_return": 1.0}),
                "target_return",
            ),
            (
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 10, "env_config": {"nodes": 9}}),
                "env_config",
            ),
            (
                json!({"algorithm": "ppo_discrete", "env": "TSP-v1", "total_steps": 10, "env_config": {"nodes": 2}}),
                "env_config.nodes",
            ),
            (
                json!({"algorithm": "ppo_discrete", "env": "TSP-v1", "total_steps": 10, "env_config": {"bogus": 1}}),
                "env_config",
            ),
            (json!({"algorithm": "ppo_discrete", "env": "TSP-v1", "total_steps": 10, "env_config": [1]}), "env_config"),
        ] {
            let error = request(value.clone()).expect_err("rejected");
            assert_eq!(error.field(), Some(field), "{value}: {error}");
        }
        assert!(request(json!({"algorithm": "qmix", "env": "two_step", "total_steps": 10, "hyperparameters": {"learning_rate": 0.001}})).is_ok());
        let tsp = json!({"algorithm": "ppo_discrete", "env": "TSP-v1", "total_steps": 10, "env_config": {"node_features": true, "nodes": 80}});
        assert!(request(tsp).is_ok());
        let huge =
            json!({"algorithm": "ppo_discrete", "env": "TSP-v1", "total_steps": 10, "env_config": {"nodes": 100000}});
        assert!(matches!(request(huge), Err(ProblemError::TooLarge { .. })), "a size limit is a 413");
        assert_eq!(algorithms().len(), drl::algorithms::all().len());
        assert!(envs().iter().any(|e| e.id == "simple_spread" && e.agents == Some(3)));
    }

    /// Envs whose observation is at most this wide; TSP-v0's 2,501 columns (the reference's
    /// adjacency matrix) make an off-policy algorithm's default replay buffer need about 2 GB.
    const ORDINARY_OBSERVATION: usize = 1_000;

    #[test]
    fn every_algorithm_with_its_defaults_fits_a_quarter_of_the_default_budget_on_every_env() {
        let defaults = budget::ResourceLimits::default();
        let tight = TrainingLimits {
            resources: budget::ResourceLimits {
                max_parameters: defaults.max_parameters / 4,
                max_memory_bytes: defaults.max_memory_bytes / 4,
            },
            ..TrainingLimits::default()
        };
        let mut checked = 0;
        for algorithm in algorithms() {
            for env in envs().iter().filter(|e| e.multi_agent == algorithm.multi_agent) {
                let kind = env.action_space["kind"].as_str().unwrap();
                if !algorithm.action_space.split('|').any(|k| k == kind) {
                    continue;
                }
                let value = json!({"algorithm": algorithm.name, "env": env.id, "total_steps": 10});
                let request: TrainingRequest = serde_json::from_value(value).unwrap();
                if env.observation_dim > ORDINARY_OBSERVATION {
                    // Refused before any work, naming the buffer to shrink, or within the budget.
                    match request.validate(&tight, &crate::problems::envs(Default::default())) {
                        Ok(_) => {}
                        Err(crate::problems::ProblemError::Invalid { field, .. }) => {
                            assert_eq!(field, "hyperparameters.buffer_size", "{} on {}", algorithm.name, env.id)
                        }
                        Err(other) => panic!("{} on {}: {other:?}", algorithm.name, env.id),
                    }
                    continue;
                }
                assert!(
                    request.validate(&tight, &crate::problems::envs(Default::default())).is_ok(),
                    "{} on {}: {:?}",
                    algorithm.name,
                    env.id,
                    request.validate(&tight, &crate::problems::envs(Default::default()))
                );
                checked += 1;
            }
        }
        assert!(checked >= algorithms().len(), "{checked}");
    }
}
