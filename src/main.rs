//! The `rlsolver` command line: parse arguments, call the library, print JSON.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use rlsolver::api::state::ServerConfig;
use rlsolver::problems::{self, Limits, ProblemInput, SolveOptions};
use rlsolver::progress::Measure;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "rlsolver",
    version,
    about = "Near-optimal solutions by learned policies plus parallel minimum-energy search"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Solve one instance and print the result as JSON.
    Solve(Box<SolveArgs>),
    /// Benchmark a problem on a folder of instances and write a markdown table.
    Bench(BenchArgs),
    /// Print the OpenAPI document.
    Openapi,
    /// Write a random Max-Cut instance (Gset text) to stdout.
    Generate(GenerateArgs),
    /// List the registered problems.
    Problems,
    /// Train a deep-RL agent on a native environment.
    Train(TrainArgs),
    /// Train a problem's policy network and write it to the model registry folder.
    TrainPolicy(TrainPolicyArgs),
    /// Evaluate a checkpoint written by `train --out`.
    Evaluate(EvaluateArgs),
    /// List the deep-RL algorithms with their action spaces and default hyperparameters.
    Algorithms,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to bind.
    #[arg(long, env = "RLSOLVER_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to bind (0: any free port).
    #[arg(long, env = "RLSOLVER_PORT", default_value_t = 8080)]
    port: u16,
    /// Largest request body in bytes.
    #[arg(long, env = "RLSOLVER_MAX_BODY_BYTES", default_value_t = ServerConfig::default().max_body_bytes)]
    max_body_bytes: usize,
    /// Solves running at once; more get 503 with Retry-After.
    #[arg(long, env = "RLSOLVER_MAX_CONCURRENT_SOLVES", default_value_t = ServerConfig::default().max_concurrent_solves)]
    max_concurrent_solves: usize,
    /// The model registry folder (`<name>/manifest.json` + `weights.safetensors` each).
    #[arg(long, env = "RLSOLVER_MODELS_DIR", default_value = "models")]
    models_dir: PathBuf,
    /// SQLite store (rlsolver.db) and job folders (checkpoints, artifacts); replicas sharing a
    /// PostgreSQL store must share this folder too.
    #[arg(long, env = "RLSOLVER_DATA_DIR", default_value = "data")]
    data_dir: PathBuf,
    /// A PostgreSQL store shared by several replicas (postgres://user:password@host:port/db)
    /// instead of the embedded SQLite one.
    #[arg(long, env = "RLSOLVER_DATABASE_URL")]
    database_url: Option<String>,
    /// Seconds of a running job's lease: a replica that stops renewing it (killed, hung, cut off)
    /// loses the job to another replica this long after its last renewal.
    #[arg(long, env = "RLSOLVER_JOB_LEASE_S", default_value_t = rlsolver::jobs::JobsConfig::default().lease.as_secs_f64())]
    job_lease_s: f64,
    /// This replica's name in job leases (a job's `runner`; default: a fresh one).
    #[arg(long, env = "RLSOLVER_REPLICA")]
    replica: Option<String>,
    /// Log lines as `text` or `json` (one object a line: level, message, fields such as the
    /// request id, route, status, latency and job id).
    #[arg(long, env = "RLSOLVER_LOG_FORMAT", default_value = "text")]
    log_format: String,
    /// Log lines queued for stderr; beyond this (a reader that stalls) lines are dropped and
    /// counted in /metrics (`rlsolver_log_lines_dropped`) instead of blocking requests.
    #[arg(long, env = "RLSOLVER_LOG_BUFFER_LINES", default_value_t = 10_000)]
    log_buffer_lines: usize,
    /// all (API and job workers), api (no workers), worker (job workers; HTTP only /health,
    /// /ready and /metrics), evaluator (a worker that only scores population checkpoints),
    /// learner (one off-policy agent's replay and updates, --learn) or rollout (steps envs for
    /// the --learner-url learner). Several replicas share a --database-url store.
    #[arg(long, env = "RLSOLVER_ROLE", default_value = "all")]
    role: String,
    /// learner: what to train, a JSON file (algorithm, env, seed, hyperparameters, updates,
    /// broadcast_every, send_every, eval_episodes).
    #[arg(long, env = "RLSOLVER_LEARN")]
    learn: Option<PathBuf>,
    /// rollout: the learner's base URL (its API key, if any, in RLSOLVER_LEARNER_KEY).
    #[arg(long, env = "RLSOLVER_LEARNER_URL")]
    learner_url: Option<String>,
    /// API keys, one `KEY [SCOPES [NAME]]` a line (SCOPES: read, submit, admin joined by '+');
    /// every /v1 request then needs `Authorization: Bearer <key>`.
    #[arg(long, env = "RLSOLVER_API_KEYS_FILE")]
    api_keys_file: Option<PathBuf>,
    /// Training jobs running at once.
    #[arg(long, env = "RLSOLVER_TRAINING_WORKERS", default_value_t = rlsolver::jobs::JobsConfig::default().workers)]
    training_workers: usize,
    /// Training jobs waiting for a worker; more get 429 with Retry-After.
    #[arg(long, env = "RLSOLVER_MAX_QUEUED_JOBS", default_value_t = rlsolver::jobs::JobsConfig::default().max_queued)]
    max_queued_jobs: usize,
    /// Largest step budget of a training job.
    #[arg(long, env = "RLSOLVER_MAX_TRAINING_STEPS", default_value_t = rlsolver::jobs::training::TrainingLimits::default().max_total_steps)]
    max_training_steps: usize,
    /// Largest number of network parameters of a training job (estimated before it starts).
    #[arg(long, env = "RLSOLVER_MAX_TRAINING_PARAMETERS", default_value_t = rlsolver::jobs::budget::ResourceLimits::default().max_parameters)]
    max_training_parameters: u64,
    /// Largest memory of a training job in MiB: parameters, gradients, optimizer state, targets, replay.
    #[arg(long, env = "RLSOLVER_MAX_TRAINING_MEMORY_MB", default_value_t = rlsolver::jobs::budget::ResourceLimits::default().max_memory_bytes >> 20)]
    max_training_memory_mb: u64,
    /// Origins allowed by CORS, comma-separated (`*` = any; default none).
    #[arg(long, env = "RLSOLVER_CORS_ORIGINS", value_delimiter = ',')]
    cors_origins: Vec<String>,
    /// Seconds between SIGTERM and closing the listener: `/ready` answers 503 meanwhile, so a load
    /// balancer's probe sees the replica leave before connections are refused; running requests
    /// finish after it either way.
    #[arg(long, env = "RLSOLVER_SHUTDOWN_DRAIN_S", default_value_t = 0.0)]
    shutdown_drain_s: f64,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    bridge: BridgeArgs,
}

