//! `rlsolver train-policy`: a problem's policy network into the model registry folder.

use anyhow::{Context, Result};
use clap::Args;
use rlsolver::policies::PolicyRequest;
use std::path::PathBuf;

use crate::progress::{self, Measure};

#[derive(Args)]
pub struct TrainPolicyArgs {
    /// The policy to train; every flag left out takes the library's default for it.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(TRAINERS.iter().map(|t| clap::builder::PossibleValue::new(t.name).help(t.summary))))]
    problem: String,
    /// compressive_sensing: measurements m, unknowns n and unrolled layers (default 50, 100, 16);
    /// mimo: --layers = unfolded WMMSE layers after the network (default 4); ising: message-passing
    /// layers (default 32, --hidden W the node MLP's width, default 16, --batch the chains per
    /// graph, default 16; 1500 steps at 3e-3).
    #[arg(long)]
    measurements: Option<usize>,
    #[arg(long)]
    unknowns: Option<usize>,
    #[arg(long)]
    layers: Option<usize>,
    /// mimo: users K, antennas N, power budget P (linear), noise, hidden widths (default 8, 8,
    /// 10, 1, 256,256); tensor_network: --hidden W, both hidden layers' width (default 32).
    #[arg(long)]
    users: Option<usize>,
    #[arg(long)]
    antennas: Option<usize>,
    #[arg(long)]
    power: Option<f64>,
    #[arg(long)]
    noise: Option<f64>,
    #[arg(long, value_delimiter = ',')]
    hidden: Option<Vec<i64>>,
    /// Gradient steps, instances per step, learning rate (mimo: 3000, 256, 1e-3;
    /// compressive_sensing: 4000, 64, 5e-3; tensor_network: 1500, 8 networks, 1e-2).
    #[arg(long)]
    steps: Option<usize>,
    #[arg(long)]
    batch: Option<usize>,
    #[arg(long)]
    learning_rate: Option<f64>,
    /// tensor_network: sampled rollouts per network, whose mean is the baseline (default 8).
    #[arg(long)]
    rollouts: Option<usize>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Registry folder; the model goes to OUT/NAME.
    #[arg(long, default_value = "models")]
    out: PathBuf,
    /// Default: mimo-k{users}-n{antennas}-p{power}, lista-m{measurements}-n{unknowns} or
    /// tnco-pairs-h{hidden}, orgym-{env}.
    #[arg(long)]
    name: Option<String>,
    /// orgym: the env (Knapsack-v0..v3, BinPacking-v0..v5); --steps is its env-step budget (default 60000).
    #[arg(long)]
    env: Option<String>,
}

/// One `train-policy` target: the policy it trains and how the flags make its request.
struct Trainer {
    name: &'static str,
    summary: &'static str,
    request: fn(TrainPolicyArgs) -> Result<PolicyRequest>,
}

/// Every `train-policy` target; clap refuses any other name and lists these with their summaries.
const TRAINERS: &[Trainer] = &[
    Trainer { name: "mimo", summary: "the MIMO beamforming network (--users, --antennas, --power, --noise, --hidden, --layers unfolded WMMSE layers)", request: mimo },
    Trainer { name: "compressive_sensing", summary: "LISTA for compressive sensing (--measurements, --unknowns, --layers)", request: compressive_sensing },
    Trainer { name: "ising", summary: "the message-passing policy of every Ising model (--layers, --hidden, --batch chains per graph)", request: ising },
    Trainer { name: "tensor_network", summary: "the pair-scoring contraction policy of tensor networks (--hidden, --rollouts)", request: tensor_network },
    Trainer { name: "orgym", summary: "an OR-Gym env's deep-RL policy (--env; --steps its env-step budget, default 60000)", request: orgym },
];

