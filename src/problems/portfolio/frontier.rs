//! The unconstrained efficient frontier (UEF: w >= 0, sum(w) = 1, nothing else) and Chang et
//! al.'s (2000) mean percentage error of a heuristic frontier against it.
//!
//! The error, as defined by Chang, Meade, Beasley and Sharaiha (2000): for each heuristic point
//! (r_h, v_h), with v*(r) the UEF's variance at return r and r*(v) its return at variance v
//! (both by linear interpolation between the UEF's points, on its efficient branch),
//!
//!   variance error  e_v = 100 |v_h - v*(r_h)| / v*(r_h),
//!   return error    e_r = 100 |r_h - r*(v_h)| / r*(v_h),
//!   point error     e   = min(e_v, e_r),
//!
//! and the mean percentage error is the average of e over the heuristic's points. A point whose
//! return (variance) lies outside the UEF's range has no e_v (e_r), and takes the other.

use super::qp::Allocation;
use super::{Constraints, Goal, Portfolio};

/// The relaxation the UEF is defined on: no cardinality, floors, caps, sectors or costs.
fn unconstrained(portfolio: &Portfolio) -> Portfolio {
    let n = portfolio.num_assets();
    Portfolio {
        constraints: Constraints {
            cardinality: None,
            lower: vec![0.0; n],
            upper: vec![1.0; n],
            sectors: Vec::new(),
            costs: None,
        },
        ..portfolio.clone()
    }
}

/// The least-variance weights under the caps, sectors and (without a cardinality) floors:
/// with a cardinality, a lower bound on any held set's variance.
pub fn minimum_variance(portfolio: &Portfolio) -> Option<Allocation> {
    let all: Vec<usize> = (0..portfolio.num_assets()).collect();
    portfolio.solve_held(&all, &Goal::Tradeoff(1.0), portfolio.constraints.cardinality.is_none())
}

/// The UEF at `points` returns equally spaced from the minimum-variance portfolio's return to
/// the largest mean, as (return, variance), ascending; None when it is not done by `deadline`.
pub fn trace(portfolio: &Portfolio, points: usize, deadline: std::time::Instant) -> Option<Vec<(f64, f64)>> {
    let relaxed = unconstrained(portfolio);
    let all: Vec<usize> = (0..relaxed.num_assets()).collect();
    let least = relaxed.solve_held(&all, &Goal::Tradeoff(1.0), false)?;
    let top = relaxed.mu.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut frontier = vec![(least.expected_return, least.variance)];
    for p in 1..points.max(2) {
        if std::time::Instant::now() > deadline {
            return None;
        }
        let r = least.expected_return + (top - least.expected_return) * p as f64 / (points.max(2) - 1) as f64;
        let at = relaxed.solve_held(&all, &Goal::TargetReturn(r), false)?;
        frontier.push((at.expected_return.max(r), at.variance));
    }
    Some(frontier)
}

/// The UEF's least variance at a return of at least `target` (a point of `trace`).
pub fn variance_at(portfolio: &Portfolio, target: f64) -> Option<f64> {
    let relaxed = unconstrained(portfolio);
    let all: Vec<usize> = (0..relaxed.num_assets()).collect();
    relaxed.solve_held(&all, &Goal::TargetReturn(target), false).map(|a| a.variance)
}

/// Linear interpolation of y at x over points sorted by x; None outside their range (by more
/// than 1e-7 of it: the solver's accuracy, so that the minimum-variance point itself counts).
fn interpolate(points: &[(f64, f64)], x: f64) -> Option<f64> {
    let (first, last) = (points.first()?, points.last()?);
    let slack = 1e-7 * first.0.abs().max(last.0.abs());
    if x < first.0 - slack || x > last.0 + slack {
        return None;
    }
    let x = x.clamp(first.0, last.0);
    let upper = points.partition_point(|p| p.0 < x).clamp(1, points.len() - 1);
    let (a, b) = (points[upper - 1], points[upper]);
    if b.0 - a.0 <= 0.0 {
        return Some(a.1.min(b.1));
    }
    Some(a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0))
}

