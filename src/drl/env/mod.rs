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
pub mod orgym;
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

/// Every native environment by its Gymnasium id.
pub const ENV_IDS: &[&str] = &[
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "Knapsack-v0",
    "Knapsack-v1",
    "Knapsack-v2",
    "Knapsack-v3",
    "BinPacking-v0",
    "BinPacking-v1",
    "BinPacking-v2",
    "BinPacking-v3",
    "BinPacking-v4",
    "BinPacking-v5",
    "Newsvendor-v0",
    "InvManagement-v0",
    "InvManagement-v1",
    "PortfolioOpt-v0",
    "TSP-v0",
    "TSP-v1",
    "VMPacking-v0",
    "VMPacking-v1",
    "VehicleRouting-v0",
    "StockTrading-v0",
];

/// Builds `num_envs` copies of an env with its parameters changed by `env_config` (a JSON object
/// of an OR-Gym env's config fields, e.g. `{"node_features": true}`; null: the id's defaults).
/// The classic-control envs take none; a `gymnasium:<id>` env takes `gymnasium.make`'s keyword
/// arguments, and runs its Python as `bridge` says.
pub fn make_configured(
    id: &str,
    num_envs: usize,
    env_config: &serde_json::Value,
    bridge: &gymnasium::BridgeConfig,
) -> anyhow::Result<Box<dyn VecEnv>> {
    if let Some(gym_id) = gymnasium::gymnasium_id(id) {
        return Ok(Box::new(gymnasium::GymnasiumVecEnv::new(gym_id, num_envs, env_config, bridge)?));
    }
    if env_config.is_null() {
        return make(id, num_envs)
            .ok_or_else(|| anyhow::anyhow!("{}", crate::suggest::unknown("env", id, ENV_IDS.iter().copied())));
    }
    match orgym::make_configured(id, num_envs, env_config)
        .or_else(|| stock_trading::make_configured(id, num_envs, env_config))
    {
        Some(env) => env.map_err(|e| anyhow::anyhow!("env_config: {e}")),
        None if make(id, 1).is_some() => anyhow::bail!("env_config: {id} takes no parameters"),
        None => anyhow::bail!("{}", crate::suggest::unknown("env", id, ENV_IDS.iter().copied())),
    }
}

/// Builds `num_envs` copies of a native environment.
pub fn make(id: &str, num_envs: usize) -> Option<Box<dyn VecEnv>> {
    Some(match id {
        "CartPole-v1" => Box::new(ClassicVecEnv::<cartpole::CartPole>::new(num_envs)),
        "Acrobot-v1" => Box::new(ClassicVecEnv::<acrobot::Acrobot>::new(num_envs)),
        "MountainCar-v0" => Box::new(ClassicVecEnv::<mountain_car::MountainCar>::new(num_envs)),
        "MountainCarContinuous-v0" => Box::new(ClassicVecEnv::<mountain_car::MountainCarContinuous>::new(num_envs)),
        "Pendulum-v1" => Box::new(ClassicVecEnv::<pendulum::Pendulum>::new(num_envs)),
        "Newsvendor-v0" => Box::new(orgym::newsvendor::NewsvendorVecEnv::new(Default::default(), num_envs)),
        "PortfolioOpt-v0" => Box::new(orgym::portfolio::PortfolioVecEnv::new(Default::default(), num_envs)),
        stock_trading::ID => Box::new(stock_trading::StockTradingVecEnv::new(Default::default(), num_envs)),
        id if id.starts_with("InvManagement-") => {
            Box::new(orgym::inventory::InventoryVecEnv::new(orgym::inventory::InventoryConfig::by_id(id)?, num_envs))
        }
        "VehicleRouting-v0" => {
            Box::new(orgym::vehicle_routing::VehicleRoutingVecEnv::new(Default::default(), num_envs))
        }
        id if id.starts_with("VMPacking-") => Box::new(orgym::vmpacking::VmPackingVecEnv::by_id(id, num_envs)?),
        id if id.starts_with("TSP-") => Box::new(orgym::tsp::TspVecEnv::by_id(id, num_envs)?),
        id if id.starts_with("BinPacking-") => Box::new(orgym::binpacking::BinPackingVecEnv::by_id(id, num_envs)?),
        id => return orgym::knapsack::KnapsackVecEnv::by_id(id, num_envs).map(|e| Box::new(e) as Box<dyn VecEnv>),
    })
}
