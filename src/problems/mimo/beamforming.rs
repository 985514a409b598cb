//! Downlink MISO beamforming as tensor math (complex128): K single-antenna users, N transmit
//! antennas, channel H [K, N] (row k = h_k), beamformer W [N, K] (column k serves user k), total
//! power ||W||_F^2 <= P, noise sigma^2:
//!   R(W) = sum_k log2(1 + |h_k w_k|^2 / (sum_{j != k} |h_k w_j|^2 + sigma^2)).
//! Classical precoders (MRT, ZF, regularized ZF), WMMSE (Shi et al. 2011) and the parallel
//! projected-gradient search, batched over B beamformers [B, N, K].

use crate::problems::random::standard_normal;
use crate::search::hooks::SearchHooks;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

pub const COMPLEX: Kind = Kind::ComplexDouble;

/// Sum rates [B] of beamformers W [B, N, K] (or [N, K] -> [1]) on channel H [K, N].
pub fn sum_rate(h: &Tensor, w: &Tensor, noise: f64) -> Tensor {
    let w = if w.dim() == 2 { w.unsqueeze(0) } else { w.shallow_clone() };
    let gains = h.unsqueeze(0).matmul(&w).abs().square(); // [B, K, K]: |h_k w_j|^2
    let signal = gains.diagonal(0, 1, 2); // [B, K]
    let interference = gains.sum_dim_intlist(2, false, Kind::Double) - &signal;
    (signal / (interference + noise) + 1.0).log2().sum_dim_intlist(1, false, Kind::Double)
}

/// Scales every beamformer of [B, N, K] (or [N, K]) to total power P.
pub fn to_power(w: &Tensor, power: f64) -> Tensor {
    let dims: &[i64] = if w.dim() == 2 { &[0, 1] } else { &[1, 2] };
    let norm = w.abs().square().sum_dim_intlist(dims, true, Kind::Double).sqrt().clamp_min(1e-30);
    w * (power.sqrt() / norm).to_kind(COMPLEX)
}

/// Maximum-ratio transmission: W = H^H at full power.
pub fn mrt(h: &Tensor, power: f64) -> Tensor {
    to_power(&h.mh().resolve_conj(), power)
}

/// Regularized zero-forcing ("MMSE" precoder): W = H^H (H H^H + alpha I)^-1 at full power;
/// alpha = 0 is zero-forcing, alpha = K sigma^2 / P the MMSE regularization.
pub fn regularized_zf(h: &Tensor, power: f64, alpha: f64) -> Tensor {
    let k = h.size()[0];
    let hh = h.mh().resolve_conj();
    let gram = h.matmul(&hh);
    // A ridge of 1e-12 of the mean diagonal keeps ZF defined (least squares) when K > N or H is
    // rank-deficient; it changes nothing measurable otherwise.
    let ridge = 1e-12 * gram.diagonal(0, 0, 1).real().mean(Kind::Double).double_value(&[]);
    let gram = gram + Tensor::eye(k, (COMPLEX, h.device())) * (alpha + ridge);
    to_power(&hh.matmul(&Tensor::linalg_inv(&gram)), power)
}

pub fn zero_forcing(h: &Tensor, power: f64) -> Tensor {
    regularized_zf(h, power, 0.0)
}

pub fn mmse(h: &Tensor, power: f64, noise: f64) -> Tensor {
    regularized_zf(h, power, h.size()[0] as f64 * noise / power)
}