/// Chang et al.'s mean percentage error of `heuristic` (return, variance) points against the
/// UEF `uef` (return, variance; any order): see the module doc. None when no point is within
/// the UEF's range.
pub fn mean_percentage_error(heuristic: &[(f64, f64)], uef: &[(f64, f64)]) -> Option<f64> {
    // The efficient branch, ascending in return and in variance.
    let mut by_return: Vec<(f64, f64)> = uef.to_vec();
    by_return.sort_by(|a, b| a.0.total_cmp(&b.0));
    let least = by_return.iter().cloned().fold((0.0, f64::INFINITY), |m, p| if p.1 < m.1 { p } else { m });
    by_return.retain(|p| p.0 >= least.0);
    let by_variance: Vec<(f64, f64)> = by_return.iter().map(|&(r, v)| (v, r)).collect();
    let errors: Vec<f64> = heuristic
        .iter()
        .filter_map(|&(r, v)| {
            let variance_error = interpolate(&by_return, r).map(|v_star| 100.0 * (v - v_star).abs() / v_star);
            let return_error = interpolate(&by_variance, v).map(|r_star| 100.0 * (r - r_star).abs() / r_star.abs());
            match (variance_error, return_error) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        })
        .collect();
    (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
}

/// The portfolios no other one beats on both counts (a return at least as high with a lower
/// variance, or a higher return at no more variance), by ascending return.
pub fn nondominated(mut points: Vec<std::sync::Arc<Allocation>>) -> Vec<std::sync::Arc<Allocation>> {
    points.sort_by(|a, b| b.expected_return.total_cmp(&a.expected_return).then(a.variance.total_cmp(&b.variance)));
    let mut kept: Vec<std::sync::Arc<Allocation>> = Vec::new();
    for point in points {
        if kept.last().is_none_or(|last| point.variance < last.variance) {
            kept.push(point);
        }
    }
    kept.reverse();
    kept
}

/// Two weights closer than this are the same holding: a portfolio optimal at several lambdas is
/// solved once per lambda, and its copies differ by the QP's tolerance, far below this.
const SAME_WEIGHT: f64 = 1e-6;

/// The heuristic efficient frontier of a per-lambda frontier: its distinct portfolios (the same
/// assets with weights within `SAME_WEIGHT`) less those another of them dominates, by ascending
/// return. Chang et al.'s error averages over this set; averaged over the lambdas instead, a
/// portfolio optimal at 14 low lambdas (port1's return end) counts 14 times.
pub fn efficient(points: &[Allocation]) -> Vec<Allocation> {
    let mut distinct: Vec<Allocation> = Vec::new();
    for point in points {
        let same = |other: &Allocation| {
            other.assets == point.assets
                && other.weights.iter().zip(&point.weights).all(|(a, b)| (a - b).abs() <= SAME_WEIGHT)
        };
        if !distinct.iter().any(same) {
            distinct.push(point.clone());
        }
    }
    let shared = distinct.into_iter().map(std::sync::Arc::new).collect();
    nondominated(shared).into_iter().map(|a| (*a).clone()).collect()
}

/// A `portef` file of OR-Library: lines `mean_return variance`.
pub fn parse_portef(text: &str) -> Option<Vec<(f64, f64)>> {
    let values: Vec<f64> = text.split_whitespace().map(|t| t.parse().ok()).collect::<Option<_>>()?;
    (values.len() >= 4 && values.len().is_multiple_of(2)).then(|| values.chunks(2).map(|c| (c[0], c[1])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_on_the_frontier_have_no_error_and_a_point_above_it_has_the_smaller_deviation() {
        // A UEF v = r^2 on r in [1, 2].
        let uef: Vec<(f64, f64)> = (0..=100).map(|i| 1.0 + i as f64 / 100.0).map(|r| (r, r * r)).collect();
        assert!(mean_percentage_error(&[(1.5, 2.25), (2.0, 4.0)], &uef).unwrap() < 1e-9);
        // (1.5, 2.5): variance error 100 * 0.25 / 2.25 = 11.1; return error at v = 2.5:
        // r* = sqrt(2.5) = 1.5811 (interpolated: 1.58 + 0.01 * (2.5 - 2.4964) / 0.0317).
        let e = mean_percentage_error(&[(1.5, 2.5)], &uef).unwrap();
        let r_star = 1.58 + 0.01 * (2.5 - 1.58f64.powi(2)) / (1.59f64.powi(2) - 1.58f64.powi(2));
        assert!((e - 100.0 * (r_star - 1.5) / r_star).abs() < 1e-9, "{e}");
        // Below the range in return: only the return error counts.
        let e = mean_percentage_error(&[(0.9, 1.21)], &uef).unwrap();
        assert!((e - 100.0 * (1.1 - 0.9) / 1.1).abs() < 1e-3, "{e}");
    }

    #[test]
    fn the_efficient_set_counts_a_portfolio_once_and_drops_the_dominated() {
        let point = |assets: Vec<usize>, weights: Vec<f64>, r: f64, v: f64| Allocation {
            assets,
            weights,
            expected_return: r,
            variance: v,
            objective: 0.0,
        };
        let a = point(vec![0, 1], vec![0.5, 0.5], 2.0, 4.0);
        // The same holding solved at another lambda, within the QP's tolerance.
        let a_again = point(vec![0, 1], vec![0.5 + 1e-8, 0.5 - 1e-8], 2.0 + 1e-12, 4.0 - 1e-12);
        let b = point(vec![0, 2], vec![0.3, 0.7], 1.5, 2.5);
        // Lower return at more variance than b: dominated.
        let c = point(vec![1, 2], vec![0.6, 0.4], 1.4, 2.6);
        // The same assets as b at other weights: a portfolio of its own.
        let d = point(vec![0, 2], vec![0.2, 0.8], 1.2, 1.5);
        let frontier = [a.clone(), a_again.clone(), a_again, b.clone(), c, d.clone()];
        let kept = efficient(&frontier);
        assert_eq!(kept, vec![d, b, a], "ascending return, one copy of a, no c");
        // Three copies of a point 11% off the frontier weigh three times over the lambdas and
        // once in the efficient set.
        let uef: Vec<(f64, f64)> = (0..=100).map(|i| 1.0 + i as f64 / 100.0).map(|r| (r, r * r)).collect();
        let off = point(vec![3], vec![1.0], 1.5, 2.5);
        let on = point(vec![4], vec![1.0], 1.2, 1.44);
        let pairs = |set: &[Allocation]| set.iter().map(|p| (p.expected_return, p.variance)).collect::<Vec<_>>();
        let per_lambda = [off.clone(), off.clone(), off, on];
        let lambdas = mean_percentage_error(&pairs(&per_lambda), &uef).unwrap();
        let set = mean_percentage_error(&pairs(&efficient(&per_lambda)), &uef).unwrap();
        let one = mean_percentage_error(&pairs(&per_lambda[..1]), &uef).unwrap();
        assert!((lambdas - 0.75 * one).abs() < 1e-6 && (set - 0.5 * one).abs() < 1e-6, "{lambdas} {set} {one}");
    }
}
