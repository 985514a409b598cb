//! `rlsolver bench qubo`: QUBO instances of Beasley's OR-Library kind (J. E. Beasley, "Heuristic
//! algorithms for the unconstrained binary quadratic programming problem", 1998: density 10%,
//! integer entries uniform in [-100, 100]), generated here in MQLib's QUBO text with fixed
//! generator seeds, solved through the `qubo` endpoint's path once per seed and limit. With a
//! Python (`--python`), the peers run the same files, limits and seeds
//! (benches/peers/maxcut_peer.py): MQLib's PALUBECKIS2004bMST2 (the strongest QUBO heuristic of
//! its paper) and hyper-heuristic, and dwave-samplers' TabuSampler. Every answer is re-scored
//! here from its assignment as MQLib's objective x'Qx (maximised); a cell is the median and, in
//! brackets, the worst over the seeds.

use super::median_and_worst;
use anyhow::{Context, Result};
use rand::{Rng, SeedableRng};
use rlsolver::models::ModelRegistry;
use rlsolver::problems::{Limits, Models, ProblemInput};
use rlsolver::search::SearchParams;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Sizes of the generated instances (Beasley's bqp250, bqp1000 and bqp2500 sizes).
const SIZES: [usize; 3] = [250, 1_000, 2_500];
/// Share of the pairs with an entry.
const DENSITY: f64 = 0.1;
/// Generator seed of every instance (the solvers' seeds are the bench's `--seeds`).
const GENERATOR_SEED: u64 = 101;
/// The peers, in the peer script's names.
const PEERS: &[&str] = &["palubeckis", "mqlib-hh-qubo", "dwave-tabu-qubo"];

#[derive(Debug, Clone)]
pub struct QuboBenchConfig {
    pub time_limits_s: Vec<f64>,
    pub seeds: Vec<u64>,
    /// Python with dwave-samplers, and the peer script (None: ours only).
    pub peer: Option<(PathBuf, PathBuf)>,
}

/// A bqp-style instance of `n` variables: MQLib's QUBO text and its entries (i, j, q), 0-based.
fn generate(n: usize, seed: u64) -> (String, Vec<(usize, usize, f64)>) {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ n as u64);
    let mut entries = Vec::new();
    for i in 0..n {
        for j in i..n {
            if rng.gen::<f64>() < DENSITY {
                let q = rng.gen_range(-100i64..=100);
                if q != 0 {
                    entries.push((i, j, q as f64));
                }
            }
        }
    }
    let mut text = format!("{n} {}\n", entries.len());
    for &(i, j, q) in &entries {
        writeln!(text, "{} {} {q}", i + 1, j + 1).expect("a String");
    }
    (text, entries)
}

/// MQLib's objective of `x`: a diagonal entry counts q x_i, an off-diagonal one 2 q x_i x_j.
fn objective(entries: &[(usize, usize, f64)], x: &[u8]) -> f64 {
    entries
        .iter()
        .map(|&(i, j, q)| {
            let on = f64::from(x[i] * x[j]);
            if i == j {
                q * on
            } else {
                2.0 * q * on
            }
        })
        .sum()
}

/// The lowest-energy sample of our answer (a dimod SampleSet over labels 1..n) as x in the
/// file's order.
fn our_assignment(solution: &serde_json::Value, n: usize) -> Result<Vec<u8>> {
    let labels: Vec<usize> = serde_json::from_value(solution["variable_labels"].clone())?;
    let rows: Vec<Vec<u8>> = serde_json::from_value(solution["sample_data"]["data"].clone())?;
    let first = rows.first().context("no sample")?;
    let mut x = vec![0u8; n];
    for (label, &value) in labels.iter().zip(first) {
        x[label - 1] = value;
    }
    Ok(x)
}

