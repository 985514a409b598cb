//! Training the shipped problem policies (`rlsolver train-policy`, `make models`): train, validate
//! on fresh seeded instances, and write the model folder with its provenance (the exact command
//! that regenerates it from the resolved settings, the seed, the hyperparameters, how the training
//! data was drawn, the validation and training curve). The CLI passes only what the user set; the
//! rest are the library's defaults (`PolicyConfig::default`, `TrainingConfig::default`,
//! `ListaConfig::new`, `ListaTraining::default`).

use crate::hooks::RunHooks;
use crate::models::{write_model, Manifest, ModelRecord};
use crate::problems::cs::lista::{ListaConfig, ListaPolicy, ListaTraining};
use crate::problems::mimo::policy::{MimoPolicy, PolicyConfig, TrainingConfig};
use crate::problems::orgym::env::OrGymConfig;
use crate::problems::orgym::inventory::env::InventoryConfig;
use crate::problems::orgym::portfolio::env::PortfolioConfig;
use crate::problems::orgym::tsp::env::TspConfig;
use crate::problems::tensor_network::policy::{self as tnco, PairPolicy};
use crate::search::ising_policy::{IsingPolicy, IsingPolicyConfig, IsingPolicyTraining};
use anyhow::Result;
use std::path::Path;
use std::time::Instant;

/// What to train.
#[derive(Debug, Clone)]
pub enum PolicyRequest {
    /// The beamforming network for one (users, antennas, power).
    Mimo { config: PolicyConfig, training: TrainingConfig },
    /// LISTA-CPSS for one (measurements, unknowns).
    CompressiveSensing { config: ListaConfig, training: ListaTraining },
    /// The pair-scoring contraction policy (one model serves every network).
    TensorNetwork { config: tnco::PolicyConfig, training: tnco::PolicyTraining },
    /// The message-passing policy for every Ising model (`search::ising_policy`).
    Ising { config: IsingPolicyConfig, training: IsingPolicyTraining },
    /// An OR-Gym env's policy, trained by the deep-RL suite (PPO-discrete with the env's
    /// masked, per-item layout and `PpoConfig::orgym`'s hyperparameters, `orgym_online`'s for
    /// Knapsack-v3).
    OrGym { env: String, steps: usize, seed: u64 },
}

impl PolicyRequest {
    /// The training's step budget (optimizer steps; env steps for OR-Gym), what progress counts.
    pub fn steps(&self) -> usize {
        match self {
            PolicyRequest::Mimo { training, .. } => training.steps,
            PolicyRequest::CompressiveSensing { training, .. } => training.steps,
            PolicyRequest::TensorNetwork { training, .. } => training.steps,
            PolicyRequest::Ising { training, .. } => training.steps,
            PolicyRequest::OrGym { steps, .. } => *steps,
        }
    }

    pub fn problem(&self) -> &'static str {
        match self {
            PolicyRequest::Mimo { .. } => "mimo",
            PolicyRequest::CompressiveSensing { .. } => "compressive_sensing",
            PolicyRequest::TensorNetwork { .. } => "tensor_network",
            PolicyRequest::Ising { .. } => "ising",
            PolicyRequest::OrGym { .. } => "drl",
        }
    }

    /// The model's default name: mimo-k{users}-n{antennas}-p{power}, lista-m{m}-n{n} or
    /// tnco-pairs-h{hidden}.
    pub fn default_name(&self) -> String {
        match self {
            PolicyRequest::Mimo { config, .. } => {
                format!("mimo-k{}-n{}-p{}", config.users, config.antennas, config.power)
            }
            PolicyRequest::CompressiveSensing { config, .. } => {
                format!("lista-m{}-n{}", config.measurements, config.unknowns)
            }
            PolicyRequest::TensorNetwork { config, .. } => format!("tnco-pairs-h{}", config.hidden),
            PolicyRequest::Ising { config, .. } => format!("ising-mp-l{}-h{}", config.layers, config.hidden),
            PolicyRequest::OrGym { env, .. } => format!("orgym-{}", env.to_lowercase()),
        }
    }

    /// The command line that regenerates exactly this model (every setting spelled out).
    pub fn command(&self, name: &str) -> String {
        match self {
            PolicyRequest::Mimo { config, training } => format!(
                "rlsolver train-policy mimo --users {} --antennas {} --power {} --noise {} --hidden {} --layers {} --steps {} --batch {} --learning-rate {} --seed {} --name {name}",
                config.users,
                config.antennas,
                config.power,
                config.noise,
                config.hidden.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
                config.unfolded_layers,
                training.steps,
                training.batch,
                training.learning_rate,
                training.seed
            ),
            PolicyRequest::CompressiveSensing { config, training } => format!(
                "rlsolver train-policy compressive_sensing --measurements {} --unknowns {} --layers {} --steps {} --batch {} --learning-rate {} --seed {} --name {name}",
                config.measurements,
                config.unknowns,
                config.layers,
                training.steps,
                training.batch,
                training.learning_rate,
                training.seed
            ),
            PolicyRequest::TensorNetwork { config, training } => format!(
                "rlsolver train-policy tensor_network --hidden {} --steps {} --batch {} --rollouts {} --learning-rate {} --seed {} --name {name}",
                config.hidden, training.steps, training.instances, training.rollouts, training.learning_rate, training.seed
            ),
            PolicyRequest::Ising { config, training } => format!(
                "rlsolver train-policy ising --layers {} --hidden {} --steps {} --batch {} --learning-rate {} --seed {} --name {name}",
                config.layers, config.hidden, training.steps, training.chains, training.learning_rate, training.seed
            ),
            PolicyRequest::OrGym { env, steps, seed } => {
                format!("rlsolver train-policy orgym --env {env} --steps {steps} --seed {seed} --name {name}")
            }
        }
    }
}

