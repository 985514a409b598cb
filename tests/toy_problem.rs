//! The `Problem` trait carries a constrained binary problem whose objective is not affine in
//! the energy: a toy weighted independent set (penalties in the Hamiltonian, a repair step, the
//! repaired set's weight as the objective), added to a server's problem set by this test alone
//! and solved end to end over HTTP. The streamed incumbents carry the decoded objective, and
//! every answer is re-scored here. A new problem is its module plus one row of a `ProblemSet`:
//! this file is all of it.

mod common;

use rlsolver::api::state::ServerConfig;
use rlsolver::problems::ising::IsingModel;
use rlsolver::problems::{
    HistoryPoint, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInfo, ProblemInput, ProblemSet, Row,
    SolveReport,
};
use rlsolver::search::{SearchParams, StopReason};
use serde_json::{json, Value};
use std::io::Read;
use std::sync::{Arc, Mutex};

struct ToyIndependentSet;

struct ToyInstance {
    weights: Vec<f64>,
    edges: Vec<(usize, usize)>,
    model: IsingModel,
    /// The energy of the all-down state's dropped constants (energy = qubo - offset).
    offset: f64,
}

impl ToyInstance {
    fn new(weights: Vec<f64>, edges: Vec<(usize, usize)>) -> Self {
        // minimize -sum w_i x_i + P sum_(i,j) x_i x_j, x = (1 + s) / 2, P above every weight.
        let penalty = 2.0 * weights.iter().fold(1.0f64, |m, w| m.max(*w));
        let mut fields: Vec<f64> = weights.iter().map(|w| -w / 2.0).collect();
        let mut couplings = Vec::new();
        for &(i, j) in &edges {
            couplings.push((i.min(j) as u32, i.max(j) as u32, penalty / 4.0));
            fields[i] += penalty / 4.0;
            fields[j] += penalty / 4.0;
        }
        let offset = -weights.iter().sum::<f64>() / 2.0 + penalty / 4.0 * edges.len() as f64;
        let model = IsingModel::new(weights.len(), couplings, fields);
        ToyInstance { weights, edges, model, offset }
    }

    /// Keeps the selected nodes in index order, dropping each that conflicts with a kept one.
    fn repair(&self, spins: &[i8]) -> Vec<bool> {
        let mut kept = vec![false; spins.len()];
        for i in 0..spins.len() {
            let conflict = self.edges.iter().any(|&(a, b)| (a == i && kept[b]) || (b == i && kept[a]));
            kept[i] = spins[i] > 0 && !conflict;
        }
        kept
    }

    fn score(&self, kept: &[bool]) -> f64 {
        kept.iter().zip(&self.weights).filter(|(k, _)| **k).map(|(_, w)| w).sum()
    }
}

impl Instance for ToyInstance {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        let history = Arc::new(Mutex::new(Vec::new()));
        let (recorded, repair) = (history.clone(), ToyInstance::new(self.weights.clone(), self.edges.clone()));
        let start = std::time::Instant::now();
        // Every incumbent's spins are repaired and scored: the objective the stream carries.
        let outer = params.hooks.decoded(move |spins, _| repair.score(&repair.repair(spins)));
        let forward = outer.clone();
        let hooks = rlsolver::search::hooks::SearchHooks {
            on_incumbent_state: Some(Arc::new({
                let scorer = ToyInstance::new(self.weights.clone(), self.edges.clone());
                move |elapsed, spins: &[i8], energy| {
                    let objective = scorer.score(&scorer.repair(spins));
                    recorded.lock().unwrap().push(HistoryPoint { elapsed_ms: elapsed.as_secs_f64() * 1e3, objective });
                    forward.incumbent_state(elapsed, spins, energy);
                }
            })),
            ..outer
        };
        let outcome = rlsolver::search::minimize(&self.model, &SearchParams { hooks, ..params.clone() });
        let kept = self.repair(&outcome.spins);
        let history = history.lock().unwrap().clone();
        SolveReport {
            problem: "toy_independent_set".into(),
            objective: self.score(&kept),
            energy: outcome.energy,
            solution: json!({"selected": kept.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i).collect::<Vec<_>>()}),
            status: outcome.stop,
            bound: None,
            gap: None,
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
            history,
            chains: outcome.chains,
            rounds: outcome.rounds,
            device: "cpu".into(),
            seed: params.seed,
        }
    }

    fn solve_baseline(&self, name: &str, _: &SearchParams, _: Models<'_>) -> Result<SolveReport, ProblemError> {
        Err(ProblemError::invalid("method", format!("no baseline '{name}'")))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        -objective - self.offset
    }

    fn size_summary(&self) -> String {
        format!("n={} edges={}", self.weights.len(), self.edges.len())
    }
}

impl ProblemCode for ToyIndependentSet {
    fn instance_schema(&self) -> Value {
        json!({"type": "object", "required": ["weights", "edges"]})
    }
    fn load(&self, input: ProblemInput<'_>, _: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        let ProblemInput::Json(value) = input else { return Err(ProblemError::invalid("body", "JSON only")) };
        let weights: Vec<f64> = serde_json::from_value(value["weights"].clone())
            .map_err(|e| ProblemError::invalid("weights", e.to_string()))?;
        let edges: Vec<(usize, usize)> = serde_json::from_value(value["edges"].clone())
            .map_err(|e| ProblemError::invalid("edges", e.to_string()))?;
        if edges.iter().any(|&(i, j)| i >= weights.len() || j >= weights.len() || i == j) {
            return Err(ProblemError::invalid("edges", "an endpoint is not a node"));
        }
        Ok(Box::new(ToyInstance::new(weights, edges)))
    }
}

