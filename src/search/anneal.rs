//! Policy-regularized Metropolis dynamics for one chain. The chain samples
//! exp(-H_T(s)/T) with H_T(s) = H(s) - T * sum_i log p_theta(s_i): the learned policy acts as an
//! external field whose weight vanishes as the temperature falls, so late in the schedule the
//! chain minimises H itself.

use crate::search::ising::IsingModel;
use rand::Rng;
use rand_distr::{Distribution, Exp1};

use super::tabu::flip;

/// e^-37 < 2^-53: no uniform draw in [0, 1) falls below it.
const MAX_DELTA: f64 = 37.0;

/// Runs `steps` single-flip Metropolis proposals with the temperature moving geometrically from
/// `t_start` to `t_end`. `log_odds[i] = log p(s_i=+1) - log p(s_i=-1)` in this chain's gauge
/// (`sign` = -1 flips it). `fields` must hold the local fields of `spins` and is kept up to date.
/// Stops early at `deadline`. Returns the energy change.
#[allow(clippy::too_many_arguments)]
pub fn metropolis<R: Rng>(
    model: &IsingModel,
    spins: &mut [i8],
    fields: &mut [f64],
    log_odds: &[f32],
    sign: i8,
    steps: usize,
    (t_start, t_end): (f64, f64),
    rng: &mut R,
    deadline: Option<std::time::Instant>,
) -> f64 {
    let n = spins.len();
    // The policy's field in this chain's gauge, once per call instead of once per proposal.
    let odds: Vec<f64> = log_odds.iter().map(|&x| f64::from(sign) * f64::from(x)).collect();
    let mut delta_total = 0.0;
    const BLOCK: usize = 256;
    let blocks = steps.div_ceil(BLOCK).max(1);
    let ratio = (t_end / t_start).powf(1.0 / blocks as f64);
    let mut temperature = t_start;
    for block in 0..blocks {
        if block % 64 == 0 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break;
        }
        let inverse_t = 1.0 / temperature;
        for _ in 0..BLOCK.min(steps - block * BLOCK) {
            let i = rng.gen_range(0..n);
            let s = f64::from(spins[i]);
            let delta_h = -2.0 * s * fields[i];
            // Flipping s_i -> -s_i changes -T log p(s_i) by T * s_i * sign * log_odds_i.
            let delta = delta_h * inverse_t + s * odds[i];
            // Accepted with probability min(1, e^-delta): an Exp(1) draw exceeds delta with exactly
            // that probability, and the ziggurat draw costs less than the exponential it replaces.
            // Beyond MAX_DELTA the chance is below f64's resolution of a uniform draw.
            if delta <= 0.0 || (delta < MAX_DELTA && Distribution::<f64>::sample(&Exp1, rng) > delta) {
                flip(model, spins, fields, i);
                delta_total += delta_h;
            }
        }
        temperature *= ratio;
    }
    delta_total
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn at_a_fixed_temperature_the_chain_samples_the_boltzmann_distribution() {
        // Two coupled spins with fields: visit frequencies of the four states against
        // exp(-E/T)/Z, which only holds if the acceptance rule is exactly min(1, e^-delta).
        let model = IsingModel::new(2, vec![(0, 1, 0.7)], vec![0.4, -0.9]);
        let temperature = 1.3;
        let mut spins = vec![1i8, 1];
        let mut fields = vec![0.0; 2];
        model.local_fields(&spins, &mut fields);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut visits = [0usize; 4];
        let draws = 400_000;
        for _ in 0..draws {
            metropolis(&model, &mut spins, &mut fields, &[0.0, 0.0], 1, 1, (temperature, temperature), &mut rng, None);
            visits[usize::from(spins[0] > 0) * 2 + usize::from(spins[1] > 0)] += 1;
        }
        let states = [[-1i8, -1], [-1, 1], [1, -1], [1, 1]];
        let weights: Vec<f64> = states.iter().map(|s| (-model.energy(s) / temperature).exp()).collect();
        let z: f64 = weights.iter().sum();
        for (k, w) in weights.iter().enumerate() {
            let expected = w / z;
            let seen = visits[k] as f64 / draws as f64;
            assert!((seen - expected).abs() < 0.006, "state {:?}: {seen} vs {expected}", states[k]);
        }
    }
}
