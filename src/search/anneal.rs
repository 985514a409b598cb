//! Policy-regularized Metropolis dynamics for one chain. The chain samples
//! exp(-H_T(s)/T) with H_T(s) = H(s) - T * sum_i log p_theta(s_i): the learned policy acts as an
//! external field whose weight vanishes as the temperature falls, so late in the schedule the
//! chain minimises H itself.

use crate::search::ising::IsingModel;
use rand::Rng;

use super::tabu::flip;

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
            let delta = delta_h * inverse_t + s * f64::from(sign) * f64::from(log_odds[i]);
            if delta <= 0.0 || rng.gen::<f64>() < (-delta).exp() {
                flip(model, spins, fields, i);
                delta_total += delta_h;
            }
        }
        temperature *= ratio;
    }
    delta_total
}
