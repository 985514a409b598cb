//! The reference an inventory policy is judged against: the echelon base-stock policy (order
//! up to z_i on the echelon inventory position, as or-gym's `base_stock_action` describes it)
//! with levels optimized on tuning episodes by a pattern search over integer z (Hooke-Jeeves:
//! steps 64, 32, ..., 1 along each stage while the mean return improves), and the
//! shrinking-horizon linear program (Hubbs et al. 2020, section 5.3: model-predictive control):
//! each period, the discounted profit of the remaining periods is maximized with every future
//! demand at its mean (the given demand when the config fixes it, which makes the LP the
//! perfect-information oracle), and the first period's orders are placed.
//!
//! The LP is solved by Clarabel (`program`, already the portfolio's solver): pure Rust,
//! no system library, and an interior-point LP of a few hundred variables takes milliseconds.

use super::env::{Chain, InventoryConfig};
use crate::drl::env::VecEnv;
use crate::program::{Program, Row};

/// The base-stock order of each stage: z_i minus the echelon position sum_{j <= i} (on hand +
/// in transit - last backlog), at least 0, at most the capacity and the supplier's stock.
pub fn base_stock_action(config: &InventoryConfig, chain: &Chain, levels: &[f64]) -> Vec<f32> {
    let m = config.stages();
    let mut position = 0.0;
    (0..m)
        .map(|i| {
            position += chain.on_hand[i] + chain.pipeline[i] - chain.backlog[i];
            let supplier = if i + 1 < m { chain.on_hand[i + 1] } else { f64::INFINITY };
            (levels[i] - position).max(0.0).min(f64::from(config.capacity[i])).min(supplier) as f32
        })
        .collect()
}

/// Actions from the batch, its observations and their width: one row per env, flat.
pub type InventoryActor<'a> = crate::problems::orgym::env::Actor<'a, Chain>;

/// Per-episode returns of `act` on `episodes` episodes from `seed` (each env's first episode).
pub fn rollout(config: &InventoryConfig, episodes: usize, seed: u64, act: &mut InventoryActor<'_>) -> Vec<f64> {
    crate::problems::orgym::env::first_episode_returns(config, episodes, seed, act)
}

/// The mean return of base-stock levels on the tuning episodes.
pub fn base_stock_mean(config: &InventoryConfig, levels: &[f64], episodes: usize, seed: u64) -> f64 {
    let returns = rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs()).flat_map(|i| base_stock_action(config, env.episode(i), levels)).collect()
    });
    returns.iter().sum::<f64>() / episodes as f64
}

/// The best base-stock levels found on `episodes` tuning episodes from `seed` and their mean
/// return. Starts from the mean demand over each echelon's cumulative lead time plus one.
pub fn best_base_stock(config: &InventoryConfig, episodes: usize, seed: u64) -> (Vec<f64>, f64) {
    let m = config.stages();
    let mut levels: Vec<f64> = (0..m)
        .map(|i| (config.mean_demand * config.lead_time[..=i].iter().map(|&l| (l + 1) as f64).sum::<f64>()).round())
        .collect();
    let mut best = base_stock_mean(config, &levels, episodes, seed);
    let mut step = 64.0;
    while step >= 1.0 {
        let mut improved = true;
        while improved {
            improved = false;
            for i in 0..m {
                for direction in [1.0, -1.0] {
                    let mut trial = levels.clone();
                    trial[i] = (trial[i] + direction * step).max(0.0);
                    let value = base_stock_mean(config, &trial, episodes, seed);
                    if value > best + 1e-9 {
                        (levels, best, improved) = (trial, value, true);
                    }
                }
            }
        }
        step /= 2.0;
    }
    (levels, best)
}