/// How `gymnasium:<id>` envs run (`drl::env::gymnasium`).
#[derive(Args)]
struct BridgeArgs {
    /// The Python interpreter with gymnasium and the simulators (default: ./.venv/bin/python,
    /// which `make simulators` fills; else python3).
    #[arg(long = "python", env = "RLSOLVER_PYTHON")]
    bridge_python: Option<PathBuf>,
    /// Python worker processes per batch of bridged envs at most (default: the cores).
    #[arg(long, env = "RLSOLVER_BRIDGE_WORKERS")]
    bridge_workers: Option<usize>,
    /// Seconds a bridged env may take for one step before its worker is restarted.
    #[arg(long, env = "RLSOLVER_BRIDGE_STEP_TIMEOUT_S", default_value_t = 30.0)]
    bridge_step_timeout_s: f64,
}

impl BridgeArgs {
    fn apply(&self) -> Result<()> {
        use rlsolver::drl::env::gymnasium;
        anyhow::ensure!(
            self.bridge_step_timeout_s.is_finite() && self.bridge_step_timeout_s > 0.0,
            "--bridge-step-timeout-s: a positive number of seconds"
        );
        let mut config = gymnasium::BridgeConfig::default();
        if let Some(python) = &self.bridge_python {
            config.python = python.clone();
        }
        if let Some(workers) = self.bridge_workers {
            anyhow::ensure!(workers >= 1, "--bridge-workers: at least 1");
            config.max_workers = workers;
        }
        config.step_timeout = std::time::Duration::from_secs_f64(self.bridge_step_timeout_s);
        gymnasium::configure(config);
        Ok(())
    }
}

