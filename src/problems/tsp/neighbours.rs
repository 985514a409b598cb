//! Each city's k nearest others, nearest first, ties by index: by a uniform grid for planar
//! metrics (about two cities per cell, rings of cells searched outwards until no unvisited city
//! can be nearer than the k-th found), by a scan of every pair otherwise (GEO, matrices). The
//! grid gives the scan's lists exactly; on 20,000 uniform cities a serial scan left a 3 s time
//! limit one search round (`docs/src/problems/tsp.md` has the measurement).

use super::{Distances, Metric};
use rayon::prelude::*;

/// The `k` nearest of every city under `distances.get`, ordered by (distance, index).
pub fn nearest(distances: &Distances, k: usize) -> Vec<Vec<u32>> {
    match distances {
        Distances::Coordinates { xy, metric } if *metric != Metric::Geo => by_grid(distances, xy, *metric, k),
        _ => by_scan(distances, k),
    }
}

fn by_scan(distances: &Distances, k: usize) -> Vec<Vec<u32>> {
    let n = distances.len() as u32;
    (0..n)
        .into_par_iter()
        .map(|i| smallest(&mut (0..n).filter(|&j| j != i).map(|j| (distances.get(i, j), j)).collect(), k))
        .collect()
}

/// The `k` smallest of `pairs` by (distance, index), ordered.
fn smallest(pairs: &mut Vec<(f64, u32)>, k: usize) -> Vec<u32> {
    let k = k.min(pairs.len());
    if k == 0 {
        return Vec::new();
    }
    let order = |a: &(f64, u32), b: &(f64, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    pairs.select_nth_unstable_by(k - 1, order);
    pairs.truncate(k);
    pairs.sort_by(order);
    pairs.iter().map(|&(_, j)| j).collect()
}

/// A lower bound on `get` for two cities at least `euclid` apart (rounding can only lower a
/// metric by half a unit; ATT divides by sqrt 10 before rounding up).
fn at_least(metric: Metric, euclid: f64) -> f64 {
    match metric {
        Metric::Euclidean | Metric::Ceil2d => euclid,
        Metric::Euc2d => euclid - 0.5,
        Metric::Att => euclid / 10f64.sqrt(),
        Metric::Geo => f64::NEG_INFINITY,
    }
}

fn by_grid(distances: &Distances, xy: &[(f64, f64)], metric: Metric, k: usize) -> Vec<Vec<u32>> {
    let n = xy.len();
    let (mut low, mut high) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
    for &(x, y) in xy {
        (low.0, low.1, high.0, high.1) = (low.0.min(x), low.1.min(y), high.0.max(x), high.1.max(y));
    }
    let (width, height) = (high.0 - low.0, high.1 - low.1);
    // About two cities per cell, and never more cells than cities per side.
    let area = (width * height).max(width.max(height).powi(2) / n as f64);
    let side = (2.0 * area / n as f64).sqrt();
    if side.is_nan() || side <= 0.0 {
        return by_scan(distances, k);
    }
    let slack = 1e-9 * [low.0, low.1, high.0, high.1].iter().fold(side, |m, v| m.max(v.abs()));
    let cells = |extent: f64| ((extent / side) as usize + 1).min(n);
    let (gx, gy) = (cells(width), cells(height));
    let cell_of = |(x, y): (f64, f64)| {
        (((x - low.0) / side) as usize).min(gx - 1) + gx * (((y - low.1) / side) as usize).min(gy - 1)
    };
    let cell: Vec<usize> = xy.iter().map(|&p| cell_of(p)).collect();
    // Cities by cell (counting sort): cell c holds members[start[c]..start[c + 1]].
    let mut start = vec![0usize; gx * gy + 1];
    for &c in &cell {
        start[c + 1] += 1;
    }
    for c in 0..gx * gy {
        start[c + 1] += start[c];
    }
    let mut fill = start.clone();
    let mut members = vec![0u32; n];
    for (i, &c) in cell.iter().enumerate() {
        members[fill[c]] = i as u32;
        fill[c] += 1;
    }
    (0..n)
        .into_par_iter()
        .map_init(Vec::new, |pairs: &mut Vec<(f64, u32)>, i| {
            pairs.clear();
            let (cx, cy) = ((cell[i] % gx) as i64, (cell[i] / gx) as i64);
            let mut ring = 0i64;
            loop {
                for y in (cy - ring).max(0)..=(cy + ring).min(gy as i64 - 1) {
                    let on_edge = y == cy - ring || y == cy + ring;
                    let step = if on_edge { 1 } else { 2 * ring };
                    let mut x = cx - ring;
                    while x <= cx + ring {
                        if x >= 0 && x < gx as i64 {
                            let c = x as usize + gx * y as usize;
                            for &j in &members[start[c]..start[c + 1]] {
                                if j as usize != i {
                                    pairs.push((distances.get(i as u32, j), j));
                                }
                            }
                        }
                        x += step;
                    }
                }
                // An unvisited city lies at least `ring` whole cells away.
                let covered = (ring as usize + 1) >= gx.max(gy);
                if covered || pairs.len() >= k {
                    let kth = if pairs.len() >= k {
                        // The order of `pairs` is free: `smallest` sorts what it keeps.
                        pairs.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0)).1 .0
                    } else {
                        f64::INFINITY
                    };
                    // Less the coordinates' rounding in placing cities in cells.
                    let reach = at_least(metric, ring as f64 * side - slack);
                    if covered || reach > kth + 1e-9 * kth.abs().max(1.0) {
                        break;
                    }
                }
                ring += 1;
            }
            smallest(pairs, k)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn the_grid_gives_the_scans_lists_on_every_planar_metric_with_ties_clusters_and_a_line() {
        let mut seed = 7;
        let uniform: Vec<(f64, f64)> = (0..600).map(|_| (lcg(&mut seed) * 1000.0, lcg(&mut seed) * 1000.0)).collect();
        // Integer points on a small square: many equal distances.
        let ties: Vec<(f64, f64)> = (0..400).map(|i| ((i % 20) as f64, (i / 20 % 7) as f64)).collect();
        let clusters: Vec<(f64, f64)> = (0..500)
            .map(|i| {
                let centre = (i % 5) as f64 * 1e4;
                (centre + lcg(&mut seed), centre + lcg(&mut seed) * 3.0)
            })
            .collect();
        let line: Vec<(f64, f64)> = (0..300).map(|_| (lcg(&mut seed) * 50.0, 2.0)).collect();
        let duplicates: Vec<(f64, f64)> = (0..40).map(|i| ((i % 3) as f64, 0.0)).collect();
        for xy in [uniform, ties, clusters, line, duplicates] {
            for metric in [Metric::Euclidean, Metric::Euc2d, Metric::Ceil2d, Metric::Att] {
                let distances = Distances::Coordinates { xy: xy.clone(), metric };
                for k in [1, 10, 25] {
                    assert_eq!(nearest(&distances, k), by_scan(&distances, k), "{metric:?}, k = {k}, n = {}", xy.len());
                }
            }
        }
    }
}