/// The shrinking-horizon LP's orders for the chain's current period (nearest integers), or
/// None when the solver fails (the LP is always feasible: ordering nothing is).
///
/// Variables per remaining period k and stage i: requested a, shipped s (<= capacity and the
/// supplier's stock at the start of the period), the retailer's sales, unmet demand or orders
/// u (carried as backlog in v0, lost in v1) and end-of-period stock x >= 0; arrivals are
/// shipments L_i periods earlier, known ones from the chain. Every `min` of the env becomes
/// an upper bound, which the objective makes tight where selling pays.
pub fn shrinking_horizon_action(config: &InventoryConfig, chain: &Chain) -> Option<Vec<f32>> {
    let (m, n0) = (config.stages(), chain.period);
    let horizon = config.periods.checked_sub(n0).filter(|&t| t > 0)?;
    let per_period = 3 * m + 1 + (m + 1);
    let mut program = Program::new(horizon * per_period);
    let (a, s, x) = (
        |k: usize, i: usize| k * per_period + i,
        |k: usize, i: usize| k * per_period + m + i,
        |k: usize, i: usize| k * per_period + 2 * m + i,
    );
    let sold = |k: usize| k * per_period + 3 * m;
    let u = |k: usize, j: usize| k * per_period + 3 * m + 1 + j;
    for v in 0..horizon * per_period {
        program.at_most(vec![(v, -1.0)], 0.0);
    }
    // Stock of stage i at the start of period k: the variable x(k-1, i) or the chain's, as a
    // row plus a constant.
    let start = |k: usize, i: usize| -> (Row, f64) {
        if k == 0 {
            (Vec::new(), chain.on_hand[i])
        } else {
            (vec![(x(k - 1, i), 1.0)], 0.0)
        }
    };
    let arrival = |k: usize, i: usize| -> (Row, f64) {
        let n = n0 + k;
        match n.checked_sub(config.lead_time[i]) {
            Some(from) if from >= n0 => (vec![(s(from - n0, i), 1.0)], 0.0),
            _ => (Vec::new(), chain.shipped_arrival(config, i, n)),
        }
    };
    let carried = |k: usize, j: usize| -> (Row, f64) {
        match (config.backlog, k) {
            (false, _) => (Vec::new(), 0.0),
            (true, 0) => (Vec::new(), if n0 >= 1 { chain.backlog[j] } else { 0.0 }),
            (true, _) => (vec![(u(k - 1, j), 1.0)], 0.0),
        }
    };
    for k in 0..horizon {
        let n = n0 + k;
        let demand = config.demand.as_ref().map_or(config.mean_demand, |d| f64::from(d[n]));
        for i in 0..m {
            program.at_most(vec![(s(k, i), 1.0)], f64::from(config.capacity[i]));
            if i + 1 < m {
                // s(k, i) <= start(k, i + 1)
                let (row, constant) = start(k, i + 1);
                let mut r: Row = vec![(s(k, i), 1.0)];
                r.extend(row.iter().map(|&(v, c)| (v, -c)));
                program.at_most(r, constant);
            }
            // u(k, i + 1) = a(k, i) + carried - s(k, i)
            let (row, constant) = carried(k, i + 1);
            let mut r: Row = vec![(u(k, i + 1), 1.0), (a(k, i), -1.0), (s(k, i), 1.0)];
            r.extend(row.iter().map(|&(v, c)| (v, -c)));
            program.equal(r, constant);
            // x(k, i) = start + arrival - sales_i
            let ((start_row, start_constant), (arrival_row, arrival_constant)) = (start(k, i), arrival(k, i));
            let sales = if i == 0 { sold(k) } else { s(k, i - 1) };
            let mut r: Row = vec![(x(k, i), 1.0), (sales, 1.0)];
            r.extend(start_row.iter().chain(&arrival_row).map(|&(v, c)| (v, -c)));
            program.equal(r, start_constant + arrival_constant);
        }
        // u(k, 0) = demand + carried - sold(k)
        let (row, constant) = carried(k, 0);
        let mut r: Row = vec![(u(k, 0), 1.0), (sold(k), 1.0)];
        r.extend(row.iter().map(|&(v, c)| (v, -c)));
        program.equal(r, demand + constant);
        // The env's profit, minimized negated: sum over i = 0..M of price_i sales_i - r_i
        // bought_i - k_i u_i - h_i x_i.
        let weight = -config.discount.powi(n as i32);
        for i in 0..=m {
            let (unit_price, sales) =
                if i == 0 { (config.price, sold(k)) } else { (config.unit_cost[i - 1], s(k, i - 1)) };
            program.add_linear(sales, weight * unit_price);
            program.add_linear(s(k, i.min(m - 1)), -weight * config.unit_cost[i]);
            program.add_linear(u(k, i), -weight * config.penalty[i]);
            if i < m {
                program.add_linear(x(k, i), -weight * config.holding_cost[i]);
            }
        }
    }
    let solution = program.solve()?;
    Some((0..m).map(|i| solution[a(0, i)].max(0.0).round() as f32).collect())
}