pub fn run(args: TrainPolicyArgs) -> Result<()> {
    let trainer = TRAINERS.iter().find(|t| t.name == args.problem).expect("clap admits only the TRAINERS names");
    let (name, out, problem) = (args.name.clone(), args.out.clone(), args.problem.clone());
    let request = (trainer.request)(args)?;
    let _bar = progress::start(Measure::Steps(request.steps() as u64), &format!("train-policy {problem}"));
    let manifest = rlsolver::policies::train(&request, &out, name.as_deref(), &progress::training_hooks())?;
    println!("{}", serde_json::to_string_pretty(&manifest)?);
    Ok(())
}

fn mimo(args: TrainPolicyArgs) -> Result<PolicyRequest> {
    use rlsolver::problems::mimo::policy::{PolicyConfig, TrainingConfig};
    let (config, training) = (PolicyConfig::default(), TrainingConfig::default());
    Ok(PolicyRequest::Mimo {
        config: PolicyConfig {
            users: args.users.unwrap_or(config.users),
            antennas: args.antennas.unwrap_or(config.antennas),
            power: args.power.unwrap_or(config.power),
            noise: args.noise.unwrap_or(config.noise),
            hidden: args.hidden.unwrap_or(config.hidden),
            unfolded_layers: args.layers.unwrap_or(config.unfolded_layers),
        },
        training: TrainingConfig {
            steps: args.steps.unwrap_or(training.steps),
            batch: args.batch.unwrap_or(training.batch),
            learning_rate: args.learning_rate.unwrap_or(training.learning_rate),
            seed: args.seed,
        },
    })
}

fn compressive_sensing(args: TrainPolicyArgs) -> Result<PolicyRequest> {
    use rlsolver::problems::cs::lista::{ListaConfig, ListaTraining};
    let config = ListaConfig::new(args.measurements.unwrap_or(50), args.unknowns.unwrap_or(100));
    let training = ListaTraining::default();
    Ok(PolicyRequest::CompressiveSensing {
        config: ListaConfig { layers: args.layers.unwrap_or(config.layers), ..config },
        training: ListaTraining {
            steps: args.steps.unwrap_or(training.steps),
            batch: args.batch.unwrap_or(training.batch),
            learning_rate: args.learning_rate.unwrap_or(training.learning_rate),
            seed: args.seed,
            ..training
        },
    })
}

fn ising(args: TrainPolicyArgs) -> Result<PolicyRequest> {
    use rlsolver::search::ising_policy::{IsingPolicyConfig, IsingPolicyTraining};
    let (config, training) = (IsingPolicyConfig::default(), IsingPolicyTraining::default());
    Ok(PolicyRequest::Ising {
        config: IsingPolicyConfig {
            layers: args.layers.unwrap_or(config.layers),
            hidden: args.hidden.and_then(|h| h.first().copied()).unwrap_or(config.hidden),
        },
        training: IsingPolicyTraining {
            steps: args.steps.unwrap_or(training.steps),
            chains: args.batch.unwrap_or(training.chains),
            learning_rate: args.learning_rate.unwrap_or(training.learning_rate),
            seed: args.seed,
            ..training
        },
    })
}

fn tensor_network(args: TrainPolicyArgs) -> Result<PolicyRequest> {
    use rlsolver::problems::tensor_network::policy::{PolicyConfig as PairConfig, PolicyTraining};
    let (config, training) = (PairConfig::default(), PolicyTraining::default());
    Ok(PolicyRequest::TensorNetwork {
        config: PairConfig {
            hidden: args.hidden.and_then(|h| h.first().map(|&w| w as usize)).unwrap_or(config.hidden),
            ..config
        },
        training: PolicyTraining {
            steps: args.steps.unwrap_or(training.steps),
            instances: args.batch.unwrap_or(training.instances),
            rollouts: args.rollouts.unwrap_or(training.rollouts),
            learning_rate: args.learning_rate.unwrap_or(training.learning_rate),
            seed: args.seed,
            ..training
        },
    })
}

fn orgym(args: TrainPolicyArgs) -> Result<PolicyRequest> {
    Ok(PolicyRequest::OrGym {
        env: args.env.context("orgym needs --env, e.g. Knapsack-v1")?,
        steps: args.steps.unwrap_or(60_000),
        seed: args.seed,
    })
}
