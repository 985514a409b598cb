//! The references a PortfolioOpt policy is judged against, both linear programs solved by
//! Clarabel (`program`):
//! - the perfect-information oracle: the final wealth of the best trades knowing every
//!   period's prices in advance (an upper bound no policy that sees only today's prices can
//!   reach);
//! - the shrinking-horizon LP (model-predictive control): each period, the trades that
//!   maximize the final wealth with today's prices known and every later price at its mean
//!   (0 after a bankruptcy), of which this period's are made.
//!
//! The LP follows the env exactly: trades run in asset order, so the cash after each asset's
//! trade must stay at least 0 (a later sale cannot fund an earlier purchase), holdings stay at
//! least 0, and each trade is at most `max_trade` shares.

use super::env::{Portfolio, PortfolioConfig, PortfolioVecEnv};
use crate::drl::env::VecEnv;
use crate::program::Program;

/// The best plan from the episode's current period on `prices` (assets x all periods; the
/// columns before the current period are ignored): each remaining period's trades (bought
/// positive) and the final wealth it earns; None when the solver fails.
pub fn plan(config: &PortfolioConfig, episode: &Portfolio, prices: &[Vec<f64>]) -> Option<(Vec<Vec<f64>>, f64)> {
    let (a, t0, periods) = (config.assets(), episode.period, config.periods());
    let horizon = periods.checked_sub(t0).filter(|&h| h > 0)?;
    // Per period and asset: bought, sold, holding after, cash after this asset's trade.
    let var = |k: usize, i: usize, which: usize| (k * a + i) * 4 + which;
    let (bought, sold, held, cash) = (0, 1, 2, 3);
    let mut program = Program::new(horizon * a * 4);
    for k in 0..horizon {
        let t = t0 + k;
        for i in 0..a {
            for which in 0..4 {
                program.at_most(vec![(var(k, i, which), -1.0)], 0.0);
            }
            program.at_most(vec![(var(k, i, bought), 1.0)], config.max_trade);
            program.at_most(vec![(var(k, i, sold), 1.0)], config.max_trade);
            // held = previous holding + bought - sold
            let mut row = vec![(var(k, i, held), 1.0), (var(k, i, bought), -1.0), (var(k, i, sold), 1.0)];
            let previous_holding = if k == 0 {
                episode.holdings[i]
            } else {
                row.push((var(k - 1, i, held), -1.0));
                0.0
            };
            program.equal(row, previous_holding);
            // cash = previous cash - p (1 + buy) bought + p (1 - sell) sold
            let p = prices[i][t];
            let mut row = vec![
                (var(k, i, cash), 1.0),
                (var(k, i, bought), p * (1.0 + config.buy_cost[i])),
                (var(k, i, sold), -p * (1.0 - config.sell_cost[i])),
            ];
            let previous_cash = match (k, i) {
                (0, 0) => episode.cash,
                (_, 0) => {
                    row.push((var(k - 1, a - 1, cash), -1.0));
                    0.0
                }
                _ => {
                    row.push((var(k, i - 1, cash), -1.0));
                    0.0
                }
            };
            program.equal(row, previous_cash);
        }
    }
    let last = horizon - 1;
    program.add_linear(var(last, a - 1, cash), -1.0);
    for i in 0..a {
        program.add_linear(var(last, i, held), -prices[i][periods - 1]);
    }
    let x = program.solve()?;
    let trades = (0..horizon).map(|k| (0..a).map(|i| x[var(k, i, bought)] - x[var(k, i, sold)]).collect()).collect();
    let wealth =
        x[var(last, a - 1, cash)] + (0..a).map(|i| prices[i][periods - 1] * x[var(last, i, held)]).sum::<f64>();
    Some((trades, wealth))
}

/// The oracle's wealth on an episode's prices (from its start).
pub fn oracle_wealth(config: &PortfolioConfig, episode: &Portfolio) -> f64 {
    plan(config, episode, &episode.prices).map_or(config.initial_cash, |(_, wealth)| wealth)
}

/// Today's prices, every later one at its mean, and 0 from a bankruptcy on.
pub fn expected_prices(config: &PortfolioConfig, episode: &Portfolio) -> Vec<Vec<f64>> {
    let t = episode.period.min(config.periods() - 1);
    episode
        .prices
        .iter()
        .zip(&config.price_means)
        .map(|(seen, means)| {
            let today = seen[t];
            (0..config.periods())
                .map(|s| match s.cmp(&t) {
                    std::cmp::Ordering::Less => seen[s],
                    std::cmp::Ordering::Equal => today,
                    std::cmp::Ordering::Greater if today <= 0.0 => 0.0,
                    std::cmp::Ordering::Greater => means[s].max(0.0),
                })
                .collect()
        })
        .collect()
}

