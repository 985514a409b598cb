//! Random Euclidean instances as the DIMACS TSP Challenge generates them (D. S. Johnson and
//! L. A. McGeoch, "Experimental analysis of heuristics for the STSP", in The Traveling Salesman
//! Problem and its Variations, 2002): class 1 (their "E" instances) puts every city uniformly in a
//! 1,000,000 x 1,000,000 square; class 2 ("C") draws n/10 centres uniformly in the square and puts
//! each city normally around a random centre with standard deviation 1,000,000 / sqrt(n). TSPLIB
//! text with integer coordinates and EUC_2D distances.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Write as _;

const SIDE: f64 = 1_000_000.0;

pub fn generate(cities: usize, class: usize, seed: u64) -> Result<String, String> {
    if cities < 3 {
        return Err(format!("{cities} cities: a tour needs at least 3"));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let points: Vec<(f64, f64)> = match class {
        1 => (0..cities).map(|_| (rng.gen_range(0.0..SIDE), rng.gen_range(0.0..SIDE))).collect(),
        2 => {
            let centres: Vec<(f64, f64)> =
                (0..(cities / 10).max(1)).map(|_| (rng.gen_range(0.0..SIDE), rng.gen_range(0.0..SIDE))).collect();
            let spread = Normal::new(0.0, SIDE / (cities as f64).sqrt()).expect("a positive deviation");
            (0..cities)
                .map(|_| {
                    let (x, y) = centres[rng.gen_range(0..centres.len())];
                    (x + spread.sample(&mut rng), y + spread.sample(&mut rng))
                })
                .collect()
        }
        other => return Err(format!("class {other}: 1 (uniform) or 2 (clustered)")),
    };
    let name = format!("{}{cities}-{seed}", if class == 1 { "E" } else { "C" });
    let mut text =
        format!("NAME : {name}\nTYPE : TSP\nDIMENSION : {cities}\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n");
    for (i, (x, y)) in points.iter().enumerate() {
        writeln!(text, "{} {} {}", i + 1, x.round(), y.round()).expect("a string");
    }
    text.push_str("EOF\n");
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::tsp::parse_tsplib;
    use crate::problems::Limits;

    #[test]
    fn both_classes_load_as_tsplib_and_are_reproducible_by_seed() {
        for class in [1, 2] {
            let text = generate(500, class, 7).unwrap();
            assert_eq!(text, generate(500, class, 7).unwrap());
            assert_ne!(text, generate(500, class, 8).unwrap());
            let tsp = parse_tsplib(&text, &Limits::default()).unwrap();
            assert_eq!(tsp.num_cities(), 500);
        }
        // Uniform cities lie in the square.
        let uniform = generate(2_000, 1, 1).unwrap();
        let inside = uniform
            .lines()
            .skip(5)
            .take(2_000)
            .all(|line| line.split_whitespace().skip(1).all(|v| (0.0..=SIDE).contains(&v.parse::<f64>().unwrap())));
        assert!(inside);
        assert!(generate(2, 1, 0).is_err() && generate(10, 3, 0).is_err());
    }
}
