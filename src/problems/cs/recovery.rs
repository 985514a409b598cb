//! Sparse recovery of x from y = A x + e (A: m x n, row-major f64): OMP, ISTA and FISTA for the
//! LASSO, and a parallel MCMC over supports of a fixed size on the energy E(S) = ||y - A_S x_S||^2
//! with x_S the least-squares fit on S.

use crate::problems::random::standard_normal;
use crate::search::hooks::SearchHooks;
use nalgebra::{DMatrix, DVector};
use ndarray::{Array2, ArrayView1, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// A dense m x n matrix (ndarray, row-major).
pub type Matrix = Array2<f64>;

/// A x
pub fn apply(a: &Matrix, x: &[f64]) -> Vec<f64> {
    a.dot(&ArrayView1::from(x)).to_vec()
}

/// A^T r
pub fn apply_t(a: &Matrix, r: &[f64]) -> Vec<f64> {
    a.t().dot(&ArrayView1::from(r)).to_vec()
}

/// ||A||_2^2 by power iteration (the Lipschitz constant of the LASSO gradient).
pub fn spectral_norm_squared(a: &Matrix) -> f64 {
    let mut v = vec![1.0 / (a.ncols() as f64).sqrt(); a.ncols()];
    let mut value = 0.0;
    for _ in 0..100 {
        let w = apply_t(a, &apply(a, &v));
        value = norm(&w);
        if value == 0.0 {
            return 0.0;
        }
        v = w.iter().map(|x| x / value).collect();
    }
    value
}

pub fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn residual(a: &Matrix, y: &[f64], x: &[f64]) -> Vec<f64> {
    apply(a, x).iter().zip(y).map(|(ax, yi)| yi - ax).collect()
}

/// Least squares on the columns `support`: (x on the support, residual norm squared). Normal
/// equations A_S^T A_S x = A_S^T y by Cholesky (nalgebra) with a tiny ridge for near-singular
/// supports.
pub fn least_squares(a: &Matrix, y: &[f64], support: &[usize]) -> (Vec<f64>, f64) {
    let k = support.len();
    if k == 0 {
        return (Vec::new(), y.iter().map(|v| v * v).sum());
    }
    let columns = a.select(Axis(1), support);
    let y_view = ArrayView1::from(y);
    let mut gram = columns.t().dot(&columns);
    let b = columns.t().dot(&y_view);
    let ridge = 1e-12 * gram.diag().sum() / k as f64 + 1e-300;
    gram.diag_mut().mapv_inplace(|d| d + ridge);
    let gram = DMatrix::from_row_iterator(k, k, gram.iter().copied());
    let b = DVector::from_iterator(k, b.iter().copied());
    let z: Vec<f64> = match gram.clone().cholesky() {
        Some(factor) => factor.solve(&b).iter().copied().collect(),
        // Not positive definite even with the ridge (duplicate columns): the minimum-norm fit.
        None => gram.svd(true, true).solve(&b, 1e-12).map(|x| x.iter().copied().collect()).unwrap_or(vec![0.0; k]),
    };
    let fitted = columns.dot(&ArrayView1::from(&z[..]));
    let residual = (&y_view - &fitted).mapv(|v| v * v).sum();
    (z, residual)
}

/// Orthogonal matching pursuit: adds the column most correlated with the residual and refits,
/// `k` times, or until the residual norm is at most `tolerance`.
pub fn omp(a: &Matrix, y: &[f64], k: usize, tolerance: f64) -> Vec<f64> {
    let mut support: Vec<usize> = Vec::new();
    let mut x = vec![0.0; a.ncols()];
    let mut r = y.to_vec();
    while support.len() < k.min(a.nrows()) && norm(&r) > tolerance {
        let c = apply_t(a, &r);
        let j = (0..a.ncols())
            .filter(|j| !support.contains(j))
            .max_by(|&p, &q| c[p].abs().total_cmp(&c[q].abs()))
            .expect("a free column");
        support.push(j);
        let (z, _) = least_squares(a, y, &support);
        x = vec![0.0; a.ncols()];
        for (p, &s) in support.iter().enumerate() {
            x[s] = z[p];
        }
        r = residual(a, y, &x);
    }
    x
}

/// The LASSO weight: lambda = max(1e-4 ||A^T y||_inf, sigma sqrt(2 log n)) (the noise term is
/// the universal threshold of Donoho and Johnstone; the floor approximates basis pursuit).
pub fn lasso_lambda(a: &Matrix, y: &[f64], noise: f64) -> f64 {
    let correlation = apply_t(a, y).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    (1e-4 * correlation).max(noise * (2.0 * (a.ncols() as f64).ln()).sqrt())
}

fn soft_threshold(v: f64, t: f64) -> f64 {
    v.signum() * (v.abs() - t).max(0.0)
}

/// ISTA (`accelerated` = false) or FISTA (Beck and Teboulle 2009) on 0.5 ||y - A x||^2 + lambda
/// ||x||_1, step 1/L, with lambda continued geometrically from ||A^T y||_inf / 2 down to `lambda`
/// over the first half of the iterations (a standard warm start).
pub fn lasso(a: &Matrix, y: &[f64], lambda: f64, iterations: usize, accelerated: bool) -> Vec<f64> {
    let l = spectral_norm_squared(a).max(1e-300);
    let start_lambda = (apply_t(a, y).iter().fold(0.0f64, |m, v| m.max(v.abs())) / 2.0).max(lambda);
    let mut x = vec![0.0; a.ncols()];
    let mut z = x.clone();
    let mut t = 1.0f64;
    let half = (iterations / 2).max(1);
    for it in 0..iterations {
        let current =
            if it < half { start_lambda * (lambda / start_lambda).powf(it as f64 / half as f64) } else { lambda };
        let point = if accelerated { &z } else { &x };
        let g = apply_t(a, &residual(a, y, point));
        let next: Vec<f64> = point.iter().zip(&g).map(|(p, gi)| soft_threshold(p + gi / l, current / l)).collect();
        if accelerated {
            let t_next = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
            z = next.iter().zip(&x).map(|(n, o)| n + (t - 1.0) / t_next * (n - o)).collect();
            t = t_next;
        }
        x = next;
    }
    x
}

/// The support search's outcome.
pub struct SupportSearch {
    pub x: Vec<f64>,
    pub energy: f64,
    pub iterations: usize,
    pub chains: usize,
    pub history: Vec<(Duration, f64)>,
}

/// Parallel MCMC over supports of size `k`: every chain proposes swapping one index of its
/// support for one outside (the outside index drawn among the columns most correlated with the
/// residual half of the time, uniformly otherwise), accepts by Metropolis on
/// E(S) = ||y - A_S x_S||^2 at a temperature annealed from the seeds' mean energy
/// scale down to 1e-6 of it, and the best chains re-seed the worst every 50 steps. Seeds: the
/// supports given (top-k of OMP and FISTA); the other chains start from random supports.
#[allow(clippy::too_many_arguments)]
pub fn support_search(
    a: &Matrix,
    y: &[f64],
    k: usize,
    seeds: &[Vec<usize>],
    chains: usize,
    steps: usize,
    seed: u64,
    time_limit: Duration,
    target: f64,
    hooks: &SearchHooks,
) -> SupportSearch {
    let start = Instant::now();
    let k = k.clamp(1, a.nrows().min(a.ncols()));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let chains = chains.max(seeds.len()).max(1);
    let mut supports: Vec<Vec<usize>> = (0..chains)
        .map(|c| match seeds.get(c) {
            Some(s) => s.iter().copied().take(k).collect(),
            None => rand::seq::index::sample(&mut rng, a.ncols(), k).into_vec(),
        })
        .collect();
    let energy_of = |s: &[usize]| least_squares(a, y, s).1;
    let mut energies: Vec<f64> = supports.par_iter().map(|s| energy_of(s)).collect();
    let scale = (y.iter().map(|v| v * v).sum::<f64>() / k as f64).max(1e-30);
    let mut rngs: Vec<ChaCha8Rng> = (0..chains)
        .map(|c| {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            r.set_stream(c as u64 + 1);
            r
        })
        .collect();
    let best_index = |e: &[f64]| (0..e.len()).min_by(|&p, &q| e[p].total_cmp(&e[q])).expect("a chain");
    let mut best = (supports[best_index(&energies)].clone(), energies[best_index(&energies)]);
    let mut history = vec![(start.elapsed(), best.1)];
    let mut iterations = 0;
    while iterations < steps && best.1 > target && start.elapsed() < time_limit && !hooks.cancelled() {
        let temperature = scale * 0.1 * (1e-5f64).powf(iterations as f64 / steps.max(1) as f64);
        supports.par_iter_mut().zip(energies.par_iter_mut()).zip(rngs.par_iter_mut()).for_each(|((s, e), r)| {
            let (x, _) = least_squares(a, y, s);
            let mut full = vec![0.0; a.ncols()];
            for (p, &sp) in s.iter().enumerate() {
                full[sp] = x[p];
            }
            let c = apply_t(a, &residual(a, y, &full));
            let outside: Vec<usize> = (0..a.ncols()).filter(|j| !s.contains(j)).collect();
            let incoming = if r.gen_bool(0.5) {
                let mut ranked = outside.clone();
                ranked.sort_by(|&p, &q| c[q].abs().total_cmp(&c[p].abs()));
                ranked[r.gen_range(0..ranked.len().min(3))]
            } else {
                outside[r.gen_range(0..outside.len())]
            };
            let leaving = r.gen_range(0..s.len());
            let mut proposal = s.clone();
            proposal[leaving] = incoming;
            let proposed = energy_of(&proposal);
            if proposed <= *e || r.gen::<f64>() < (-(proposed - *e) / temperature).exp() {
                *s = proposal;
                *e = proposed;
            }
        });
        iterations += 1;
        let i = best_index(&energies);
        if energies[i] < best.1 {
            best = (supports[i].clone(), energies[i]);
            history.push((start.elapsed(), best.1));
            hooks.incumbent(start.elapsed(), best.1);
        }
        if iterations % 50 == 0 {
            let mut order: Vec<usize> = (0..chains).collect();
            order.sort_by(|&p, &q| energies[p].total_cmp(&energies[q]));
            for w in 0..chains / 4 {
                let (from, to) = (order[w], order[chains - 1 - w]);
                supports[to] = supports[from].clone();
                energies[to] = energies[from];
            }
        }
    }
    let (z, _) = least_squares(a, y, &best.0);
    let mut x = vec![0.0; a.ncols()];
    for (p, &sp) in best.0.iter().enumerate() {
        x[sp] = z[p];
    }
    SupportSearch { x, energy: best.1, iterations, chains, history }
}

/// The `k` indices of largest magnitude.
pub fn top_k(x: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&p, &q| x[q].abs().total_cmp(&x[p].abs()));
    order.truncate(k);
    order
}