/// Trains, validates and writes `out/<name>` (default name: `default_name`); returns the manifest.
pub fn train(request: &PolicyRequest, out: &Path, name: Option<&str>, hooks: &RunHooks) -> Result<Manifest> {
    let name = name.map_or_else(|| request.default_name(), str::to_string);
    let command = request.command(&name);
    let start = Instant::now();
    match request {
        PolicyRequest::Mimo { config, training } => {
            let (policy, curve) = MimoPolicy::train(config.clone(), training, tch::Device::Cpu, hooks)?;
            let train_s = start.elapsed().as_secs_f64();
            let validation = policy.validate(200, training.seed.wrapping_add(1_000_003));
            let record = ModelRecord {
                problem: "mimo",
                architecture: serde_json::to_value(&policy.config)?,
                training: serde_json::json!({"command": command, "seed": training.seed, "steps": training.steps, "batch": training.batch, "learning_rate": training.learning_rate}),
                training_data:
                    "i.i.d. CN(0, 1) channels drawn on the fly by ChaCha8 from the seed (Box-Muller); none stored",
                metrics: serde_json::json!({"validation": validation, "training_curve": curve, "train_s": train_s}),
            };
            write_model(out, &name, &policy.store, record)
        }
        PolicyRequest::CompressiveSensing { config, training } => {
            let (policy, curve) = ListaPolicy::train(config.clone(), training, tch::Device::Cpu, hooks)?;
            let train_s = start.elapsed().as_secs_f64();
            let validation = policy.validate(20, training.seed.wrapping_add(1_000_003));
            let record = ModelRecord {
                problem: "compressive_sensing",
                architecture: serde_json::to_value(&policy.config)?,
                training: serde_json::json!({"command": command, "seed": training.seed, "hyperparameters": training}),
                training_data: "Gaussian instances drawn on the fly by ChaCha8 from the seed: A with N(0, 1/m) entries, k-sparse x with N(0, 1) entries, k uniform in [min_sparsity, max_sparsity]; none stored",
                metrics: serde_json::json!({"validation": validation, "training_curve_nmse_db": curve, "train_s": train_s}),
            };
            write_model(out, &name, &policy.store, record)
        }
        PolicyRequest::TensorNetwork { config, training } => {
            let (policy, curve) = PairPolicy::train(config.clone(), training, tch::Device::Cpu, hooks)?;
            let train_s = start.elapsed().as_secs_f64();
            let validation = tnco::validate(
                &policy.scorer(),
                training,
                training.validation_networks,
                training.seed.wrapping_add(1_000_003),
            );
            let record = ModelRecord {
                problem: "tensor_network",
                architecture: serde_json::to_value(&policy.config)?,
                training: serde_json::json!({"command": command, "seed": training.seed, "hyperparameters": training}),
                training_data: "random quantum circuits (tensor_network::generate::random_circuit) drawn on the fly by ChaCha8 from the seed, qubits and cycles uniform in the hyperparameters' ranges; never the Sycamore files; none stored",
                metrics: serde_json::json!({"validation": validation, "training_curve_gap_to_greedy_log10": curve, "train_s": train_s}),
            };
            write_model(out, &name, &policy.store, record)
        }
        PolicyRequest::Ising { config, training } => {
            let (policy, curve) = IsingPolicy::train(config.clone(), training, tch::Device::Cpu, hooks)?;
            let train_s = start.elapsed().as_secs_f64();
            let validation =
                crate::search::ising_policy::validate(&policy, training, 30, 16, training.seed.wrapping_add(1_000_003));
            let record = ModelRecord {
                problem: "ising",
                architecture: serde_json::to_value(&policy.config)?,
                training: serde_json::json!({"command": command, "seed": training.seed, "hyperparameters": training}),
                training_data: crate::search::ising_policy::TRAINING_DATA,
                metrics: serde_json::json!({"validation": validation, "training_curve_normalized_energy": curve, "train_s": train_s}),
            };
            write_model(out, &name, &policy.store, record)
        }
        PolicyRequest::OrGym { env, steps, seed } => train_orgym(env, *steps, *seed, out, &name, &command, hooks),
    }
}

