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

/// Burer, Monteiro & Zhang (2002) rank-two relaxation (CirCut; MQLib's BURER2002): minimise
/// f(theta) = sum w_ij cos(theta_i - theta_j) over angles, take the best cut through the origin
/// (x_i = +1 iff theta_i in [alpha, alpha + pi)), polish by single flips, then restart from the
/// best cut's angles plus noise until the time limit.
pub fn rank_two(graph: &MaxCutInstance, time_limit: Duration, seed: u64) -> BaselineResult {
    use std::f64::consts::PI;
    let start = Instant::now();
    let model = graph.ising();
    let n = model.num_spins();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut theta: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..2.0 * PI)).collect();
    let mut best: Option<BaselineResult> = None;
    loop {
        minimize_angles(graph, &mut theta, 300);
        let mut spins = best_cut_through_origin(graph, &theta);
        let cut = graph.objective(greedy_descent(model, &mut spins));
        if best.as_ref().is_none_or(|b| cut > b.cut) {
            best = Some(BaselineResult { cut, spins, time_to_best: start.elapsed() });
        }
        if start.elapsed() >= time_limit {
            return best.expect("at least one iteration");
        }
        let incumbent = &best.as_ref().expect("set above").spins;
        for (t, &s) in theta.iter_mut().zip(incumbent) {
            // CirCut's perturbation: the incumbent's angles (0 or pi) plus noise.
            *t = if s > 0 { 0.0 } else { PI } + rng.gen_range(-0.5..0.5) * PI;
        }
    }
}

/// Gradient descent with an adaptive step on f(theta) = sum w_ij cos(theta_i - theta_j).
fn minimize_angles(graph: &MaxCutInstance, theta: &mut [f64], iterations: usize) {
    let objective =
        |t: &[f64]| graph.edges().iter().map(|&(i, j, w)| w * (t[i as usize] - t[j as usize]).cos()).sum::<f64>();
    let mut gradient = vec![0.0; theta.len()];
    let mut trial = theta.to_vec();
    let mut value = objective(theta);
    let mut step = 0.1;
    for _ in 0..iterations {
        gradient.iter_mut().for_each(|g| *g = 0.0);
        for &(i, j, w) in graph.edges() {
            let d = -w * (theta[i as usize] - theta[j as usize]).sin();
            gradient[i as usize] += d;
            gradient[j as usize] -= d;
        }
        loop {
            trial.iter_mut().zip(theta.iter()).zip(&gradient).for_each(|((t, &x), &g)| *t = x - step * g);
            let candidate = objective(&trial);
            if candidate < value {
                value = candidate;
                theta.copy_from_slice(&trial);
                step *= 1.5;
                break;
            }
            step *= 0.5;
            if step < 1e-9 {
                return;
            }
        }
    }
}

/// The best of the n cuts x_i = +1 iff theta_i in [alpha, alpha + pi), by sweeping alpha over
/// [0, pi): each node changes side once, at theta_i mod pi.
fn best_cut_through_origin(graph: &MaxCutInstance, theta: &[f64]) -> Vec<i8> {
    use std::f64::consts::PI;
    let model = graph.ising();
    let n = theta.len();
    let angle: Vec<f64> = theta.iter().map(|t| t.rem_euclid(2.0 * PI)).collect();
    let mut spins: Vec<i8> = angle.iter().map(|&a| if a < PI { 1 } else { -1 }).collect();
    let start_spins = spins.clone();
    let mut fields = vec![0.0; n];
    model.local_fields(&spins, &mut fields);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| (angle[a] % PI).total_cmp(&(angle[b] % PI)));
    let mut energy = model.energy(&spins);
    let (mut best_energy, mut best_prefix) = (energy, 0);
    for (k, &i) in order.iter().enumerate() {
        energy += -2.0 * f64::from(spins[i]) * fields[i];
        flip(model, &mut spins, &mut fields, i);
        if energy < best_energy {
            best_energy = energy;
            best_prefix = k + 1;
        }
    }
    let mut result = start_spins;
    for &i in &order[..best_prefix] {
        result[i] = -result[i];
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: u32) -> MaxCutInstance {
        MaxCutInstance::new(n as usize, (0..n).map(|i| (i, (i + 1) % n, 1.0)).collect())
    }

    #[test]
    fn baselines_cut_an_even_ring_nearly_completely_and_report_true_cut_values() {
        let graph = ring(20);
        for result in [
            greedy(&graph, Duration::from_millis(50), 1),
            simulated_annealing(&graph, Duration::from_millis(200), 1),
            rank_two(&graph, Duration::from_millis(100), 1),
        ] {
            assert_eq!(result.cut, graph.cut_value(&result.spins));
            assert!(result.cut >= 18.0, "cut {}", result.cut);
        }
    }
}