/// A Gaussian instance for tests and the phase-transition bench: A with N(0, 1/m) entries, x with
/// `k` N(0, 1) entries on a random support, y = A x.
pub fn gaussian_instance(m: usize, n: usize, k: usize, seed: u64) -> (Matrix, Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = || standard_normal(&mut rng);
    let data: Vec<f64> = (0..m * n).map(|_| normal() / (m as f64).sqrt()).collect();
    let values: Vec<f64> = (0..k).map(|_| normal()).collect();
    let a = Matrix::from_shape_vec((m, n), data).expect("m x n values");
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let support = rand::seq::index::sample(&mut rng, n, k).into_vec();
    let mut x = vec![0.0; n];
    for (s, v) in support.iter().zip(values) {
        x[*s] = v;
    }
    let y = apply(&a, &x);
    (a, x, y)
}

pub fn relative_error(estimate: &[f64], truth: &[f64]) -> f64 {
    let diff: Vec<f64> = estimate.iter().zip(truth).map(|(a, b)| a - b).collect();
    norm(&diff) / norm(truth).max(1e-300)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_recovers_an_easy_instance_and_least_squares_is_exact_on_the_true_support() {
        let (a, x, y) = gaussian_instance(50, 100, 5, 1);
        let support: Vec<usize> = (0..100).filter(|&i| x[i] != 0.0).collect();
        let (_, r2) = least_squares(&a, &y, &support);
        assert!(r2 < 1e-20, "{r2}");
        assert!(relative_error(&omp(&a, &y, 5, 1e-9), &x) < 1e-6);
        assert!(relative_error(&lasso(&a, &y, lasso_lambda(&a, &y, 0.0), 3000, true), &x) < 1e-2);
        let found = support_search(&a, &y, 5, &[], 8, 500, 0, Duration::from_secs(10), 1e-20, &SearchHooks::default());
        assert!(relative_error(&found.x, &x) < 1e-6);
    }
}
