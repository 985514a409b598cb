//! Seeded random numbers shared by the problems' generators and searches (no global torch RNG).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// One N(0, 1) draw by Box-Muller (two uniforms, the cosine branch).
pub fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let (u1, u2): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// An index drawn with probability proportional to `weights` (the last on rounding).
pub fn weighted_pick(weights: &[f64], rng: &mut impl Rng) -> usize {
    let mut pick = rng.gen::<f64>() * weights.iter().sum::<f64>();
    for (k, w) in weights.iter().enumerate() {
        if pick < *w {
            return k;
        }
        pick -= w;
    }
    weights.len() - 1
}
