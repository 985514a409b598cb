//! The shipped Ising policy through the shared solve path: `method=policy` answers on
//! a graph it was not trained on, re-scored here from the edge list, beat the same number of
//! greedy descents from random spins; the search seeded by it reproduces; a named model of
//! another problem is a 422 on `model`.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rlsolver::problems::{find, solve, Limits, ProblemInput, SolveOptions};
use std::sync::Arc;

/// A random 3-regular-ish graph plus a ring (not one of the training families exactly), weights
/// +-1: (n, edges).
fn graph(n: usize, seed: u64) -> (usize, Vec<(usize, usize, f64)>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut edges = std::collections::BTreeMap::new();
    for i in 0..n {
        edges.insert((i.min((i + 1) % n), i.max((i + 1) % n)), 1.0);
        let j = rng.gen_range(0..n);
        if j != i {
            edges.insert((i.min(j), i.max(j)), if rng.gen_bool(0.5) { 1.0 } else { -1.0 });
        }
    }
    (n, edges.into_iter().map(|((u, v), w)| (u, v, w)).collect())
}

fn registry() -> Arc<rlsolver::models::ModelRegistry> {
    Arc::new(rlsolver::models::ModelRegistry::load_dir(
        &rlsolver::models::default_dir(),
        rlsolver::problems::policy_loaders,
    ))
}

#[test]
fn the_shipped_policy_beats_as_many_greedy_descents_and_seeds_a_reproducible_search() {
    let models = registry();
    assert!(models.get("ising-mp-l32-h16").is_some(), "the shipped Ising policy loads: {:?}", models.rejected);
    let maxcut = find("maxcut").unwrap();
    let (mut wins, mut improved) = (0, 0);
    for seed in 0..3u64 {
        let (n, edges) = graph(400, 100 + seed);
        let instance = serde_json::json!({
            "num_nodes": n,
            "edges": edges.iter().map(|&(u, v, w)| serde_json::json!([u, v, w])).collect::<Vec<_>>(),
        });
        let options = SolveOptions { method: Some("policy".into()), seed: Some(seed), ..Default::default() };
        let report = solve(maxcut, ProblemInput::Json(&instance), &options, &Limits::default(), &models).unwrap();
        let sides: Vec<u8> = serde_json::from_value(report.solution.clone()).unwrap();
        let rescored = common::cut_of(&edges, &sides);
        assert!((rescored - report.objective).abs() < 1e-9, "reported {} vs re-scored {rescored}", report.objective);
        let greedy = common::greedy_best_cut(n, &edges, 16, seed);
        eprintln!("seed {seed}: policy {rescored}, best of 16 greedy descents {greedy}");
        wins += usize::from(rescored > greedy);

        // Named, the policy gives the search its starts (unnamed, none): its first incumbent is
        // the policy's cut, two rounds improve on it, and the same seed and round budget give
        // the same cut.
        let search = SolveOptions {
            seed: Some(seed),
            max_rounds: Some(2),
            model: Some("ising-mp-l32-h16".into()),
            ..Default::default()
        };
        let a = solve(maxcut, ProblemInput::Json(&instance), &search, &Limits::default(), &models).unwrap();
        let b = solve(maxcut, ProblemInput::Json(&instance), &search, &Limits::default(), &models).unwrap();
        assert_eq!(a.solution, b.solution);
        let searched: Vec<u8> = serde_json::from_value(a.solution.clone()).unwrap();
        assert!((common::cut_of(&edges, &searched) - a.objective).abs() < 1e-9, "the search's cut re-scores");
        assert!(a.history.first().is_some_and(|h| h.objective >= rescored - 1e-9), "first incumbent is the policy's");
        eprintln!("seed {seed}: search from the policy {}", a.objective);
        improved += usize::from(a.objective > rescored);
    }
    assert!(wins >= 2, "the policy beat 16 greedy descents on {wins} of 3 graphs");
    assert_eq!(improved, 3, "two search rounds improved on the policy's cut on {improved} of 3 graphs");
}

#[test]
fn a_model_of_another_problem_is_refused_on_model() {
    let models = registry();
    let maxcut = find("maxcut").unwrap();
    let instance = serde_json::json!({"num_nodes": 3, "edges": [[0, 1], [1, 2]]});
    let options =
        SolveOptions { method: Some("policy".into()), model: Some("mimo-k4-n4-p10".into()), ..Default::default() };
    let error = solve(maxcut, ProblemInput::Json(&instance), &options, &Limits::default(), &models).unwrap_err();
    assert_eq!(error.field(), Some("model"), "{error}");
}