/// A plan's trades for this period as an action the env executes as planned: the interior
/// point's dust (below 1e-6 shares) dropped, and each purchase capped at what the cash affords
/// when its turn comes, less 1e-6 (else the env would cut it to whole shares).
pub fn as_action(config: &PortfolioConfig, episode: &Portfolio, trades: &[f64]) -> Vec<f32> {
    let t = episode.period.min(config.periods() - 1);
    let mut cash = episode.cash;
    trades
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let price = episode.prices[i][t];
            if x.abs() < 1e-6 {
                0.0
            } else if x < 0.0 {
                let sold = (-x).min(episode.holdings[i]);
                cash += price * sold * (1.0 - config.sell_cost[i]);
                -sold as f32
            } else {
                let unit = price * (1.0 + config.buy_cost[i]);
                let bought = if unit > 0.0 { x.min(cash / unit) * (1.0 - 1e-6) } else { x };
                cash -= unit * bought;
                bought as f32
            }
        })
        .collect()
}

/// The shrinking-horizon LP's trades for the episode's current period (none where the solver
/// fails).
pub fn shrinking_horizon_action(config: &PortfolioConfig, episode: &Portfolio) -> Vec<f32> {
    plan(config, episode, &expected_prices(config, episode))
        .map_or_else(|| vec![0.0; config.assets()], |(trades, _)| as_action(config, episode, &trades[0]))
}

/// Trades from the batch, its observations and their width: one action row per env, flat.
pub type PortfolioActor<'a> = crate::problems::orgym::env::Actor<'a, Portfolio>;

/// The oracle's final wealth on each of `episodes` episodes from `seed` (env i of a batch).
pub fn oracle_wealths(config: &PortfolioConfig, episodes: usize, seed: u64) -> Vec<f64> {
    use rayon::prelude::*;
    let mut env = PortfolioVecEnv::new(config.clone(), episodes);
    env.reset(seed);
    (0..episodes).into_par_iter().map(|i| oracle_wealth(config, env.episode(i))).collect()
}

/// Per-episode final wealth of `act` on `episodes` episodes from `seed`.
pub fn rollout(config: &PortfolioConfig, episodes: usize, seed: u64, act: &mut PortfolioActor<'_>) -> Vec<f64> {
    crate::problems::orgym::env::first_episode_returns(config, episodes, seed, act)
}

/// Per-episode final wealth of the shrinking-horizon LP.
pub fn shrinking_horizon_rollout(config: &PortfolioConfig, episodes: usize, seed: u64) -> Vec<f64> {
    use rayon::prelude::*;
    rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs())
            .into_par_iter()
            .flat_map_iter(|i| shrinking_horizon_action(config, env.episode(i)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle's plan, replayed in the env, earns the wealth it promises; on a two-period
    /// path it buys the asset that doubles, and the shrinking-horizon LP (its means exact) makes
    /// the same first trade.
    #[test]
    fn oracle_plan_replays_and_buys_the_riser() {
        let config = PortfolioConfig::default();
        let env = PortfolioVecEnv::new(config.clone(), 4);
        for i in 0..4 {
            let mut episode = env.episode(i).clone();
            let (trades, wealth) = plan(&config, &episode, &episode.prices.clone()).expect("solved");
            let mut earned = 0.0;
            for row in &trades {
                let action = as_action(&config, &episode, row);
                earned += episode.step_period(&config, &action).reward;
            }
            assert!((earned - wealth).abs() <= 1e-5 * wealth.max(1.0), "episode {i}: replay {earned}, plan {wealth}");
            assert!(wealth >= config.initial_cash - 1e-6, "holding cash is always possible");
        }
        let two = PortfolioConfig {
            price_means: vec![vec![1.0, 2.0], vec![1.0, 1.0]],
            buy_cost: vec![0.0, 0.0],
            sell_cost: vec![0.0, 0.0],
            price_std: 0.0,
            ..Default::default()
        };
        let episode = PortfolioVecEnv::new(two.clone(), 1).episode(0).clone();
        let (trades, wealth) = plan(&two, &episode, &episode.prices).expect("solved");
        assert!((trades[0][0] - 100.0).abs() < 1e-4 && (wealth - 200.0).abs() < 1e-4, "{trades:?} {wealth}");
        assert_eq!(shrinking_horizon_action(&two, &episode)[0].round(), 100.0);
    }
}
