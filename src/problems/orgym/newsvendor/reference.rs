//! The references a newsvendor policy is judged against.
//!
//! - The textbook critical fractile: order F^-1(cu / (cu + co)) of Poisson(mu) every step, with
//!   underage cost cu = p - c + k and overage cost co = c + h (stock expires each step).
//! - The optimum of the env as written, by dynamic programming with the clock. An order q
//!   placed at step t arrives at t + L and earns S(q) = E[p min(q, D) - h (q - D)+ - k (D - q)+]
//!   there; the purchase term charges q x c gamma^L x E[(x0 - D)+] now, where x0 (what arrives
//!   now) is the order of step t - L. So the orders t, t + L, t + 2L, ... form a chain whose state
//!   is x0: V_t(x0) = max_q { -a(x0) q + [t + L < T] (S(q) + V_{t+L}(q)) }, a(x0) = c gamma^L
//!   E[(x0 - D)+]. Both terms are piecewise linear between integers (V_{t+L} convex on each unit
//!   interval), so integer orders 0..Q suffice, with Q far in Poisson(mu)'s upper tail. No policy
//!   has a higher expected return; ours see no clock (or-gym's observation has none).

use super::env::{Economics, NewsvendorConfig, NewsvendorVecEnv};
use crate::drl::env::VecEnv;

/// The largest order grid the DP takes (about mu <= 2600); beyond it there is no exact reference.
pub const MAX_GRID: usize = 3000;
/// The most steps x grid^2 the DP does (about a second; its tables hold steps x grid entries).
pub const MAX_DP_WORK: f64 = 1e9;

/// Poisson(mu)'s pmf-derived tables on 0..=q_max.
struct Demand {
    mu: f64,
    /// E[min(q, D)] for q = 0..=q_max.
    expected_sold: Vec<f64>,
}

impl Demand {
    fn new(mu: f64) -> Option<Demand> {
        let q_max = (mu + 8.0 * mu.sqrt() + 20.0).ceil() as usize;
        if q_max > MAX_GRID {
            return None;
        }
        // pmf in log space (no underflow of e^-mu), the cdf summed from it.
        let mut cdf = Vec::with_capacity(q_max + 1);
        let (mut log_pmf, mut total) = (-mu, 0.0);
        for n in 0..=q_max {
            if n > 0 {
                log_pmf += mu.max(f64::MIN_POSITIVE).ln() - (n as f64).ln();
            }
            total += log_pmf.exp();
            cdf.push(total.min(1.0));
        }
        let mut expected_sold = vec![0.0; q_max + 1];
        for q in 1..=q_max {
            expected_sold[q] = expected_sold[q - 1] + (1.0 - cdf[q - 1]);
        }
        Some(Demand { mu, expected_sold })
    }

    fn q_max(&self) -> usize {
        self.expected_sold.len() - 1
    }

    fn excess(&self, q: usize) -> f64 {
        q as f64 - self.expected_sold[q]
    }

    /// S(q): expected sales less holding and lost-sales penalty of q units on hand.
    fn stage(&self, e: &Economics, q: usize) -> f64 {
        let sold = self.expected_sold[q];
        e.price * sold - e.holding_cost * (q as f64 - sold) - e.lost_sales_penalty * (self.mu - sold)
    }

    /// The smallest n with P(D <= n) >= fraction (cdf from E[min]: P(D <= n) = 1 - (E[min(n+1)] - E[min(n)])).
    fn quantile(&self, fraction: f64) -> usize {
        (0..self.q_max())
            .find(|&n| 1.0 - (self.expected_sold[n + 1] - self.expected_sold[n]) >= fraction)
            .unwrap_or(self.q_max())
    }
}

/// The textbook critical-fractile order of an episode's economics.
pub fn critical_fractile_order(e: &Economics) -> f64 {
    let (under, over) = (e.price - e.cost + e.lost_sales_penalty, e.cost + e.holding_cost);
    if under <= 0.0 {
        return 0.0;
    }
    match Demand::new(e.mean_demand) {
        Some(demand) => demand.quantile(under / (under + over)) as f64,
        None => e.mean_demand,
    }
}

/// The optimal policy of one episode's economics: the best order at each step for each
/// integer amount arriving then, and the expected return from the empty start.
pub struct OptimalPlan {
    /// orders[t][x0].
    orders: Vec<Vec<u32>>,
    pub expected_return: f64,
}