/// Its registry row.
static TOY: Row<ToyIndependentSet> = Row {
    info: ProblemInfo {
        name: "toy_independent_set",
        summary: "test-only weighted independent set: penalties, repair, repaired weight",
        formats: &["json"],
        baselines: &[],
    },
    code: ToyIndependentSet,
};

/// A reproducible graph: node weights 1..=5, about `degree` neighbours each.
fn instance(n: usize, degree: usize, seed: u64) -> (Vec<f64>, Vec<(usize, usize)>) {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let weights = (0..n).map(|_| (next() % 5 + 1) as f64).collect();
    let mut edges = Vec::new();
    while edges.len() < n * degree / 2 {
        let (i, j) = (next() % n, next() % n);
        if i != j && !edges.contains(&(i.min(j), i.max(j))) {
            edges.push((i.min(j), i.max(j)));
        }
    }
    (weights, edges)
}

/// The weight of `selected` if it is an independent set of the graph, else None.
fn rescore(weights: &[f64], edges: &[(usize, usize)], selected: &Value) -> Option<f64> {
    let nodes: Vec<usize> = serde_json::from_value(selected.clone()).ok()?;
    let independent = edges.iter().all(|(i, j)| !(nodes.contains(i) && nodes.contains(j)));
    independent.then(|| nodes.iter().map(|&i| weights[i]).sum())
}

fn brute_force(weights: &[f64], edges: &[(usize, usize)]) -> f64 {
    (0u32..1 << weights.len())
        .filter(|mask| edges.iter().all(|&(i, j)| mask >> i & 1 == 0 || mask >> j & 1 == 0))
        .map(|mask| (0..weights.len()).filter(|i| mask >> i & 1 == 1).map(|i| weights[i]).sum::<f64>())
        .fold(0.0, f64::max)
}

#[test]
fn a_constrained_problem_with_a_repair_step_solves_over_http_and_streams_its_decoded_objective() {
    let base = common::start_server(ServerConfig { problems: ProblemSet::with(&[&TOY]), ..Default::default() });
    let c = reqwest::blocking::Client::new();
    let listed: Vec<Value> = c.get(format!("{base}/v1/problems")).send().unwrap().json().unwrap();
    assert!(listed.iter().any(|p| p["name"] == "toy_independent_set"));

    // Small: enumerated exactly, so the answer is the brute-force optimum.
    let (weights, edges) = instance(14, 3, 1);
    let body = json!({"instance": {"weights": weights, "edges": edges}, "options": {"seed": 2}});
    let report: Value =
        c.post(format!("{base}/v1/problems/toy_independent_set/solve")).json(&body).send().unwrap().json().unwrap();
    let optimum = brute_force(&weights, &edges);
    assert_eq!(rescore(&weights, &edges, &report["solution"]["selected"]), Some(optimum), "{report}");
    assert_eq!((report["objective"].as_f64(), report["status"].as_str()), (Some(optimum), Some("optimal")));

    // Larger, as a job: searched, every incumbent streamed as the repaired set's weight.
    let (weights, edges) = instance(60, 4, 3);
    let job = json!({"problem": "toy_independent_set", "instance": {"weights": weights, "edges": edges},
                     "options": {"time_limit_s": 2, "seed": 1}});
    let accepted: Value = c.post(format!("{base}/v1/solve/jobs")).json(&job).send().unwrap().json().unwrap();
    let id = accepted["id"].as_str().unwrap();
    let streamed = || {
        let mut stream = String::new();
        c.get(format!("{base}/v1/solve/jobs/{id}/events")).send().unwrap().read_to_string(&mut stream).unwrap();
        assert!(stream.starts_with("event: state"), "{stream}");
        common::streamed_objectives(&stream)
    };
    // Opened while the job runs or after it ended, a stream carries the whole recorded curve,
    // each point once.
    let incumbents = streamed();
    let curve: Vec<Value> = c.get(format!("{base}/v1/solve/jobs/{id}/incumbents")).send().unwrap().json().unwrap();
    let recorded: Vec<f64> = curve.iter().map(|p| p["objective"].as_f64().unwrap()).collect();
    assert!(!recorded.is_empty());
    assert_eq!(incumbents, recorded);
    assert_eq!(streamed(), recorded);
    let finished: Value = c.get(format!("{base}/v1/solve/jobs/{id}")).send().unwrap().json().unwrap();
    let result = &finished["result"];
    let weight = rescore(&weights, &edges, &result["solution"]["selected"]).expect("an independent set");
    assert_eq!(result["objective"].as_f64(), Some(weight), "{result}");
    // The stream carries objectives (positive weights of repaired sets), not energies, and its
    // last value is the answer's.
    assert!(incumbents.iter().all(|&o| o >= 0.0 && o <= weights.iter().sum::<f64>()), "{incumbents:?}");
    assert_eq!(*incumbents.last().unwrap(), weight, "{incumbents:?}");
    assert_ne!(result["energy"].as_f64(), Some(weight));
    let status = result["status"].as_str().unwrap();
    assert!([StopReason::Converged, StopReason::TimeLimit].iter().any(|s| serde_json::to_value(s).unwrap() == status));
}
