//! Classical Max-Cut baselines, run in the same binary for side-by-side numbers.

use super::MaxCutInstance;
use crate::problems::IsingProblem;
use crate::search::tabu::{flip, greedy_descent};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// A baseline's best cut and when it found it.
#[derive(Debug, Clone)]
pub struct BaselineResult {
    pub cut: f64,
    pub spins: Vec<i8>,
    pub time_to_best: Duration,
}

fn random_spins(n: usize, rng: &mut ChaCha8Rng) -> Vec<i8> {
    (0..n).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect()
}

/// Greedy: steepest-ascent single flips from random starts, restarted until the time limit.
pub fn greedy(graph: &MaxCutInstance, time_limit: Duration, seed: u64) -> BaselineResult {
    let start = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut best: Option<BaselineResult> = None;
    loop {
        let mut spins = random_spins(graph.num_nodes(), &mut rng);
        let cut = graph.objective(greedy_descent(graph.ising(), &mut spins));
        if best.as_ref().is_none_or(|b| cut > b.cut) {
            best = Some(BaselineResult { cut, spins, time_to_best: start.elapsed() });
        }
        if start.elapsed() >= time_limit {
            return best.expect("at least one restart");
        }
    }
}

/// Single-chain simulated annealing (Kirkpatrick et al. 1983) with geometric cooling from
/// T0 = sqrt(mean degree) * mean|w| to T1 = 0.01 * mean|w| over the time limit.
pub fn simulated_annealing(graph: &MaxCutInstance, time_limit: Duration, seed: u64) -> BaselineResult {
    let start = Instant::now();
    let model = graph.ising();
    let n = model.num_spins();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut spins = random_spins(n, &mut rng);
    let mut fields = vec![0.0; n];
    model.local_fields(&spins, &mut fields);
    let scale = model.mean_abs_coupling();
    let mean_degree = 2.0 * model.couplings().len() as f64 / n as f64;
    let (t0, t1) = (mean_degree.sqrt().max(1.0) * scale, 0.01 * scale);
    let mut energy = model.energy(&spins);
    let mut best = BaselineResult { cut: graph.objective(energy), spins: spins.clone(), time_to_best: Duration::ZERO };
    let limit_s = time_limit.as_secs_f64().max(1e-3);
    let mut temperature = t0;
    for step in 0u64.. {
        if step % 4096 == 0 {
            let progress = start.elapsed().as_secs_f64() / limit_s;
            if progress >= 1.0 {
                break;
            }
            temperature = t0 * (t1 / t0).powf(progress);
        }
        let i = rng.gen_range(0..n);
        let delta = -2.0 * f64::from(spins[i]) * fields[i];
        if delta <= 0.0 || rng.gen::<f64>() < (-delta / temperature).exp() {
            flip(model, &mut spins, &mut fields, i);
            energy += delta;
            let cut = graph.objective(energy);
            if cut > best.cut + 1e-9 {
                best = BaselineResult { cut, spins: spins.clone(), time_to_best: start.elapsed() };
            }
        }
    }
    best.cut = graph.cut_value(&best.spins);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: u32) -> MaxCutInstance {
        MaxCutInstance::new(n as usize, (0..n).map(|i| (i, (i + 1) % n, 1.0)).collect())
    }

    #[test]
    fn baselines_cut_an_even_ring_completely_and_report_true_cut_values() {
        let graph = ring(20);
        for result in [
            greedy(&graph, Duration::from_millis(50), 1),
            simulated_annealing(&graph, Duration::from_millis(200), 1),
        ] {
            assert_eq!(result.cut, graph.cut_value(&result.spins));
            assert!(result.cut >= 18.0, "cut {}", result.cut);
        }
    }
}