/// The OR-Gym env families a policy is trained for: each has its algorithm, preset and
/// validation against its reference.
enum OrGymFamily {
    Knapsack(crate::problems::orgym::knapsack::env::Variant),
    BinPacking(crate::problems::orgym::binpacking::env::BinPackingConfig),
    Newsvendor,
    Inventory(InventoryConfig),
    Portfolio(PortfolioConfig),
    VmPacking(crate::problems::orgym::vmpacking::env::VmPackingConfig),
    VehicleRouting,
    Tsp(TspConfig),
}

impl OrGymFamily {
    fn of(env: &str) -> Result<Self> {
        use crate::problems::orgym::{binpacking::env as binpacking, knapsack::env::Variant};
        if let Some(variant) = Variant::from_id(env) {
            return Ok(OrGymFamily::Knapsack(variant));
        }
        if let Some(config) = binpacking::BinPackingConfig::by_id(env) {
            return Ok(OrGymFamily::BinPacking(config));
        }
        if env == "Newsvendor-v0" {
            return Ok(OrGymFamily::Newsvendor);
        }
        // The policies observe what `OrGymConfig::policy_observation` adds (the clock and what
        // the reference's state hides: the LP references' advantage; module docs of the envs).
        if let Some(config) = InventoryConfig::by_id(env) {
            return Ok(OrGymFamily::Inventory(config.policy_observation()));
        }
        if env == "PortfolioOpt-v0" {
            return Ok(OrGymFamily::Portfolio(PortfolioConfig::default().policy_observation()));
        }
        if let Some(config) = crate::problems::orgym::vmpacking::env::VmPackingConfig::by_id(env) {
            return Ok(OrGymFamily::VmPacking(config));
        }
        if env == "VehicleRouting-v0" {
            return Ok(OrGymFamily::VehicleRouting);
        }
        if let Some(config) = crate::problems::orgym::tsp::env::TspConfig::by_id(env) {
            // TSP-v1's policy is trained to shorten the path (the reference's reward is the length
            // itself).
            let negate_distance = config.distance_cost;
            return Ok(OrGymFamily::Tsp(TspConfig { negate_distance, ..config.policy_observation() }));
        }
        let inventory = crate::problems::orgym::inventory::env::IDS.map(|(id, _)| id);
        let ids = Variant::ALL
            .iter()
            .map(|v| v.id())
            .chain(binpacking::IDS)
            .chain(["Newsvendor-v0"])
            .chain(inventory)
            .chain(["PortfolioOpt-v0"])
            .chain(crate::problems::orgym::vmpacking::env::IDS.map(|(id, _)| id))
            .chain(["VehicleRouting-v0"])
            .chain(crate::problems::orgym::tsp::env::IDS.map(|(id, _)| id));
        anyhow::bail!("{}", crate::suggest::unknown("env", env, ids))
    }

    /// The algorithm and its hyperparameters (why each preset: its doc in `ppo.rs`).
    fn algorithm(&self) -> (&'static str, crate::drl::agents::ppo::PpoConfig) {
        use crate::drl::agents::ppo::PpoConfig;
        use crate::problems::orgym::knapsack::env::Variant;
        match self {
            OrGymFamily::Knapsack(Variant::Online) => ("ppo_discrete", PpoConfig::orgym_online()),
            OrGymFamily::Knapsack(_) => ("ppo_discrete", PpoConfig::orgym()),
            OrGymFamily::BinPacking(_) => ("ppo_discrete", PpoConfig::orgym_binpacking()),
            OrGymFamily::Newsvendor => ("ppo", PpoConfig::orgym_newsvendor()),
            OrGymFamily::Inventory(_) => ("ppo", PpoConfig::orgym_inventory()),
            OrGymFamily::Portfolio(_) => ("ppo", PpoConfig::orgym_portfolio()),
            OrGymFamily::VmPacking(_) => ("ppo_discrete", PpoConfig::orgym_binpacking()),
            OrGymFamily::VehicleRouting => ("ppo_discrete", PpoConfig::orgym()),
            OrGymFamily::Tsp(config) => ("ppo_discrete", PpoConfig::orgym_tsp(config.distance_cost)),
        }
    }