pub fn run_qubo(config: &QuboBenchConfig) -> Result<String> {
    anyhow::ensure!(!config.seeds.is_empty() && !config.time_limits_s.is_empty(), "need a seed and a time limit");
    let problem = rlsolver::problems::find("qubo").map_err(|e| anyhow::anyhow!("{e}"))?;
    let registry = ModelRegistry::empty(rlsolver::problems::policy_loaders);
    let models = Models { registry: &registry, requested: None };
    let peers: &[&str] = if config.peer.is_some() { PEERS } else { &[] };
    let columns: Vec<String> = std::iter::once("ours")
        .chain(peers.iter().copied())
        .flat_map(|who| config.time_limits_s.iter().map(move |t| format!("{who} {t} s")))
        .collect();
    let mut report = format!(
        "| instance | n | entries | {} |\n|---|---|---|{}\n",
        columns.join(" | "),
        "---|".repeat(columns.len())
    );
    let dir = std::env::temp_dir().join(format!("rlsolver-qubo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    for n in SIZES {
        let (text, entries) = generate(n, GENERATOR_SEED);
        let name = format!("bqp{n}_s{GENERATOR_SEED}");
        let file = dir.join(format!("{name}.txt"));
        std::fs::write(&file, &text)?;
        let instance =
            problem.load(ProblemInput::Text(&text), &Limits::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let mut row = format!("| {name} | {n} | {} |", entries.len());
        for &limit in &config.time_limits_s {
            let mut values = Vec::new();
            for &seed in &config.seeds {
                crate::progress::figure(format!("measuring {name} at {limit} s, seed {seed}"));
                let params = SearchParams { time_limit_s: limit, seed, ..SearchParams::default() };
                let solved = instance.solve(&params, models);
                let value = objective(&entries, &our_assignment(&solved.solution, n)?);
                anyhow::ensure!(
                    (value + solved.objective).abs() < 1e-6 * value.abs().max(1.0),
                    "{name}: reported energy {} re-scores as {}",
                    solved.objective,
                    -value
                );
                crate::progress::row_done(format!("{name} {limit} s seed {seed}: {value}"));
                values.push(value);
            }
            let (median, worst) = median_and_worst(&mut values, true);
            write!(row, " {median} ({worst}) |")?;
        }
        if let Some((python, script)) = &config.peer {
            for peer in peers {
                for &limit in &config.time_limits_s {
                    let sizes = (n, limit, config.seeds.as_slice());
                    row += &super::peer_sides_cell((python, script), peer, &file, sizes, |x| objective(&entries, x))?;
                }
            }
        }
        crate::progress::row_done(row.clone());
        report.push_str(&row);
        report.push('\n');
    }
    let _ = std::fs::remove_dir_all(&dir);
    writeln!(
        report,
        "\nInstances: Beasley's bqp kind (density {DENSITY}, integer entries uniform in [-100, 100]) generated by this bench \
         with seed {GENERATOR_SEED}, in MQLib's QUBO text. Cells: x'Qx (MQLib's objective, maximised) re-scored from each \
         answer, median (worst) over seeds {:?}. Peers (benches/peers/maxcut_peer.py): MQLib's PALUBECKIS2004bMST2 and \
         hyper-heuristic (`make mqlib`), dwave-samplers' TabuSampler (one read, its timeout the limit).",
        config.seeds
    )?;
    Ok(report)
}

/// `rlsolver bench qubo`: the report, configured by the command's flags.
pub fn from_args(args: super::Args) -> Result<String> {
    run_qubo(&QuboBenchConfig {
        time_limits_s: args.time_limit,
        seeds: args.seeds,
        peer: args
            .python
            .map(|python| (python, args.peer_script.unwrap_or_else(|| "benches/peers/maxcut_peer.py".into()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_text_reads_back_as_the_entries_and_scores_as_x_q_x() {
        let (text, entries) = generate(30, 7);
        let bqm = rlsolver::problems::qubo::parse_mqlib(&text, &Limits::default()).unwrap();
        // Every x's energy in the loaded model is minus MQLib's objective.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        for _ in 0..20 {
            let x: Vec<u8> = (0..30).map(|_| rng.gen_range(0..2)).collect();
            let spins: Vec<i8> = x.iter().map(|&b| if b == 1 { 1 } else { -1 }).collect();
            assert!((bqm.energy(&spins) + objective(&entries, &x)).abs() < 1e-9);
        }
    }
}