/// WMMSE (Shi, Razaviyayn, Luo, He 2011) for MISO, from `start`, `iterations` rounds of
/// u_k = h_k w_k / (sum_j |h_k w_j|^2 + sigma^2), omega_k = 1 / (1 - u_k^* h_k w_k),
/// w_k = omega_k u_k (sum_j omega_j |u_j|^2 h_j^H h_j + mu I)^-1 h_k^H
/// with mu >= 0 the smallest value meeting the power budget (bisection on the eigenvalues).
pub fn wmmse(h: &Tensor, power: f64, noise: f64, start: &Tensor, iterations: usize) -> Tensor {
    let hh = h.mh().resolve_conj(); // [N, K], column k = h_k^H
    let mut w = start.shallow_clone();
    for _ in 0..iterations {
        let g = h.matmul(&w); // [K, K]: h_k w_j
        let total = g.abs().square().sum_dim_intlist(1, false, Kind::Double) + noise; // [K]
        let direct = g.diagonal(0, 0, 1); // [K] complex
        let u = &direct / total.to_kind(COMPLEX);
        let e: Tensor = 1.0 - direct.abs().square() / &total; // MMSE, real in (0, 1]
        let omega = e.clamp_min(1e-12).reciprocal();
        let weight = (&omega * u.abs().square()).to_kind(COMPLEX); // [K]
        let a = (&hh * weight.unsqueeze(0)).matmul(h); // sum_k weight_k h_k^H h_k, [N, N]
        let b = &hh * (&omega.to_kind(COMPLEX) * &u).unsqueeze(0); // [N, K]
        let (lambda, vectors) = Tensor::linalg_eigh(&a, "L");
        let phi = vectors.mh().resolve_conj().matmul(&b).abs().square().sum_dim_intlist(1, false, Kind::Double); // [N]
        let lambda: Vec<f64> = lambda.to_kind(Kind::Double).try_into().expect("f64");
        let phi: Vec<f64> = phi.try_into().expect("f64");
        let power_at = |mu: f64| lambda.iter().zip(&phi).map(|(l, p)| p / (l + mu).powi(2)).sum::<f64>();
        let min_lambda = lambda.iter().cloned().fold(f64::INFINITY, f64::min);
        let mu = if min_lambda > 1e-12 && power_at(0.0) <= power {
            0.0
        } else {
            let (mut lo, mut hi) = ((-min_lambda).max(0.0) + 1e-12, 1.0);
            while power_at(hi) > power {
                hi *= 2.0;
            }
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if power_at(mid) > power {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        let shifted = (Tensor::from_slice(&lambda) + mu).reciprocal().to_kind(COMPLEX);
        w = (&vectors * shifted.unsqueeze(0)).matmul(&vectors.mh().resolve_conj()).matmul(&b);
    }
    w
}

/// The search's outcome.
pub struct SearchResult {
    pub w: Tensor,
    pub rate: f64,
    /// (elapsed, rate) each time the best improved.
    pub history: Vec<(Duration, f64)>,
    pub iterations: usize,
    pub starts: usize,
    /// Why it stopped.
    pub stop: crate::search::StopReason,
}

/// Iterations without a relative improvement of the best above 1e-9 after which the search
/// counts as converged.
pub const PATIENCE: usize = 200;

/// Parallel projected gradient ascent: B beamformers W_b = sqrt(P) V_b / ||V_b||_F (the power
/// constraint by normalization), V updated by Adam on the batch's summed rate; starts are the
/// given seeds (classical precoders, WMMSE, a policy's output) and random Gaussian ones, each
/// perturbed. Stops at the time limit or after `max_iterations`; returns the best beamformer seen.
#[allow(clippy::too_many_arguments)]
pub fn parallel_gradient_search(
    h: &Tensor,
    power: f64,
    noise: f64,
    seeds: &[Tensor],
    starts: usize,
    seed: u64,
    time_limit: Duration,
    max_iterations: usize,
    device: Device,
    hooks: &SearchHooks,
) -> SearchResult {
    let start_time = Instant::now();
    let (k, n) = (h.size()[0], h.size()[1]);
    let b = starts.max(seeds.len()) as i64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let h = h.to(device);
    // Random starts and perturbations from our own stream (no global torch RNG).
    let gaussian =
        |rng: &mut ChaCha8Rng, count: usize| -> Vec<f64> { (0..count).map(|_| standard_normal(rng)).collect() };
    let count = (b * n * k) as usize;
    let re = Tensor::from_slice(&gaussian(&mut rng, count)).view([b, n, k]);
    let im = Tensor::from_slice(&gaussian(&mut rng, count)).view([b, n, k]);
    let init = to_power(&Tensor::complex(&re, &im), power);
    for (i, s) in seeds.iter().enumerate() {
        // Seed i keeps its own start in row i; row i + |seeds| (if any) a perturbed copy.
        let s = to_power(&s.to_device(Device::Cpu), power);
        init.get(i as i64).copy_(&s);
        let j = (i + seeds.len()) as i64;
        if j < b {
            let noise_row = init.get(j) * 0.1;
            init.get(j).copy_(&to_power(&(s + noise_row), power));
        }
    }
    let store = tch::nn::VarStore::new(device);
    // V as real pairs [B, N, K, 2] in double precision, the only trainable variable.
    let v = store.root().add("v", Tensor::view_as_real(&init.to(device)).copy(), true);
    let mut optimizer = {
        use tch::nn::OptimizerConfig;
        tch::nn::Adam::default().build(&store, 0.01 * power.sqrt()).expect("optimizer")
    };
    let mut best = (init.get(0).shallow_clone(), f64::NEG_INFINITY);
    let mut history = Vec::new();
    let (mut iterations, mut since_improvement) = (0, 0);
    let stop = loop {
        let w = to_power(&Tensor::view_as_complex(&v), power);
        let rates = sum_rate(&h, &w, noise);
        let (top, index) = {
            let r = rates.detach().to_device(Device::Cpu);
            let i = r.argmax(0, false).int64_value(&[]);
            (r.double_value(&[i]), i)
        };
        if top > best.1 + 1e-9 * best.1.abs().max(1.0) {
            since_improvement = 0;
        } else {
            since_improvement += 1;
        }
        if top > best.1 {
            best = (w.get(index).detach().to_device(Device::Cpu), top);
            history.push((start_time.elapsed(), top));
            hooks.incumbent(start_time.elapsed(), top);
        }
        if iterations >= max_iterations {
            break crate::search::StopReason::RoundLimit;
        }
        if start_time.elapsed() >= time_limit || hooks.cancelled() {
            break crate::search::StopReason::TimeLimit;
        }
        if since_improvement >= PATIENCE {
            break crate::search::StopReason::Converged;
        }
        let loss = -rates.sum(Kind::Double);
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
        iterations += 1;
    };
    SearchResult { w: best.0, rate: best.1, history, iterations, starts: b as usize, stop }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(seed: u64, k: i64, n: i64) -> Tensor {
        tch::manual_seed(seed as i64);
        Tensor::complex(
            &Tensor::randn([k, n], (Kind::Double, Device::Cpu)),
            &Tensor::randn([k, n], (Kind::Double, Device::Cpu)),
        ) / 2f64.sqrt()
    }

    #[test]
    fn zero_forcing_removes_interference_and_precoders_meet_the_power_budget() {
        let h = channel(1, 4, 6);
        let w = zero_forcing(&h, 10.0);
        let g = h.matmul(&w).abs();
        let off = g.sum(Kind::Double).double_value(&[]) - g.diagonal(0, 0, 1).sum(Kind::Double).double_value(&[]);
        assert!(off.abs() < 1e-9, "interference {off}");
        for w in [mrt(&h, 10.0), w, mmse(&h, 10.0, 1.0)] {
            let p = w.abs().square().sum(Kind::Double).double_value(&[]);
            assert!((p - 10.0).abs() < 1e-9, "power {p}");
        }
    }

    #[test]
    fn sum_rate_matches_the_formula_for_one_user() {
        let h = Tensor::complex(
            &Tensor::from_slice(&[1.0f64, 0.0]).view([1, 2]),
            &Tensor::from_slice(&[0.0f64, 1.0]).view([1, 2]),
        );
        let w = mrt(&h, 4.0); // |h w|^2 = ||h||^2 P = 2 * 4
        let r = sum_rate(&h, &w, 1.0).double_value(&[0]);
        assert!((r - (1.0f64 + 8.0).log2()).abs() < 1e-9, "{r}");
    }

    #[test]
    fn wmmse_improves_on_its_mmse_start_within_the_budget() {
        let h = channel(2, 4, 4);
        let start = mmse(&h, 10.0, 1.0);
        let w = wmmse(&h, 10.0, 1.0, &start, 100);
        let p = w.abs().square().sum(Kind::Double).double_value(&[]);
        assert!(p <= 10.0 * (1.0 + 1e-6), "power {p}");
        let (r0, r1) = (sum_rate(&h, &start, 1.0).double_value(&[0]), sum_rate(&h, &w, 1.0).double_value(&[0]));
        assert!(r1 > r0, "WMMSE {r1} vs MMSE {r0}");
    }
}
