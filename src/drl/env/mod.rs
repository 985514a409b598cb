//! Vectorized environments: a batch of B copies stepped together, observations and rewards as
//! flat `f32` buffers (one row per env), terminated and truncated kept apart, auto-reset.
//! Native ports of Gymnasium's classic-control tasks, with identical dynamics, rewards,
//! termination and time limits (tests replay trajectories recorded from gymnasium).

pub mod acrobot;
pub mod cartpole;
pub mod classic;
/// Any Gymnasium environment through Python worker processes (`gymnasium:<id>`).
pub mod gymnasium;
pub mod mountain_car;
pub mod pendulum;
pub mod pool;
/// FinRL's stock-trading env on a generated price set.
pub mod stock_trading;
/// CartPole and Pendulum as batched tensor ops, for envs that stay on an accelerator.
pub mod tensor_classic;

pub use classic::ClassicVecEnv;

use serde::Serialize;

/// An action space.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ActionSpace {
    Discrete { n: usize },
    Continuous { low: Vec<f32>, high: Vec<f32> },
}

impl ActionSpace {
    /// Columns of one action row: 1 for discrete (the index as f32), the dimension otherwise.
    pub fn width(&self) -> usize {
        match self {
            ActionSpace::Discrete { .. } => 1,
            ActionSpace::Continuous { low, .. } => low.len(),
        }
    }
}

/// Where structured parts of an observation row sit, for the networks that use them (a masked
/// categorical head, a per-item scorer); the default is a plain vector.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ObservationLayout {
    /// The first of the action mask's columns (one per discrete action, 1 = allowed).
    pub action_mask: Option<usize>,
    /// A divisor per column that puts it in the env's natural units (empty: none).
    pub scale: Vec<f32>,
    pub items: Option<ItemLayout>,
}

/// Observations that list items, one discrete action per item (action i picks item i).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemLayout {
    pub count: usize,
    /// The first column of each per-item feature block (`count` columns each).
    pub features: Vec<usize>,
    /// Columns every item sees (the load, the capacity).
    pub globals: Vec<usize>,
}

/// A parameter out of range: the field, why, and whether it is a size limit (HTTP 413).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub field: &'static str,
    pub message: String,
    pub too_large: bool,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// What a batch step returns; row i belongs to env i.
#[derive(Debug, Clone, Default)]
pub struct StepBatch {
    /// Observations after the step; for an env that finished, the first observation of its next
    /// episode (auto-reset), while `final_observations` keeps the last one.
    pub observations: Vec<f32>,
    pub rewards: Vec<f32>,
    /// The task ended (failure or success): bootstrapping stops here.
    pub terminated: Vec<bool>,
    /// The time limit cut the episode: bootstrapping continues from `final_observations`.
    pub truncated: Vec<bool>,
    /// Last observation of each env that finished this step (row of zeros otherwise).
    pub final_observations: Vec<f32>,
}

impl StepBatch {
    /// All zeros and no episode ended, for `envs` rows of `observation_dim` columns.
    pub fn zeroed(envs: usize, observation_dim: usize) -> Self {
        StepBatch {
            observations: vec![0.0; envs * observation_dim],
            rewards: vec![0.0; envs],
            terminated: vec![false; envs],
            truncated: vec![false; envs],
            final_observations: vec![0.0; envs * observation_dim],
        }
    }
}

/// Each env's first-episode return (env i of the batch reset with `seed`), `act` choosing every
/// env's actions from the batch and its observations; the batch steps until every env has
/// finished one episode (what auto-reset envs earn after that is not counted).
pub fn first_episode_returns<V: VecEnv + ?Sized>(
    env: &mut V,
    seed: u64,
    act: &mut dyn FnMut(&V, &[f32]) -> Vec<f32>,
) -> Vec<f64> {
    let episodes = env.num_envs();
    let mut obs = env.reset(seed);
    let mut returns = vec![0.0f64; episodes];
    let mut finished = vec![false; episodes];
    while finished.iter().any(|f| !f) {
        let actions = act(env, &obs);
        let step = env.step(&actions);
        for i in 0..episodes {
            if !finished[i] {
                returns[i] += f64::from(step.rewards[i]);
                finished[i] = step.terminated[i] || step.truncated[i];
            }
        }
        obs = step.observations;
    }
    returns
}

/// A batch of B environments.
pub trait VecEnv: Send {
    fn num_envs(&self) -> usize;
    fn observation_dim(&self) -> usize;
    fn action_space(&self) -> ActionSpace;
    /// Where the mask and item blocks of a row are, if it has any.
    fn layout(&self) -> ObservationLayout {
        ObservationLayout::default()
    }
    /// Resets every env; env i draws from a stream derived from (seed, i). Returns [B, obs_dim].
    fn reset(&mut self, seed: u64) -> Vec<f32>;
    /// `actions` is [B, action width] (discrete: the index as f32).
    fn step(&mut self, actions: &[f32]) -> StepBatch;
    /// Every env's physical state, episode clock and random stream, for an exact checkpoint.
    fn save_state(&self) -> anyhow::Result<serde_json::Value> {
        anyhow::bail!("this environment cannot be checkpointed")
    }
    fn load_state(&mut self, _state: &serde_json::Value) -> anyhow::Result<()> {
        anyhow::bail!("this environment cannot be checkpointed")
    }
    /// Whether `load_state` restores episodes in flight; when not (a bridged simulator), a
    /// resumed run resets the batch and starts fresh episodes.
    fn resumes_mid_episode(&self) -> bool {
        true
    }
}