#[derive(Args)]
struct SolveArgs {
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
struct TuningArgs {
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

#[derive(Args)]
struct TrainArgs {
    /// Algorithm (see `rlsolver algorithms`).
    #[arg(long)]
    algo: String,
    /// Environment id, e.g. CartPole-v1, Pendulum-v1, or any Gymnasium env through the Python
    /// bridge: gymnasium:Hopper-v5, gymnasium:my_package.envs:MyEnv-v0.
    #[arg(long)]
    env: String,
    /// Env-step budget (summed over the batch of envs).
    #[arg(long, default_value_t = 100_000)]
    steps: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Evaluate every this many env steps (default: the library's, 5000 single-agent, 10000
    /// multi-agent).
    #[arg(long)]
    eval_every: Option<usize>,
    /// Deterministic evaluation episodes (default: the library's, 10 single-agent, 32 multi-agent).
    #[arg(long)]
    eval_episodes: Option<usize>,
    /// Stop when the evaluation mean reaches this.
    #[arg(long, allow_hyphen_values = true)]
    target_return: Option<f64>,
    /// Output folder: config.json, metrics.jsonl, weights (safetensors).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Prioritized experience replay (off-policy agents).
    #[arg(long)]
    per: bool,
    /// Off-policy random warm-up steps (the `learning_starts` hyperparameter; default: the
    /// algorithm's).
    #[arg(long)]
    learning_starts: Option<usize>,
    /// Continue the run checkpointed in --out exactly (agent, optimizer moments, replay, envs
    /// and random streams).
    #[arg(long)]
    resume: bool,
    /// A reached target counts only if this many further episodes confirm it (0 = no check;
    /// default: the library's, 100).
    #[arg(long)]
    confirm_episodes: Option<usize>,
    /// H-term weight lambda (0 = off).
    #[arg(long, default_value_t = 0.0)]
    h_term_lambda: f64,
    /// Hyperparameter overrides as a JSON object, e.g. '{"learning_rate": 0.001}'.
    #[arg(long, default_value = "{}")]
    hyper: String,
    /// An OR-Gym env's parameters changed from the id's, as a JSON object, e.g.
    /// '{"node_features": true}' for TSP-v0, or gymnasium.make's keyword arguments for a
    /// gymnasium: env, e.g. '{"forward_reward_weight": 2.0}' (single-agent runs).
    #[arg(long, alias = "env-kwargs")]
    env_config: Option<String>,
    /// Envs stepped as one batch (multi-agent runs; default: the algorithm's).
    #[arg(long)]
    num_envs: Option<usize>,
    /// On-policy runs on classic control: this many envs as tensors on --device, stepped
    /// without leaving it (e.g. 4096; no --out checkpoints yet).
    #[arg(long)]
    device_envs: Option<usize>,
    /// cpu, cuda or auto.
    #[arg(long, default_value = "cpu")]
    device: String,
    #[command(flatten)]
    bridge: BridgeArgs,
}

#[derive(Args)]
struct EvaluateArgs {
    /// Folder written by `train --out`.
    #[arg(long)]
    checkpoint: PathBuf,
    #[arg(long, default_value_t = 10)]
    episodes: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Args)]
struct GenerateArgs {
    /// Problem: maxcut (--nodes, --edges, --weights: Gset text), number_partitioning (--nodes
    /// numbers of --edges bits each: JSON), graph_coloring (--nodes, --edges between --colors
    /// planted colour classes plus a planted clique: DIMACS) or graph_partitioning (--nodes in
    /// two planted halves, --edges inside them and --cut across: METIS) or max_independent_set
    /// (--nodes groups of a forced model RB graph as BHOSLIB's frbN-K, optimum N: DIMACS) or
    /// tensor_network (a random circuit of --nodes qubits on a grid and --edges cycles: einsum JSON);
    /// each is the problem's own `Problem::generate`.
    problem: String,
    #[arg(long)]
    nodes: usize,
    /// Edges (number_partitioning: bits; tensor_network: cycles; max_independent_set: unused).
    #[arg(long, default_value_t = 0)]
    edges: usize,
    /// Comma-separated integer weights drawn uniformly, e.g. 1,-1.
    #[arg(long, default_value = "1", value_delimiter = ',', allow_hyphen_values = true)]
    weights: Vec<i64>,
    /// graph_coloring: the planted colour classes.
    #[arg(long, default_value_t = 8)]
    colors: usize,
    /// graph_partitioning: the edges across the planted halves.
    #[arg(long, default_value_t = 0)]
    cut: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Args)]
struct TrainPolicyArgs {
    /// Problem: mimo (beamforming network), compressive_sensing (LISTA), tensor_network (the
    /// pair-scoring contraction policy), ising (the message-passing policy of every Ising model) or orgym (an OR-Gym env's deep-RL policy). Every flag left out takes the library's default for that
    /// problem.
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

/// Every `bench` target; clap refuses any other name and lists these.
const BENCHES: [&str; 18] = [
    "maxcut",
    "drl",
    "mimo",
    "cs",
    "nphard",
    "tnco",
    "portfolio",
    "tsp",
    "orgym",
    "bifurcation",
    "backends",
    "device-envs",
    "ising-policy",
    "population",
    "apex",
    "bridge",
    "simulators",
    "trading",
];

#[derive(Args)]
struct BenchArgs {
    /// What to benchmark: maxcut (solution quality), drl (env throughput, time to threshold), mimo
    /// (sum rates), cs (phase transition), nphard (optima of the classical NP-hard sets), tnco
    /// (contraction orders against cotengra), portfolio (Chang et al.'s frontiers), tsp (TSPLIB
    /// tours against their optima), orgym (OR-Gym policies against their references, env
    /// throughput against or-gymnasium), bifurcation (simulated bifurcation on Gset at each
    /// time limit, --chains chains, default 1024, on --device), backends (the search with each
    /// of --backends at each time limit on --device: the Gset graphs named by --only, default
    /// G14,G15,G22,G49,G50, and a generated --torus-side torus), device-envs (classic control as
    /// tensors on --device and PPO on them against the native envs and loop) or ising-policy (the pretrained
    /// Ising policy against greedy and SA, and the search with and without it, on the Gset
    /// graphs named by --only, default G14,G15,G22,G49,G50, and generated 5,000 and 10,000-node
    /// graphs, at the first --time-limit) or population (PBT against independent runs at equal
    /// env steps: SAC on Pendulum-v1 and MADDPG on simple_spread, --seeds, --workers, wall time
    /// by --timing-workers; --only pendulum or spread) or apex (a learner with --rollouts rollout
    /// processes against the single-process loop at equal --updates) or bridge (gymnasium: envs
    /// through the Python bridge against gymnasium's own vector envs, peer run by --python) or
    /// simulators (our algorithms through the bridge against Stable-Baselines3 on MuJoCo and
    /// PyBullet tasks; --only, --seeds, --steps-scale) or trading (PPO and SAC on StockTrading-v0
    /// against buy-and-hold and mean-variance, out-of-sample, over --seeds markets).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(BENCHES))]
    problem: String,
    /// Folder of instances (maxcut: Gset .txt files, best-known values in its README.md; mimo:
    /// the folder holding rayleigh_k8_n8_100.json; nphard: the folder holding mis/; tnco: the
    /// folder of Sycamore adjacency lists; portfolio: the folder of portK.txt and portefK.txt;
    /// tsp: the folder of .tsp files with the optima in its README.md).
    #[arg(long, default_value = "../shared/data/gset")]
    instances: PathBuf,
    /// Comma-separated time limits in seconds, one column each.
    #[arg(long, default_value = "10,60", value_delimiter = ',')]
    time_limit: Vec<f64>,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[arg(long)]
    chains: Option<usize>,
    /// cpu, cuda or auto.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Also write the table to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    /// drl, tnco, orgym: Python interpreter with the peer (stable-baselines3; cotengra;
    /// or-gymnasium) for the peer measurements (none: ours only).
    #[arg(long)]
    python: Option<PathBuf>,
    /// drl, tnco, orgym: the peer script (default: benches/peers/sb3_peer.py;
    /// benches/peers/cotengra_peer.py; benches/peers/orgym_peer.py).
    #[arg(long)]
    peer_script: Option<PathBuf>,
    /// maxcut, nphard, tnco, portfolio, tsp: seeds of our runs (median and worst per cell); drl: seeds of the time-to-threshold runs.
    #[arg(long, default_value = "0,1,2,3,4", value_delimiter = ',')]
    seeds: Vec<u64>,
    /// nphard: only these problems' suites; ising-policy, backends: only these Gset graphs; orgym: only these sections (knapsack,
    /// knapsack-online (its v3 rows), binpacking, newsvendor, inventory, portfolio, tsp,
    /// vmpacking, routing, throughput); comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// simulators, trading: every budget times this (1: the full budgets).
    #[arg(long, default_value_t = 1.0)]
    steps_scale: f64,
    /// simulators: also train the off-policy tasks with each of these H-term weights.
    #[arg(long, value_delimiter = ',')]
    h_term_lambdas: Vec<f64>,
    /// orgym: evaluation episodes per row.
    #[arg(long, default_value_t = 1000)]
    episodes: usize,
    /// backends: the search backends compared (native, tensor, tempering, bifurcation;
    /// default native,tempering,bifurcation).
    #[arg(long, value_delimiter = ',')]
    backends: Vec<String>,
    /// backends: side of the generated toroidal spin glass (default 100: 10,000 nodes; 0: none).
    #[arg(long)]
    torus_side: Option<usize>,
    /// apex: rollout process counts (default 1,2,4).
    #[arg(long, value_delimiter = ',')]
    rollouts: Vec<usize>,
    /// apex: learner updates per run (default 10000).
    #[arg(long)]
    updates: Option<usize>,
    /// population: job workers of the quality runs.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// population: worker counts of the wall-time table (comma-separated; empty: none).
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    timing_workers: Vec<usize>,
}

/// A user error is one line on stderr and exit status 2: anyhow's `Debug` (what returning the
/// error from `main` prints) would add a stack backtrace whenever RUST_BACKTRACE is set.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", format!("{error:#}").replace('\n', " "));
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    let filter =
        || tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,tower_http=info".into());
    // The server logs through a bounded, lossy queue: a log reader that stalls costs dropped
    // lines (counted in /metrics), never a stalled request. The guard flushes at exit.
    let _log_guard = match &cli.command {
        Command::Serve(args) => {
            let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
                .lossy(true)
                .buffered_lines_limit(args.log_buffer_lines)
                .finish(std::io::stderr());
            rlsolver::api::metrics::count_dropped_log_lines(writer.error_counter());
            match args.log_format.as_str() {
                "json" => tracing_subscriber::fmt().json().with_env_filter(filter()).with_writer(writer).init(),
                "text" => tracing_subscriber::fmt().with_env_filter(filter()).with_writer(writer).init(),
                other => anyhow::bail!("--log-format: text or json, not '{other}'"),
            }
            Some(guard)
        }
        _ => {
            // Through the progress bar, when one is drawn, so that log lines print above it.
            // Colours only for a terminal: a piped stderr gets plain lines.
            tracing_subscriber::fmt()
                .with_env_filter(filter())
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_writer(rlsolver::progress::LogWriter)
                .init();
            None
        }
    };
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Solve(args) => solve(*args),
        Command::Bench(args) => bench(args),
        Command::Openapi => {
            print!("{}", rlsolver::api::openapi::openapi_json());
            Ok(())
        }
        Command::Generate(args) => {
            let problem = problems::find(&args.problem)?;
            let spec = problems::GenerateSpec {
                nodes: args.nodes,
                edges: args.edges,
                weights: args.weights,
                colors: args.colors,
                cut: args.cut,
                seed: args.seed,
            };
            let text = problem.generate(&spec).ok_or_else(|| {
                // Which problems generate, asked with a three-node spec (cheap for every generator).
                let tiny = problems::GenerateSpec { nodes: 3, edges: 1, cut: 0, colors: 1, ..spec.clone() };
                let generators: Vec<&str> =
                    problems::registry().iter().filter(|p| p.generate(&tiny).is_some()).map(|p| p.name()).collect();
                anyhow::anyhow!("{} has no generator; these do: {}", args.problem, generators.join(", "))
            })?;
            print!("{}", text.map_err(|e| anyhow::anyhow!(e))?);
            Ok(())
        }
        Command::Train(args) => {
            args.bridge.apply()?;
            let mut overrides: serde_json::Value = serde_json::from_str(&args.hyper).context("--hyper is not JSON")?;
            if let (Some(warmup), Some(patch)) = (args.learning_starts, overrides.as_object_mut()) {
                patch.insert("learning_starts".into(), warmup.into());
            }
            let request = rlsolver::drl::TrainRequest {
                algorithm: args.algo,
                env: args.env,
                total_steps: args.steps,
                seed: args.seed,
                eval_every: args.eval_every,
                eval_episodes: args.eval_episodes,
                target_return: args.target_return,
                confirm_episodes: args.confirm_episodes,
                overrides,
                env_config: match &args.env_config {
                    Some(text) => serde_json::from_str(text).context("--env-config is not JSON")?,
                    None => serde_json::Value::Null,
                },
                out_dir: args.out,
                resume: args.resume,
                device: Some(problems::parse_device(Some(&args.device))?),
                prioritized: args.per,
                h_term_lambda: args.h_term_lambda,
                num_envs: args.num_envs,
                device_envs: args.device_envs,
                hooks: Default::default(),
            };
            let what = format!("{} {}", request.algorithm, request.env);
            let _bar = rlsolver::progress::start(Measure::Steps(request.total_steps as u64), &what);
            let request = rlsolver::drl::TrainRequest { hooks: rlsolver::progress::training_hooks(), ..request };
            let summary = rlsolver::drl::train(&request)?;
            println!("{}", serde_json::to_string_pretty(&summary)?);
            Ok(())
        }
        Command::TrainPolicy(args) => train_policy(args),
        Command::Evaluate(args) => {
            let (mut learner, env_id) = rlsolver::drl::run::load_checkpoint(&args.checkpoint, tch::Device::Cpu)?;
            let env_config = rlsolver::drl::run::checkpoint_env_config(&args.checkpoint)?;
            let (mean, std) = rlsolver::drl::run::evaluate_learner(
                &mut learner,
                &env_id,
                &env_config,
                args.episodes,
                args.seed,
                tch::Device::Cpu,
            )?;
            println!(
                "{}",
                serde_json::json!({"env": env_id, "episodes": args.episodes, "return_mean": mean, "return_std": std})
            );
            Ok(())
        }
        Command::Algorithms => {
            for a in rlsolver::drl::algorithms::all() {
                println!(
                    "{}",
                    serde_json::json!({
                        "name": a.name, "action_space": a.action_spaces.join("|"), "family": a.family,
                        "multi_agent": a.multi_agent, "num_envs": a.num_envs, "hyperparameters": (a.defaults)(),
                    })
                );
            }
            Ok(())
        }
        Command::Problems => {
            for p in problems::registry() {
                println!("{}\t{}\t{}\t{}", p.name(), p.formats().join(","), p.baselines().join(","), p.summary());
            }
            Ok(())
        }
    }
}

