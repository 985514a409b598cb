//! `rlsolver solve`: one instance from a file, the report as JSON on stdout.

use anyhow::{Context, Result};
use clap::Args;
use rlsolver::problems::{self, Limits, ProblemInput, SolveOptions};
use std::path::PathBuf;

use crate::progress::{self, Measure};

#[derive(Args)]
pub struct SolveArgs {
    /// Problem name (see `rlsolver problems`).
    problem: String,
    /// Instance file: JSON (`.json`) or the problem's text format (e.g. Gset).
    #[arg(long)]
    input: PathBuf,
    /// Wall-clock budget in seconds.
    #[arg(long)]
    time_limit: Option<f64>,
    #[arg(long)]
    seed: Option<u64>,
    /// Parallel chains (default: from instance size and device).
    #[arg(long)]
    chains: Option<usize>,
    /// cpu, cuda or auto.
    #[arg(long)]
    device: Option<String>,
    /// Stop when the objective reaches this value.
    #[arg(long)]
    target: Option<f64>,
    /// Iteration budget in rounds (reproducible with the same seed).
    #[arg(long)]
    max_rounds: Option<usize>,
    /// Chain kernels: auto, native, tensor, bifurcation or tempering.
    #[arg(long)]
    backend: Option<String>,
    /// `search` (default) or one of the problem's baselines (`rlsolver problems` lists them).
    #[arg(long)]
    method: Option<String>,
    /// A registered model to seed the search with (see `GET /v1/models`).
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    tuning: TuningArgs,
}

/// Expert search knobs (defaults in `SearchParams`).
#[derive(Args)]
pub struct TuningArgs {
    /// Tabu flips per chain per round.
    #[arg(long)]
    tabu_steps: Option<usize>,
    /// Metropolis sweeps per chain per round.
    #[arg(long)]
    sweeps: Option<usize>,
    /// Rounds per annealing cycle.
    #[arg(long)]
    cycle_rounds: Option<usize>,
    /// Annealing start and end factors, e.g. 1,0.01.
    #[arg(long, value_delimiter = ',')]
    temperature: Option<Vec<f64>>,
    /// Rounds between re-seeding the worst chains from the best.
    #[arg(long)]
    reseed_every: Option<usize>,
    /// Convergence patience factor: stop after patience * n^2 sweeps without improvement (inf = never).
    #[arg(long)]
    patience: Option<f64>,
    /// Policy learning rate.
    #[arg(long)]
    policy_lr: Option<f64>,
    /// Policy logit clip.
    #[arg(long)]
    logit_clip: Option<f64>,
    /// Move-set problems: train the learned proposal policy and let the moves follow it
    /// (set cover; off by default, see the README's measurements).
    #[arg(long)]
    proposal_policy: bool,
    /// How strongly the moves follow the proposal policy (default 0.1).
    #[arg(long)]
    proposal_strength: Option<f64>,
    /// Lock-step backends: chains polished by tabu search per round.
    #[arg(long)]
    polish_chains: Option<usize>,
    /// Tempering: rungs of the temperature ladder.
    #[arg(long)]
    rungs: Option<usize>,
    /// Tempering: the hottest and coldest rung factors, e.g. 1.5,0.1.
    #[arg(long, value_delimiter = ',')]
    ladder: Option<Vec<f64>>,
    /// Lock-step backends: bifurcation steps or tempering sweeps per round.
    #[arg(long)]
    lockstep_steps: Option<usize>,
}

impl TuningArgs {
    fn apply(&self, params: &mut rlsolver::search::SearchParams) {
        if let Some(steps) = self.tabu_steps {
            params.tabu_steps = Some(steps);
        }
        if let Some(sweeps) = self.sweeps {
            params.sweeps_per_round = sweeps;
        }
        if let Some(c) = self.cycle_rounds {
            params.cycle_rounds = c;
        }
        if let Some(t) = &self.temperature {
            params.temperature = (t[0], *t.get(1).unwrap_or(&t[0]));
        }
        if let Some(r) = self.reseed_every {
            params.reseed_every = r;
        }
        if let Some(p) = self.patience {
            params.patience = p;
        }
        if let Some(lr) = self.policy_lr {
            params.policy.learning_rate = lr;
        }
        if let Some(c) = self.logit_clip {
            params.policy.logit_clip = c;
        }
        params.proposal.enabled |= self.proposal_policy;
        if let Some(strength) = self.proposal_strength {
            params.proposal.strength = strength;
        }
        params.polish_chains = self.polish_chains.or(params.polish_chains);
        if let Some(rungs) = self.rungs {
            params.tempering.rungs = rungs;
        }
        if let Some(ladder) = &self.ladder {
            params.tempering.hot = ladder[0];
            params.tempering.cold = *ladder.get(1).unwrap_or(&ladder[0]);
        }
        if let Some(steps) = self.lockstep_steps {
            params.tempering.sweeps = steps;
            params.bifurcation.steps = steps;
        }
    }
}

pub fn run(args: SolveArgs) -> Result<()> {
    let problem = problems::find(&args.problem)?;
    let text = std::fs::read_to_string(&args.input).with_context(|| format!("reading {}", args.input.display()))?;
    let options = SolveOptions {
        time_limit_s: args.time_limit,
        seed: args.seed,
        chains: args.chains,
        target: args.target,
        device: args.device,
        max_rounds: args.max_rounds,
        backend: args.backend,
        method: args.method,
        model: args.model,
    };
    let json;
    let input = if args.input.extension().is_some_and(|e| e == "json") {
        json = serde_json::from_str::<serde_json::Value>(&text).context("parsing the JSON instance")?;
        ProblemInput::Json(&json)
    } else {
        ProblemInput::Text(&text)
    };
    // Only problems with learned policies load the models: loading runs libtorch, whose OpenMP
    // workers then spin for a while and slowed a 32-node Max-Cut solve from 8 to 13-20 ms.
    let registry = if problem.policy_loader().is_some() || options.model.is_some() {
        rlsolver::models::ModelRegistry::load_dir(&rlsolver::models::default_dir(), problems::policy_loaders)
    } else {
        rlsolver::models::ModelRegistry::empty(problems::policy_loaders)
    };
    let models = std::sync::Arc::new(registry);
    let mut prepared = problems::prepare(problem, input, &options, &args.limits, &models, |p| args.tuning.apply(p))
        .with_context(|| format!("{}", args.input.display()))?;
    let name = args.input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let bar = progress::start(Measure::Seconds(prepared.params.time_limit_s), &name);
    if bar.is_some() {
        prepared.params.hooks.on_incumbent = Some(std::sync::Arc::new(|elapsed, objective| {
            progress::figure(format!("incumbent {objective} at {:.2} s", elapsed.as_secs_f64()));
        }));
    }
    let report = prepared.run().with_context(|| format!("{}", args.input.display()))?;
    drop(bar);
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