/// Every environment of `drl` by its Gymnasium id; `Envs` adds the families defined elsewhere.
pub const ENV_IDS: &[&str] =
    &["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1", stock_trading::ID];

/// Envs made by id that live outside `drl`, with the problem they belong to (the OR-Gym ports
/// live in `problems::orgym`); a run reaches them through the `Envs` it is handed.
pub trait EnvFamily: Send + Sync {
    /// The ids this family makes.
    fn ids(&self) -> &'static [&'static str];
    /// `num_envs` copies of `id` with `env_config` (a JSON object of its parameters; null: the
    /// id's own) laid over its parameters; None when the id is not this family's.
    fn make(
        &self,
        id: &str,
        num_envs: usize,
        env_config: &serde_json::Value,
    ) -> Option<Result<Box<dyn VecEnv>, ConfigError>>;
}

/// Every environment a run can make by id: `drl`'s own, the families the caller adds, and any
/// `gymnasium:<id>` through the bridge.
#[derive(Clone, Default)]
pub struct Envs {
    /// How a `gymnasium:<id>` env runs its Python; clones share its restart counter.
    pub bridge: gymnasium::BridgeConfig,
    families: Vec<&'static dyn EnvFamily>,
}

impl std::fmt::Debug for Envs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Envs").field("bridge", &self.bridge).field("ids", &self.ids()).finish()
    }
}

impl Envs {
    /// `drl`'s own envs and the bridge.
    pub fn new(bridge: gymnasium::BridgeConfig) -> Self {
        Envs { bridge, families: Vec::new() }
    }

    /// These envs and `family`'s.
    pub fn with(mut self, family: &'static dyn EnvFamily) -> Self {
        self.families.push(family);
        self
    }

    /// Every native id: the classic-control ones, the families', then StockTrading-v0 (the
    /// order the listing and the OpenAPI document have always had).
    pub fn ids(&self) -> Vec<&'static str> {
        let (classic, trading) = ENV_IDS.split_at(ENV_IDS.len() - 1);
        let families = self.families.iter().flat_map(|f| f.ids().iter().copied());
        classic.iter().copied().chain(families).chain(trading.iter().copied()).collect()
    }

    /// `num_envs` copies of a native env with its id's parameters.
    pub fn make(&self, id: &str, num_envs: usize) -> Option<Box<dyn VecEnv>> {
        make(id, num_envs)
            .or_else(|| self.families.iter().find_map(|f| f.make(id, num_envs, &serde_json::Value::Null)?.ok()))
    }

    /// A native env that takes parameters, built with `env_config`; None for an id that takes
    /// none (or is unknown).
    pub fn configure(
        &self,
        id: &str,
        num_envs: usize,
        env_config: &serde_json::Value,
    ) -> Option<Result<Box<dyn VecEnv>, ConfigError>> {
        self.families
            .iter()
            .find_map(|f| f.make(id, num_envs, env_config))
            .or_else(|| stock_trading::make_configured(id, num_envs, env_config))
    }

    /// Builds `num_envs` copies of an env with its parameters changed by `env_config` (a JSON
    /// object of the env's config fields, e.g. `{"node_features": true}`; null: the id's
    /// defaults). The classic-control envs take none; a `gymnasium:<id>` env takes
    /// `gymnasium.make`'s keyword arguments, and runs its Python as `bridge` says.
    pub fn make_configured(
        &self,
        id: &str,
        num_envs: usize,
        env_config: &serde_json::Value,
    ) -> anyhow::Result<Box<dyn VecEnv>> {
        let unknown = || anyhow::anyhow!("{}", crate::suggest::unknown("env", id, self.ids()));
        if let Some(gym_id) = gymnasium::gymnasium_id(id) {
            return Ok(Box::new(gymnasium::GymnasiumVecEnv::new(gym_id, num_envs, env_config, &self.bridge)?));
        }
        if env_config.is_null() {
            return self.make(id, num_envs).ok_or_else(unknown);
        }
        match self.configure(id, num_envs, env_config) {
            Some(env) => env.map_err(|e| anyhow::anyhow!("env_config: {e}")),
            None if self.make(id, 1).is_some() => anyhow::bail!("env_config: {id} takes no parameters"),
            None => Err(unknown()),
        }
    }
}

/// Builds `num_envs` copies of one of `drl`'s own envs (`ENV_IDS`).
pub fn make(id: &str, num_envs: usize) -> Option<Box<dyn VecEnv>> {
    Some(match id {
        "CartPole-v1" => Box::new(ClassicVecEnv::<cartpole::CartPole>::new(num_envs)),
        "Acrobot-v1" => Box::new(ClassicVecEnv::<acrobot::Acrobot>::new(num_envs)),
        "MountainCar-v0" => Box::new(ClassicVecEnv::<mountain_car::MountainCar>::new(num_envs)),
        "MountainCarContinuous-v0" => Box::new(ClassicVecEnv::<mountain_car::MountainCarContinuous>::new(num_envs)),
        "Pendulum-v1" => Box::new(ClassicVecEnv::<pendulum::Pendulum>::new(num_envs)),
        stock_trading::ID => Box::new(stock_trading::StockTradingVecEnv::new(Default::default(), num_envs)),
        _ => return None,
    })
}
