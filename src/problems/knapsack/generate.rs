//! Pisinger's knapsack classes (D. Pisinger, "Where are the hard knapsack problems?", Computers
//! & Operations Research 32(9), 2005; numbered as his knapPI files), written in his text format
//! (`n W`, then `p w` per item). Weights are uniform on 1..=R unless a class says otherwise, and
//! the capacity is half the total weight (his instance h = 50 of 100 rounds to the same):
//! 1 uncorrelated (p uniform on 1..=R); 2 weakly correlated (p uniform on w - R/10..=w + R/10,
//! at least 1); 3 strongly correlated (p = w + R/10); 4 inverse strongly correlated (p uniform on
//! 1..=R, w = p + R/10); 5 almost strongly correlated (p uniform on w + R/10 - R/500..=w + R/10 +
//! R/500); 6 subset sum (p = w); 9 uncorrelated with similar weights (w uniform on
//! 100000..=100100, p on 1..=1000); 11, 12, 13 spanner span(2, 10) over classes 1, 2 and 3 (two
//! spanner items drawn from the class, each scaled to ceil(2 x / 10), and every item a random
//! spanner item times a multiplier uniform on 1..=10); 14 multiple strongly correlated
//! mstr(3R/10, 2R/10, 6) (p = w + 3R/10 when 6 divides w, else w + 2R/10); 15 profit ceiling
//! pceil(3) (p = 3 ceil(w / 3)); 16 circle(2/3) (p = 2/3 sqrt(4R^2 - (w - 2R)^2)).

use rand::Rng;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The classes `generate` knows.
pub const CLASSES: [usize; 13] = [1, 2, 3, 4, 5, 6, 9, 11, 12, 13, 14, 15, 16];

/// One item of `class` (1 to 6) with coefficients up to `r`.
fn basic_item(class: usize, r: u64, rng: &mut Xoshiro256PlusPlus) -> (u64, u64) {
    let w = rng.gen_range(1..=r);
    match class {
        1 => (rng.gen_range(1..=r), w),
        2 => {
            let spread = (r / 10) as i64;
            ((w as i64 + rng.gen_range(-spread..=spread)).max(1) as u64, w)
        }
        3 => (w + r / 10, w),
        4 => {
            let p = rng.gen_range(1..=r);
            (p, p + r / 10)
        }
        5 => (w + r / 10 - r / 500 + rng.gen_range(0..=2 * (r / 500)), w),
        _ => (w, w),
    }
}

/// `n` items of Pisinger's `class` with coefficient range `r` from `seed`, as his text format;
/// Err names an unknown class or a range below 10.
pub fn generate(n: usize, class: usize, r: u64, seed: u64) -> Result<String, String> {
    if !CLASSES.contains(&class) {
        return Err(format!("knapsack class {class}: one of {CLASSES:?}"));
    }
    if r < 10 {
        return Err(format!("knapsack range {r}: at least 10"));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let spanners: Vec<(u64, u64)> = if (11..=13).contains(&class) {
        (0..2)
            .map(|_| {
                let (p, w) = basic_item(class - 10, r, &mut rng);
                ((2 * p).div_ceil(10), (2 * w).div_ceil(10))
            })
            .collect()
    } else {
        Vec::new()
    };
    let items: Vec<(u64, u64)> = (0..n)
        .map(|_| match class {
            1..=6 => basic_item(class, r, &mut rng),
            9 => (rng.gen_range(1..=1000), rng.gen_range(100_000..=100_100)),
            11..=13 => {
                let (p, w) = spanners[rng.gen_range(0..spanners.len())];
                let a = rng.gen_range(1..=10);
                (a * p, a * w)
            }
            14 => {
                let w = rng.gen_range(1..=r);
                (if w % 6 == 0 { w + 3 * r / 10 } else { w + 2 * r / 10 }, w)
            }
            15 => {
                let w = rng.gen_range(1..=r);
                (3 * w.div_ceil(3), w)
            }
            _ => {
                let w = rng.gen_range(1..=r);
                let (w_f, r_f) = (w as f64, r as f64);
                let p = (2.0 / 3.0 * (4.0 * r_f * r_f - (w_f - 2.0 * r_f).powi(2)).sqrt()).floor() as u64;
                (p.max(1), w)
            }
        })
        .collect();
    let capacity = items.iter().map(|&(_, w)| w).sum::<u64>() / 2;
    let mut text = format!("{n} {capacity}\n");
    for (p, w) in items {
        text.push_str(&format!("{p} {w}\n"));
    }
    Ok(text)
}