fn serve(args: ServeArgs) -> Result<()> {
    args.bridge.apply()?;
    // RLSOLVER_API_KEYS (comma-separated) is read here rather than by clap so it never shows in --help output.
    let api_keys = rlsolver::api::auth::load_keys(
        args.api_keys_file.as_deref(),
        std::env::var("RLSOLVER_API_KEYS").ok().as_deref(),
    )?;
    let host = rlsolver::api::auth::serving_host(&args.host, api_keys.len());
    let config = ServerConfig {
        limits: args.limits,
        max_body_bytes: args.max_body_bytes,
        max_concurrent_solves: args.max_concurrent_solves,
        data_dir: args.data_dir.clone(),
        database_url: args.database_url.clone(),
        role: rlsolver::api::state::Role::parse(&args.role)
            .with_context(|| format!("--role: all, api, worker, evaluator, learner or rollout, not '{}'", args.role))?,
        jobs: rlsolver::jobs::JobsConfig {
            workers: args.training_workers,
            max_queued: args.max_queued_jobs,
            lease: std::time::Duration::try_from_secs_f64(args.job_lease_s)
                .ok()
                .filter(|d| *d >= std::time::Duration::from_millis(300))
                .context("--job-lease-s: at least 0.3 seconds")?,
            replica: args.replica.clone(),
            ..Default::default()
        },
        training_limits: rlsolver::jobs::training::TrainingLimits {
            max_total_steps: args.max_training_steps,
            resources: rlsolver::jobs::budget::ResourceLimits {
                max_parameters: args.max_training_parameters,
                max_memory_bytes: args.max_training_memory_mb << 20,
            },
            ..Default::default()
        },
        population_limits: Default::default(),
        learn: match &args.learn {
            Some(path) => Some(
                serde_json::from_str(
                    &std::fs::read_to_string(path).with_context(|| format!("--learn: reading {}", path.display()))?,
                )
                .with_context(|| format!("--learn: {}", path.display()))?,
            ),
            None => None,
        },
        learner_url: args.learner_url.clone(),
        api_keys,
        cors_origins: args.cors_origins.clone(),
        shutdown_drain: std::time::Duration::try_from_secs_f64(args.shutdown_drain_s)
            .ok()
            .filter(|d| *d <= std::time::Duration::from_secs(600))
            .context("--shutdown-drain-s: 0 to 600 seconds")?,
        models_dir: args.models_dir.clone(),
        problems: rlsolver::problems::ProblemSet::builtin(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host.as_str(), args.port))
            .await
            .with_context(|| format!("binding {host}:{}", args.port))?;
        rlsolver::api::serve(listener, config).await?;
        Ok(())
    })
}

