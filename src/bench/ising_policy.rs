//! `bench ising-policy`: the pretrained Ising policy (`search::ising_policy`) on graphs it never
//! saw: the Gset files of a folder and generated graphs of 5,000 and
//! 10,000 nodes (an Erdos-Renyi graph of mean degree 6 with +-1 weights, and the 100 x 100
//! toroidal grid with +-1 couplings, a 2-D spin glass). Per graph and seed:
//! - the policy alone (its best of 16 greedily polished answers) and its wall time t_p;
//! - greedy restarts and single-chain SA given the same t_p, and SA given 10 ms;
//! - the search with and without the policy's starts at equal wall time (the run with them gets
//!   the time limit less the policy's time, as a solve does): the cut at the end and the time to
//!   the best-known cut (Gset) or to the better of the two runs' cuts (generated).
//!
//! Every cut is re-scored from the graph (`cut_value`), not taken from the solver's energy.

use super::maxcut::named_graphs;
use super::median_and_worst;
use anyhow::{Context, Result};
use rlsolver::problems::maxcut::generate::{random_gset, torus_gset};
use rlsolver::problems::maxcut::{baselines, parse_gset};
use rlsolver::problems::{IsingProblem, Limits};
use rlsolver::search::ising_policy::find_in;
use rlsolver::search::{minimize, SearchParams};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct IsingPolicyBenchConfig {
    /// The Gset folder (best-known values in its README.md); only `graphs` are read from it.
    pub instances: PathBuf,
    pub graphs: Vec<String>,
    /// The search's budget per run, seconds.
    pub time_limit_s: f64,
    pub seeds: Vec<u64>,
    /// Answers the policy samples.
    pub chains: usize,
}

impl Default for IsingPolicyBenchConfig {
    fn default() -> Self {
        IsingPolicyBenchConfig {
            instances: PathBuf::from("../shared/data/gset"),
            graphs: ["G14", "G15", "G22", "G49", "G50"].map(String::from).to_vec(),
            time_limit_s: 1.0,
            seeds: vec![0, 1, 2, 3, 4],
            chains: 16,
        }
    }
}

fn cell(values: &mut [f64], higher_is_better: bool, decimals: usize) -> String {
    let (median, worst) = median_and_worst(values, higher_is_better);
    let show = |v: f64| if v.is_finite() { format!("{v:.decimals$}") } else { "not reached".into() };
    format!("{} ({})", show(median), show(worst))
}