/// Per-episode returns of the shrinking-horizon LP on `episodes` episodes from `seed` (one
/// LP per env and period; orders of nothing where the solver fails).
pub fn shrinking_horizon_returns(config: &InventoryConfig, episodes: usize, seed: u64) -> Vec<f64> {
    use rayon::prelude::*;
    rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs())
            .into_par_iter()
            .flat_map_iter(|i| {
                shrinking_horizon_action(config, env.episode(i)).unwrap_or_else(|| vec![0.0; config.stages()])
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::super::env::InventoryVecEnv;
    use super::*;

    /// The base-stock order fills the echelon gap within capacity and the supplier's stock, and
    /// the pattern search never returns levels worse than its start.
    #[test]
    fn base_stock_orders_and_search() {
        let config = InventoryConfig { periods: 10, ..Default::default() };
        let env = InventoryVecEnv::new(config.clone(), 1);
        let chain = env.episode(0);
        // Positions 100, 200, 400; levels 150, 200, 900: orders 50, 0, min(500, 80 capacity).
        assert_eq!(base_stock_action(&config, chain, &[150.0, 200.0, 900.0]), vec![50.0, 0.0, 80.0]);
        // Order of stage 0 is capped by stage 1's stock (100) and capacity (100).
        assert_eq!(base_stock_action(&config, chain, &[500.0, 0.0, 0.0])[0], 100.0);
        let start: Vec<f64> = vec![20.0 * 4.0, 20.0 * 10.0, 20.0 * 21.0];
        let (levels, best) = best_base_stock(&config, 16, 3);
        assert!(best >= base_stock_mean(&config, &start, 16, 3) - 1e-9, "{levels:?}");
        assert!((best - base_stock_mean(&config, &levels, 16, 3)).abs() < 1e-9, "the reported mean is the levels'");
    }

    /// With the demand known (perfect information), the LP's first orders replayed period by
    /// period earn its planned profit up to rounding, at least every base-stock policy's, and a
    /// single stage with no lead time orders exactly the demand not covered by stock.
    #[test]
    fn shrinking_horizon_lp_with_known_demand() {
        for backlog in [true, false] {
            let demand: Vec<u32> = (0..12).map(|t| 15 + (t * 7) % 11).collect();
            let config = InventoryConfig { periods: 12, backlog, demand: Some(demand.clone()), ..Default::default() };
            let lp = shrinking_horizon_returns(&config, 1, 0)[0];
            let (_, best) = best_base_stock(&config, 1, 0);
            assert!(lp >= best - 1e-6, "backlog {backlog}: LP {lp} below base stock {best}");
            let single = InventoryConfig {
                periods: 4,
                initial_inventory: vec![10],
                unit_cost: vec![1.0, 0.5],
                penalty: vec![0.1, 0.05],
                holding_cost: vec![0.1],
                capacity: vec![100],
                lead_time: vec![0],
                backlog,
                demand: Some(vec![30, 20, 25, 5]),
                ..Default::default()
            };
            let env = InventoryVecEnv::new(single.clone(), 1);
            assert_eq!(shrinking_horizon_action(&single, env.episode(0)), Some(vec![20.0]), "30 demanded, 10 held");
        }
    }
}