fn solve(args: SolveArgs) -> Result<()> {
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
    let bar = rlsolver::progress::start(Measure::Seconds(prepared.params.time_limit_s), &name);
    if bar.is_some() {
        prepared.params.hooks.on_incumbent = Some(std::sync::Arc::new(|elapsed, objective| {
            rlsolver::progress::figure(format!("incumbent {objective} at {:.2} s", elapsed.as_secs_f64()));
        }));
    }
    let report = prepared.run().with_context(|| format!("{}", args.input.display()))?;
    drop(bar);
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

fn train_policy(args: TrainPolicyArgs) -> Result<()> {
    use rlsolver::policies::PolicyRequest;
    use rlsolver::problems::cs::lista::{ListaConfig, ListaTraining};
    use rlsolver::problems::mimo::policy::{PolicyConfig, TrainingConfig};
    let request = match args.problem.as_str() {
        "mimo" => {
            let (config, training) = (PolicyConfig::default(), TrainingConfig::default());
            PolicyRequest::Mimo {
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
            }
        }
        "compressive_sensing" => {
            let config = ListaConfig::new(args.measurements.unwrap_or(50), args.unknowns.unwrap_or(100));
            let training = ListaTraining::default();
            PolicyRequest::CompressiveSensing {
                config: ListaConfig { layers: args.layers.unwrap_or(config.layers), ..config },
                training: ListaTraining {
                    steps: args.steps.unwrap_or(training.steps),
                    batch: args.batch.unwrap_or(training.batch),
                    learning_rate: args.learning_rate.unwrap_or(training.learning_rate),
                    seed: args.seed,
                    ..training
                },
            }
        }
        "ising" => {
            use rlsolver::search::ising_policy::{IsingPolicyConfig, IsingPolicyTraining};
            let (config, training) = (IsingPolicyConfig::default(), IsingPolicyTraining::default());
            PolicyRequest::Ising {
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
            }
        }
        "tensor_network" => {
            use rlsolver::problems::tensor_network::policy::{PolicyConfig as PairConfig, PolicyTraining};
            let (config, training) = (PairConfig::default(), PolicyTraining::default());
            PolicyRequest::TensorNetwork {
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
            }
        }
        "orgym" => PolicyRequest::OrGym {
            env: args.env.context("orgym needs --env, e.g. Knapsack-v1")?,
            steps: args.steps.unwrap_or(60_000),
            seed: args.seed,
        },
        other => anyhow::bail!(
            "{}",
            rlsolver::suggest::unknown(
                "train-policy problem",
                other,
                ["mimo", "compressive_sensing", "tensor_network", "ising", "orgym"].into_iter()
            )
        ),
    };
    let _bar =
        rlsolver::progress::start(Measure::Steps(request.steps() as u64), &format!("train-policy {}", args.problem));
    let manifest = rlsolver::policies::train(&request, &args.out, args.name.as_deref())?;
    println!("{}", serde_json::to_string_pretty(&manifest)?);
    Ok(())
}

fn bench(args: BenchArgs) -> Result<()> {
    let _bar = rlsolver::progress::start(Measure::Rows, &format!("bench {}", args.problem));
    let report = match args.problem.as_str() {
        "maxcut" => rlsolver::bench::run_maxcut(&rlsolver::bench::BenchConfig {
            instances: args.instances,
            time_limits_s: args.time_limit,
            seeds: args.seeds.clone(),
            device: problems::parse_device(Some(&args.device))?,
            chains: args.chains,
        })?,
        "bifurcation" => {
            rlsolver::bench::bifurcation::run_bifurcation(&rlsolver::bench::bifurcation::BifurcationBenchConfig {
                instances: args.instances,
                time_limits_s: args.time_limit,
                seeds: args.seeds.clone(),
                device: problems::parse_device(Some(&args.device))?,
                chains: args.chains.unwrap_or(1024),
            })?
        }
        "device-envs" => {
            use rlsolver::bench::device_envs::{run_device_envs, DeviceEnvsBenchConfig};
            run_device_envs(&DeviceEnvsBenchConfig {
                device: problems::parse_device(Some(&args.device))?,
                seeds: args.seeds.clone(),
                ..DeviceEnvsBenchConfig::default()
            })?
        }
        "backends" => {
            use rlsolver::bench::backends::{run_backends, BackendsBenchConfig};
            let defaults = BackendsBenchConfig::default();
            let backends = args
                .backends
                .iter()
                .map(|name| {
                    problems::parse_backend(Some(name))?
                        .ok_or_else(|| anyhow::anyhow!("--backends: name one, not auto"))
                })
                .collect::<Result<Vec<_>>>()?;
            run_backends(&BackendsBenchConfig {
                instances: args.instances,
                graphs: if args.only.is_empty() { defaults.graphs } else { args.only.clone() },
                torus_side: args.torus_side.unwrap_or(defaults.torus_side),
                backends: if backends.is_empty() { defaults.backends } else { backends },
                time_limits_s: args.time_limit,
                seeds: args.seeds.clone(),
                device: problems::parse_device(Some(&args.device))?,
                chains: args.chains,
            })?
        }
        "ising-policy" => {
            use rlsolver::bench::ising_policy::{run_ising_policy, IsingPolicyBenchConfig};
            let defaults = IsingPolicyBenchConfig::default();
            let config = IsingPolicyBenchConfig {
                instances: args.instances,
                graphs: if args.only.is_empty() { defaults.graphs } else { args.only.clone() },
                time_limit_s: args.time_limit.first().copied().unwrap_or(defaults.time_limit_s),
                seeds: args.seeds.clone(),
                chains: args.chains.unwrap_or(defaults.chains),
            };
            run_ising_policy(&config)?
        }
        "bridge" => {
            use rlsolver::bench::bridge::{run_bridge, BridgeBenchConfig};
            run_bridge(&BridgeBenchConfig {
                peer: args.python.map(|python| {
                    (python, args.peer_script.unwrap_or_else(|| "benches/peers/gym_vector_peer.py".into()))
                }),
                ..Default::default()
            })?
        }
        "simulators" => {
            use rlsolver::bench::simulators::{run_simulators, SimulatorBenchConfig};
            run_simulators(&SimulatorBenchConfig {
                seeds: args.seeds.clone(),
                steps_scale: args.steps_scale,
                only: args.only.clone(),
                h_term_lambdas: args.h_term_lambdas.clone(),
                peer: args.python.map(|python| {
                    (python, args.peer_script.unwrap_or_else(|| "benches/peers/sb3_simulators_peer.py".into()))
                }),
            })?
        }
        "trading" => {
            use rlsolver::bench::trading::{run_trading, TradingBenchConfig};
            let defaults = TradingBenchConfig::default();
            let scaled = |steps: usize| ((steps as f64 * args.steps_scale) as usize).max(1000);
            run_trading(&TradingBenchConfig {
                seeds: args.seeds.clone(),
                ppo_steps: scaled(defaults.ppo_steps),
                sac_steps: scaled(defaults.sac_steps),
            })?
        }
        "apex" => {
            use rlsolver::bench::apex::{run_apex, ApexBenchConfig};
            let defaults = ApexBenchConfig::default();
            run_apex(&ApexBenchConfig {
                rollouts: if args.rollouts.is_empty() { defaults.rollouts } else { args.rollouts.clone() },
                seeds: args.seeds.clone(),
                updates: args.updates.unwrap_or(defaults.updates),
            })?
        }
        "population" => {
            use rlsolver::bench::population::{run_population, PopulationBenchConfig};
            run_population(&PopulationBenchConfig {
                seeds: args.seeds.clone(),
                workers: args.workers,
                timing_workers: args.timing_workers.clone(),
                only: args.only.clone(),
                ..PopulationBenchConfig::default()
            })?
        }
        "drl" => rlsolver::bench::drl::run_drl(&rlsolver::bench::drl::DrlBenchConfig {
            seeds: args.seeds,
            peer: args
                .python
                .map(|python| (python, args.peer_script.clone().unwrap_or_else(|| "benches/peers/sb3_peer.py".into()))),
            ..Default::default()
        })?,
        "tnco" => rlsolver::bench::tnco::run_tnco(&rlsolver::bench::tnco::TncoBenchConfig {
            time_limits_s: args.time_limit,
            seeds: args.seeds,
            peer: args
                .python
                .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/cotengra_peer.py".into()))),
            ..rlsolver::bench::tnco::TncoBenchConfig::in_folder(&args.instances)
        })?,
        "mimo" => rlsolver::bench::mimo::run_mimo(&rlsolver::bench::mimo::MimoBenchConfig {
            time_limit_s: args.time_limit[0],
            seed: args.seed,
            ..rlsolver::bench::mimo::MimoBenchConfig::in_folder(&args.instances)
        })?,
        "cs" => rlsolver::bench::cs::run_cs(&rlsolver::bench::cs::CsBenchConfig {
            time_limit_s: args.time_limit[0],
            seed: args.seed,
            ..Default::default()
        })?,
        "nphard" => rlsolver::bench::nphard::run_nphard(&rlsolver::bench::nphard::NphardBenchConfig {
            data: args.instances,
            time_limits_s: args.time_limit,
            seeds: args.seeds,
            only: args.only,
        })?,
        "portfolio" => rlsolver::bench::portfolio::run_portfolio(&rlsolver::bench::portfolio::PortfolioBenchConfig {
            seeds: args.seeds,
            time_limit_s: args.time_limit[0],
            ..rlsolver::bench::portfolio::PortfolioBenchConfig::in_folder(&args.instances)
        })?,
        "tsp" => rlsolver::bench::tsp::run_tsp(&rlsolver::bench::tsp::TspBenchConfig {
            time_limits_s: args.time_limit,
            seeds: args.seeds,
            ..rlsolver::bench::tsp::TspBenchConfig::in_folder(&args.instances)
        })?,
        "orgym" => rlsolver::bench::orgym::run_orgym(&rlsolver::bench::orgym::OrGymBenchConfig {
            peer: args
                .python
                .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/orgym_peer.py".into()))),
            episodes: args.episodes,
            only: args.only,
            ..Default::default()
        })?,
        other => unreachable!("clap admits only the BENCHES names, not '{other}'"),
    };
    print!("{report}");
    if let Some(path) = args.output {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, &report)?;
    }
    Ok(())
}