/// Runs the benchmark with the registry's (`models/`) Ising policy; returns the markdown report.
pub fn run_ising_policy(config: &IsingPolicyBenchConfig) -> Result<String> {
    let registry =
        rlsolver::models::ModelRegistry::load_dir(&rlsolver::models::default_dir(), rlsolver::problems::policy_loaders);
    let (policy, model) = find_in(&registry).context("no Ising policy in the model registry (make models)")?;
    let policy = policy.lock().expect("policy lock");
    let model_name = &model.manifest.name;
    let mut graphs = named_graphs(&config.instances, &config.graphs)?;
    let generated = [
        ("er-5000-d6", random_gset(5000, 15_000, &[-1, 1], 17)),
        ("er-10000-d6", random_gset(10_000, 30_000, &[-1, 1], 18)),
        ("torus-100x100", torus_gset(100, 19)),
    ];
    for (name, text) in generated {
        graphs.push((name.into(), parse_gset(&text, &Limits::default()).map_err(|e| anyhow::anyhow!("{e}"))?, None));
    }

    let mut report = String::new();
    writeln!(
        report,
        "Pretrained Ising policy `{model_name}` (best of {} answers, greedy polish) on graphs it never saw \
         (Gset; the generated ones above its training sizes); median (worst) over seeds {:?}; wall time per search {} s all told (the policy's time included in the run with it), one process on this machine.\n",
        config.chains, config.seeds, config.time_limit_s
    )?;
    writeln!(
        report,
        "| graph | nodes | best known | policy cut | policy ms | greedy at policy ms | SA at policy ms | SA at 10 ms | \
         search cut, with policy | search cut, without | time to target s, with | time to target s, without |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|---|---|---|---|---|")?;
    for (name, graph, best) in &graphs {
        crate::progress::row_done(format!("ising-policy bench: {name}"));
        let mut columns: Vec<Vec<f64>> = vec![Vec::new(); 9];
        for &seed in &config.seeds {
            let start = Instant::now();
            let answers = policy.sample(graph.ising(), config.chains, seed);
            let policy_time = start.elapsed();
            let policy_cut = graph.cut_value(&answers[0].0);
            let greedy = baselines::greedy(graph, policy_time, seed);
            let sa_equal = baselines::simulated_annealing(graph, policy_time, seed);
            let sa_10 = baselines::simulated_annealing(graph, Duration::from_millis(10), seed);
            // Equal wall time: the run with the policy's starts gets the budget less the policy's time.
            let search = |starts: Vec<Vec<i8>>, spent: Duration| {
                let params = SearchParams {
                    time_limit_s: (config.time_limit_s - spent.as_secs_f64()).max(0.0),
                    seed,
                    initial_states: starts,
                    target_energy: best.map(|b| graph.energy_for_objective(b)),
                    ..SearchParams::default()
                };
                minimize(graph.ising(), &params)
            };
            let with = search(answers.iter().map(|(s, _)| s.clone()).collect(), policy_time);
            let without = search(Vec::new(), Duration::ZERO);
            let (cut_with, cut_without) = (graph.cut_value(&with.spins), graph.cut_value(&without.spins));
            let target = best.unwrap_or(cut_with.max(cut_without));
            let reach = |outcome: &rlsolver::search::SearchOutcome, offset: Duration| {
                let energy = graph.energy_for_objective(target);
                outcome
                    .history
                    .iter()
                    .find(|i| i.energy <= energy + 1e-9)
                    .map_or(f64::INFINITY, |i| (i.elapsed + offset).as_secs_f64())
            };
            for (column, value) in columns.iter_mut().zip([
                policy_cut,
                policy_time.as_secs_f64() * 1e3,
                graph.cut_value(&greedy.spins),
                graph.cut_value(&sa_equal.spins),
                graph.cut_value(&sa_10.spins),
                cut_with,
                cut_without,
                reach(&with, policy_time),
                reach(&without, Duration::ZERO),
            ]) {
                column.push(value);
            }
        }
        let known = best.map_or("-".into(), |b| format!("{b}"));
        let [policy_cut, ms, greedy, sa_equal, sa_10, with, without, t_with, t_without] = &mut columns[..] else {
            unreachable!("nine columns")
        };
        writeln!(
            report,
            "| {name} | {} | {known} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            graph.num_nodes(),
            cell(policy_cut, true, 0),
            cell(ms, false, 1),
            cell(greedy, true, 0),
            cell(sa_equal, true, 0),
            cell(sa_10, true, 0),
            cell(with, true, 0),
            cell(without, true, 0),
            cell(t_with, false, 2),
            cell(t_without, false, 2),
        )?;
    }
    writeln!(
        report,
        "\nTime to target: the best-known cut on Gset, on generated graphs the better of the two searches' final cuts; \
         the run with the policy includes the policy's milliseconds. A search stops at the target."
    )?;
    Ok(report)
}

/// `rlsolver bench ising-policy`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> anyhow::Result<String> {
    let defaults = IsingPolicyBenchConfig::default();
    let config = IsingPolicyBenchConfig {
        instances: args.instances,
        graphs: if args.only.is_empty() { defaults.graphs } else { args.only.clone() },
        time_limit_s: args.time_limit.first().copied().unwrap_or(defaults.time_limit_s),
        seeds: args.seeds.clone(),
        chains: args.chains.unwrap_or(defaults.chains),
    };
    run_ising_policy(&config)
}
