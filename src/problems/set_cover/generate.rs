//! Random set covers in the manner of OR-Library's classes (J. E. Beasley, "An algorithm for set
//! covering problem", European Journal of Operational Research 31, 1987): m rows, n columns, a
//! density of d percent nonzeros, column costs uniform on 1..=R (OR-Library: R = 100), every row
//! covered by at least two columns and every column covering at least one row. Each row draws
//! its column count uniformly from k/2..=3k/2 for k = dn/100 (OR-Library's rows span about that:
//! 11 to 30 columns in scp41, 40 to 81 in scpa1) and that many distinct columns; a column left
//! empty then covers one random row. Written in OR-Library's SCP text.
//! OR-Library's classes: 4 (200 x 1000, 2%), 5 (200 x 2000, 2%), 6 (200 x 1000, 5%), A (300 x
//! 3000, 2%), B (300 x 3000, 5%), C (400 x 4000, 2%), D (400 x 4000, 5%).

use rand::seq::index::sample;
use rand::Rng;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fmt::Write as _;

/// OR-Library's classes as (name, rows, columns, density in percent).
pub const CLASSES: [(&str, usize, usize, usize); 7] = [
    ("4", 200, 1_000, 2),
    ("5", 200, 2_000, 2),
    ("6", 200, 1_000, 5),
    ("a", 300, 3_000, 2),
    ("b", 300, 3_000, 5),
    ("c", 400, 4_000, 2),
    ("d", 400, 4_000, 5),
];

/// `rows` x `columns` at `density` percent with costs on 1..=`range`, from `seed`; Err names a
/// shape that cannot give every row two columns.
pub fn generate(rows: usize, columns: usize, density: usize, range: u64, seed: u64) -> Result<String, String> {
    if rows == 0 || columns < 2 || !(1..=100).contains(&density) || range == 0 {
        return Err(format!(
            "set cover {rows} rows x {columns} columns at {density}%: needs a row, two columns, a density in 1..=100 \
             and a cost range of at least 1"
        ));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mean = (columns * density).div_ceil(100).max(2);
    let (fewest, most) = ((mean / 2).max(2), (3 * mean / 2).min(columns));
    let costs: Vec<u64> = (0..columns).map(|_| rng.gen_range(1..=range)).collect();
    let mut rows_columns: Vec<Vec<usize>> = (0..rows)
        .map(|_| {
            let count = rng.gen_range(fewest..=most);
            sample(&mut rng, columns, count).into_vec()
        })
        .collect();
    let mut used = vec![false; columns];
    rows_columns.iter().flatten().for_each(|&j| used[j] = true);
    for j in (0..columns).filter(|&j| !used[j]) {
        rows_columns[rng.gen_range(0..rows)].push(j);
    }
    let mut text = format!("{rows} {columns}\n");
    for line in costs.chunks(12) {
        let line: Vec<String> = line.iter().map(u64::to_string).collect();
        let _ = writeln!(text, "{}", line.join(" "));
    }
    for mut columns in rows_columns {
        columns.sort_unstable();
        let _ = writeln!(text, "{}", columns.len());
        for line in columns.chunks(12) {
            let line: Vec<String> = line.iter().map(|j| (j + 1).to_string()).collect();
            let _ = writeln!(text, "{}", line.join(" "));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::Limits;

    #[test]
    fn a_generated_class_has_its_shape_density_and_costs() {
        let text = generate(200, 1_000, 2, 100, 7).unwrap();
        let instance = super::super::parse_orlib(&text, &Limits::default()).unwrap();
        assert_eq!((instance.sets_of.len(), instance.costs.len()), (200, 1_000));
        assert!(instance.sets_of.iter().all(|s| s.len() >= 2), "a row with fewer than two columns");
        assert!(instance.rows_of.iter().all(|r| !r.is_empty()), "a column covering nothing");
        let density = instance.sets_of.iter().map(Vec::len).sum::<usize>() as f64 / (200.0 * 1_000.0);
        assert!((0.018..0.023).contains(&density), "density {density}");
        assert!(instance.costs.iter().all(|&c| (1.0..=100.0).contains(&c) && c.fract() == 0.0));
        assert_eq!(text, generate(200, 1_000, 2, 100, 7).unwrap(), "the seed fixes the instance");
        assert!(generate(5, 1, 2, 100, 0).is_err());
    }
}