impl OptimalPlan {
    /// None when Poisson(mu)'s grid exceeds `MAX_GRID` or the DP's work `MAX_DP_WORK`.
    pub fn new(config: &NewsvendorConfig, e: &Economics) -> Option<OptimalPlan> {
        let demand = Demand::new(e.mean_demand)?;
        let (t_max, lead, q_max) = (config.step_limit, config.lead_time, demand.q_max());
        if t_max as f64 * ((q_max + 1) as f64).powi(2) > MAX_DP_WORK {
            return None;
        }
        let stage: Vec<f64> = (0..=q_max).map(|q| demand.stage(e, q)).collect();
        let unit_cost = e.cost * config.gamma.powi(lead as i32);
        if lead == 0 {
            // On hand is this step's own order: each step alone, S(q) - c q E[(q - D)+].
            let (q, best) = (0..=q_max)
                .map(|q| (q, stage[q] - unit_cost * q as f64 * demand.excess(q)))
                .fold((0, f64::NEG_INFINITY), |b, x| if x.1 > b.1 { x } else { b });
            let orders = vec![vec![q as u32; 1]; t_max];
            return Some(OptimalPlan { orders, expected_return: best * t_max as f64 });
        }
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); t_max];
        let mut orders: Vec<Vec<u32>> = vec![Vec::new(); t_max];
        for t in (0..t_max).rev() {
            let arrives = t + lead < t_max;
            // What an order q is worth beyond its purchase term.
            let worth: Vec<f64> =
                (0..=q_max).map(|q| if arrives { stage[q] + values[t + lead][q] } else { 0.0 }).collect();
            let (mut v, mut o) = (vec![0.0; q_max + 1], vec![0u32; q_max + 1]);
            for x0 in 0..=q_max {
                let a = unit_cost * demand.excess(x0);
                let (mut best, mut arg) = (worth[0], 0);
                for (q, w) in worth.iter().enumerate().skip(1) {
                    let value = w - a * q as f64;
                    if value > best {
                        (best, arg) = (value, q);
                    }
                }
                (v[x0], o[x0]) = (best, arg as u32);
            }
            (values[t], orders[t]) = (v, o);
        }
        // Steps before the first arrivals start with nothing on hand (and earn -k mu each).
        let empty: f64 = (0..lead.min(t_max)).map(|_| stage[0]).sum();
        let expected_return = empty + (0..lead.min(t_max)).map(|t| values[t][0]).sum::<f64>();
        Some(OptimalPlan { orders, expected_return })
    }

    /// The order at step t when `on_hand` arrives (rounded to the grid).
    pub fn order(&self, t: usize, on_hand: f32) -> f32 {
        let row = &self.orders[t.min(self.orders.len() - 1)];
        row[(on_hand.max(0.0).round() as usize).min(row.len() - 1)] as f32
    }
}

/// Orders from the observations, their width and the step: one order per env.
pub type NewsvendorActor<'a> = dyn FnMut(&[f32], usize, usize) -> Vec<f32> + 'a;

/// Per-episode returns of `act` on `episodes` episodes (env i of a batch reset with `seed`);
/// every episode runs `step_limit` steps.
pub fn rollout(config: &NewsvendorConfig, episodes: usize, seed: u64, act: &mut NewsvendorActor<'_>) -> Vec<f64> {
    crate::problems::orgym::env::first_episode_returns::<super::env::Shop>(
        config,
        episodes,
        seed,
        &mut |env, obs, dim| act(obs, dim, env.episode(0).steps),
    )
}

/// The economics in an observation row (f32-rounded as observed).
pub fn economics_of(row: &[f32]) -> Economics {
    let x = |i: usize| f64::from(row[i]);
    Economics { price: x(0), cost: x(1), holding_cost: x(2), lost_sales_penalty: x(3), mean_demand: x(4) }
}

/// The optimal plans of a batch's episodes (env i of a batch reset with `seed`), None where
/// the demand is too large for the grid.
pub fn plans(config: &NewsvendorConfig, episodes: usize, seed: u64) -> Vec<Option<OptimalPlan>> {
    use rayon::prelude::*;
    let mut env = NewsvendorVecEnv::new(config.clone(), episodes);
    env.reset(seed);
    let economics: Vec<Economics> = (0..episodes).map(|i| env.episode(i).economics).collect();
    economics.par_iter().map(|e| OptimalPlan::new(config, e)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small newsvendor with a few orders: the DP's expected return equals the best over
    /// every integer order sequence, by enumeration with exact expectations.
    #[test]
    fn the_plan_matches_enumeration() {
        let config = NewsvendorConfig { lead_time: 1, step_limit: 3, ..Default::default() };
        let e = Economics { price: 9.0, cost: 3.0, holding_cost: 1.0, lost_sales_penalty: 2.0, mean_demand: 1.5 };
        let plan = OptimalPlan::new(&config, &e).unwrap();
        let demand = Demand::new(e.mean_demand).unwrap();
        let q_max = demand.q_max();
        // Orders q0 (arrives at 1), q1 (arrives at 2), q2 (never). Rewards:
        // t0: on hand 0: -k mu; t1: S(q0) - c q1 E[(q0 - D)+]; t2: S(q1) - c q2 E[(q1 - D)+].
        let mut best = f64::NEG_INFINITY;
        for q0 in 0..=q_max {
            for q1 in 0..=q_max {
                for q2 in [0, 3] {
                    let total = demand.stage(&e, 0) + demand.stage(&e, q0) - e.cost * q1 as f64 * demand.excess(q0)
                        + demand.stage(&e, q1)
                        - e.cost * q2 as f64 * demand.excess(q1);
                    best = best.max(total);
                }
            }
        }
        assert!((plan.expected_return - best).abs() < 1e-9, "DP {} vs enumeration {best}", plan.expected_return);
        assert_eq!(plan.order(2, 1.0), 0.0, "an order that never arrives is not placed");
    }

    /// The textbook order is the fractile of Poisson(mu).
    #[test]
    fn the_critical_fractile_is_the_poisson_quantile() {
        let e = Economics { price: 10.0, cost: 4.0, holding_cost: 1.0, lost_sales_penalty: 0.0, mean_demand: 3.0 };
        // cu = 6, co = 5: fraction 6/11 = 0.545; Poisson(3) cdf: 0.050, 0.199, 0.423, 0.647.
        assert_eq!(critical_fractile_order(&e), 3.0);
    }
}
