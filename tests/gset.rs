//! Real Gset graphs from ../shared (DEVELOPERS.md: fail under CI=true when missing, else skip):
//! seeded searches with round budgets reach the figures the README's Max-Cut table documents,
//! each cut re-scored here from the file's edge list.

mod common;

use rlsolver::problems::maxcut::parse_gset;
use rlsolver::problems::{IsingProblem, Limits};
use rlsolver::search::{minimize, SearchParams};

#[test]
fn every_shared_gset_graph_parses_with_the_sizes_its_readme_states() {
    let Some(dir) = common::shared_gset() else { return };
    for (name, n, m) in [
        ("G1", 800, 19176),
        ("G14", 800, 4694),
        ("G15", 800, 4661),
        ("G22", 2000, 19990),
        ("G49", 3000, 6000),
        ("G50", 3000, 6000),
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let graph = parse_gset(&text, &Limits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((graph.num_nodes(), graph.edges().len()), (n, m), "{name}");
    }
}

// Round budgets; every bar below holds on seeds 0, 1 and 2 (G14 3061 / 3063 / 3061, G15 3049 /
// 3049 / 3050, G22 13358 on all three, G1, G49 and G50 at their best-known cuts); the tests run
// seed 0.
const ROUNDS_G14: usize = 120;
const ROUNDS_G1: usize = 10;
const ROUNDS_G49: usize = 10;
const ROUNDS_G50: usize = 30;
const ROUNDS_G15: usize = 120;
const ROUNDS_G22: usize = 80;

/// A seeded search with a round budget (the same answer on any machine, however loaded) on a
/// shared graph: the cut re-scored here from the file's edges, checked against the reported one.
fn rounds_on(name: &str, rounds: usize, seed: u64) -> Option<f64> {
    let dir = common::shared_gset()?;
    let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
    let graph = parse_gset(&text, &Limits::default()).unwrap();
    let params = SearchParams {
        time_limit_s: 600.0,
        max_rounds: Some(rounds),
        chains: Some(4),
        seed,
        ..SearchParams::default()
    };
    let outcome = minimize(graph.ising(), &params);
    let sides: Vec<u8> = outcome.spins.iter().map(|&s| u8::from(s > 0)).collect();
    let (_, edges) = common::gset_edges(&text);
    let cut = common::cut_of(&edges, &sides);
    assert_eq!(cut, graph.objective(outcome.energy), "{name}: the reported energy is not the cut's");
    eprintln!("{name}: {cut} after at most {rounds} rounds ({:?})", outcome.stop);
    Some(cut)
}

/// G14 at the documented bar (`make bench`: 3060 at 10 s; best known 3064). Greedy local search
/// from random starts reaches about 2950-2990.
#[test]
fn g14_reaches_the_documented_3060_within_a_round_budget() {
    let Some(cut) = rounds_on("G14", ROUNDS_G14, 0) else { return };
    assert!(cut >= 3060.0, "G14: {cut}");
}

/// The graphs the search solves in seconds reach their best-known cuts (proved optimal for G49)
/// within a small round budget: G1 11624, G49 6000, G50 5880.
#[test]
fn g1_g49_and_g50_reach_their_best_known_cuts_within_a_round_budget() {
    for (name, best, rounds) in [("G1", 11624.0, ROUNDS_G1), ("G49", 6000.0, ROUNDS_G49), ("G50", 5880.0, ROUNDS_G50)] {
        let Some(cut) = rounds_on(name, rounds, 0) else { return };
        assert_eq!(cut, best, "{name}");
    }
}

/// G15 and G22 at the bars `make bench` holds the 60 s search to (best known 3050 and 13359; the
/// strongest classical peer, MQLib's BURER2002, reached 3045 and 13351 in 60 s).
#[test]
fn g15_and_g22_reach_their_bench_bars_within_a_round_budget() {
    for (name, bar, rounds) in [("G15", 3046.0, ROUNDS_G15), ("G22", 13351.0, ROUNDS_G22)] {
        let Some(cut) = rounds_on(name, rounds, 0) else { return };
        assert!(cut >= bar, "{name}: {cut} below {bar}");
    }
}