    /// The env parameters training changes from the id's (`TrainRequest::env_config`).
    fn env_config(&self) -> serde_json::Value {
        match self {
            OrGymFamily::Tsp(config) => {
                serde_json::json!({"node_features": config.node_features, "negate_distance": config.negate_distance})
            }
            OrGymFamily::Knapsack(variant) => {
                serde_json::json!({"planning_features": knapsack_config(*variant).planning_features})
            }
            OrGymFamily::Inventory(config) => serde_json::json!({"planning_features": config.planning_features}),
            OrGymFamily::Portfolio(config) => serde_json::json!({"planning_features": config.planning_features}),
            _ => serde_json::Value::Null,
        }
    }

    /// The manifest's validation entry: its key and value, on 200 episodes from a seed no
    /// training run or monitor uses.
    fn validate(&self, run_dir: &Path) -> Result<(&'static str, serde_json::Value)> {
        use crate::problems::orgym::validation as orgym;
        const SEED: u64 = 5_000_000_003;
        Ok(match self {
            OrGymFamily::Knapsack(variant) => {
                let config = knapsack_config(*variant);
                (
                    "validation_percent_of_reference",
                    serde_json::to_value(orgym::validate(run_dir, &config, 200, SEED)?)?,
                )
            }
            OrGymFamily::BinPacking(config) => {
                ("validation_waste", orgym::validate_binpacking(run_dir, config, 200, SEED)?)
            }
            OrGymFamily::Newsvendor => {
                ("validation_return", orgym::validate_newsvendor(run_dir, &Default::default(), 200, SEED)?)
            }
            OrGymFamily::Inventory(config) => {
                ("validation_return", orgym::validate_inventory(run_dir, config, 200, SEED)?)
            }
            OrGymFamily::Portfolio(config) => {
                ("validation_wealth", orgym::validate_portfolio(run_dir, config, 200, SEED)?)
            }
            OrGymFamily::VmPacking(config) => {
                ("validation_return", orgym::validate_vmpacking(run_dir, config, 200, SEED)?)
            }
            OrGymFamily::VehicleRouting => {
                ("validation_return", orgym::validate_vehicle_routing(run_dir, &Default::default(), 200, SEED)?)
            }
            OrGymFamily::Tsp(config) => ("validation_return", orgym::validate_tsp(run_dir, config, 200, SEED)?),
        })
    }
}

/// The knapsack env a variant's policy trains on.
fn knapsack_config(
    variant: crate::problems::orgym::knapsack::env::Variant,
) -> crate::problems::orgym::knapsack::env::KnapsackConfig {
    crate::problems::orgym::knapsack::env::KnapsackConfig::new(variant).policy_observation()
}

/// Trains the policy in a scratch run folder under `out`, validates it against the env's
/// reference on episodes disjoint from training's and the monitor's, and promotes the policy
/// files to `out/<name>` with a manifest that hashes them (the registry's `drl` models).
fn train_orgym(
    env: &str,
    steps: usize,
    seed: u64,
    out: &Path,
    name: &str,
    command: &str,
    hooks: &RunHooks,
) -> Result<Manifest> {
    let family = OrGymFamily::of(env)?;
    let run_dir = out.join(format!(".{name}.run"));
    let _ = std::fs::remove_dir_all(&run_dir);
    let (algorithm, preset) = family.algorithm();
    let hyperparameters = serde_json::to_value(preset)?;
    let start = Instant::now();
    let summary = crate::drl::train(&crate::drl::TrainRequest {
        algorithm: algorithm.into(),
        env: env.into(),
        total_steps: steps,
        seed,
        eval_every: Some(10_000),
        eval_episodes: Some(50),
        overrides: hyperparameters.clone(),
        env_config: family.env_config(),
        out_dir: Some(run_dir.clone()),
        hooks: hooks.clone(),
        envs: crate::problems::envs(Default::default()),
        ..Default::default()
    })?;
    let train_s = start.elapsed().as_secs_f64();
    let (key, validation) = family.validate(&run_dir)?;
    let folder = out.join(name);
    if folder.exists() {
        std::fs::remove_dir_all(&folder)?;
    }
    let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
    let training = serde_json::json!({
        "command": command, "seed": seed, "steps": steps, "algorithm": algorithm, "hyperparameters": hyperparameters,
        "env_config": family.env_config(),
        "training_data": format!("{env} episodes, a fresh instance each drawn as or-gym draws it by ChaCha8 from the run's seed; evaluation seeds disjoint"),
    });
    let curve: Vec<_> = summary.evaluations.iter().map(|e| serde_json::json!([e.step, e.return_mean])).collect();
    let metrics = serde_json::json!({key: validation, "training_curve": curve, "train_s": train_s});
    let provenance = crate::models::Provenance { training, metrics, owner: None };
    let manifest = registry.promote(&run_dir, out, name, provenance, crate::drl::run::is_policy_file)?;
    std::fs::remove_dir_all(&run_dir)?;
    Ok(manifest)
}
