//! PortfolioOpt-v0 as or-gymnasium's `portfolio_opt.py` (the multi-period asset allocation of
//! Dantzig & Infanger 1993): cash plus three assets over ten periods. Each episode draws every
//! period's prices up front, Normal(mean_{i,t}, 0.45) (an asset whose price goes negative is
//! bankrupt: worth 0 from then on); each step buys (positive) or sells (negative) shares of
//! each asset in index order at this period's price, paying proportional transaction costs
//! (a sale is capped by the holding, a purchase by the cash: then floor(cash / unit cost)
//! shares). Reward: 0, then at the last period the wealth (holdings at this period's prices
//! plus cash). Observation: (cash, this period's prices, holdings); 10 periods, truncated.
//!
//! `planning_features` (ours, off by default) appends what the reference's state leaves out,
//! the clock and the price outlook: the fraction of periods left, then per asset the mean
//! price of the next period, the highest mean of the periods after this one, and the last
//! period's mean (the zero-cost liquidation value). The dynamics do not change.
//!
//! Where we differ: the reference asserts that an action lies in [-2000, 2000]; ours clip to
//! it. The reference's last observation is the state before the last trade (it stops updating
//! it); ours is the same. Prices are drawn from the episode's seeded stream, or given
//! (`prices`).

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ObservationLayout};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};

/// The most assets an env takes.
pub const MAX_ASSETS: usize = 20;
/// The most periods per episode.
pub const MAX_PERIODS: usize = 200;
/// The most assets x periods: the references' LPs have 4 variables per cell, and the
/// shrinking horizon solves one per period.
pub const MAX_CELLS: usize = 600;

/// The env's parameters; the defaults are or-gym's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PortfolioConfig {
    /// Cash at the start (100).
    pub initial_cash: f64,
    /// Proportional cost of buying each asset ([0.045, 0.025, 0.035]).
    pub buy_cost: Vec<f64>,
    /// Proportional cost of selling each asset ([0.04, 0.02, 0.03]).
    pub sell_cost: Vec<f64>,
    /// Mean price of each asset (rows) in each period (columns); its width is the horizon.
    pub price_means: Vec<Vec<f64>>,
    /// Standard deviation of every drawn price (0.45; or-gym calls it `asset_price_var`).
    pub price_std: f64,
    /// The largest trade per asset and step, in shares (2000).
    pub max_trade: f64,
    /// Every period's prices (assets x periods) instead of draws.
    pub prices: Option<Vec<Vec<f64>>>,
    /// Append the periods left and the price outlook (module doc); false: the reference's
    /// observation exactly.
    pub planning_features: bool,
}

impl Default for PortfolioConfig {
    fn default() -> Self {
        PortfolioConfig {
            initial_cash: 100.0,
            buy_cost: vec![0.045, 0.025, 0.035],
            sell_cost: vec![0.04, 0.02, 0.03],
            price_means: vec![
                vec![1.25, 2.0, 4.0, 5.0, 3.0, 2.0, 3.0, 6.0, 9.0, 7.0],
                vec![5.0, 3.0, 2.0, 2.0, 1.25, 4.0, 5.0, 6.0, 7.0, 8.0],
                vec![3.0, 5.0, 6.0, 9.0, 10.0, 8.0, 4.0, 2.0, 1.25, 4.0],
            ],
            price_std: 0.45,
            max_trade: 2000.0,
            prices: None,
            planning_features: false,
        }
    }
}

impl PortfolioConfig {
    pub fn assets(&self) -> usize {
        self.price_means.len()
    }

    pub fn periods(&self) -> usize {
        self.price_means.first().map_or(0, Vec::len)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        let too_large = |field, message: String| Err(ConfigError { field, message, too_large: true });
        let (a, t) = (self.assets(), self.periods());
        if a == 0 || t == 0 {
            return invalid("price_means", "needs at least one asset and one period".into());
        }
        if a > MAX_ASSETS {
            return too_large("price_means", format!("at most {MAX_ASSETS} assets, got {a}"));
        }
        if t > MAX_PERIODS {
            return too_large("price_means", format!("at most {MAX_PERIODS} periods, got {t}"));
        }
        if a * t > MAX_CELLS {
            return too_large("price_means", format!("at most {MAX_CELLS} assets x periods, got {a} x {t}"));
        }
        if self.price_means.iter().any(|row| row.len() != t) {
            return invalid("price_means", format!("every asset needs {t} periods, as the first"));
        }
        for (field, costs) in [("buy_cost", &self.buy_cost), ("sell_cost", &self.sell_cost)] {
            if costs.len() != a {
                return invalid(field, format!("{} entries for {a} assets", costs.len()));
            }
            if costs.iter().any(|c| !(0.0..1.0).contains(c)) {
                return invalid(field, "every cost must be in [0, 1)".into());
            }
        }
        let numbers =
            [("initial_cash", self.initial_cash), ("price_std", self.price_std), ("max_trade", self.max_trade)];
        if let Some((field, value)) = numbers.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
            return invalid(field, format!("must be finite and at least 0, got {value}"));
        }
        if self.price_means.iter().flatten().any(|p| !p.is_finite()) {
            return invalid("price_means", "every mean must be finite".into());
        }
        match &self.prices {
            Some(p) if p.len() != a || p.iter().any(|row| row.len() != t) => {
                invalid("prices", format!("needs {a} assets x {t} periods, as price_means"))
            }
            Some(p) if p.iter().flatten().any(|x| !x.is_finite() || *x < 0.0) => {
                invalid("prices", "every price must be finite and at least 0".into())
            }
            _ => Ok(()),
        }
    }

    /// The reference's observation width (cash, prices, holdings).
    pub fn reference_dim(&self) -> usize {
        1 + 2 * self.assets()
    }

    pub fn observation_dim(&self) -> usize {
        self.reference_dim() + if self.planning_features { 1 + 3 * self.assets() } else { 0 }
    }

    /// One episode's prices drawn as the reference draws them (asset by asset, period by
    /// period), bankrupt assets zeroed from their first negative price on.
    pub fn draw_prices(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
        let mut prices: Vec<Vec<f64>> = self
            .price_means
            .iter()
            .map(|row| {
                row.iter().map(|&mean| Normal::new(mean, self.price_std).map_or(mean, |n| n.sample(rng))).collect()
            })
            .collect();
        bankrupt(&mut prices);
        prices
    }
}

/// Zeroes each asset's prices from its first negative one on (the reference's bankruptcy).
pub fn bankrupt(prices: &mut [Vec<f64>]) {
    for row in prices {
        if let Some(first) = row.iter().position(|&p| p < 0.0) {
            row[first..].fill(0.0);
        }
    }
}

impl crate::problems::orgym::env::OrGymConfig for PortfolioConfig {
    fn policy_observation(&self) -> Self {
        PortfolioConfig { planning_features: true, ..self.clone() }
    }

    fn observation_dim(&self) -> usize {
        PortfolioConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        let m = self.max_trade as f32;
        ActionSpace::Continuous { low: vec![-m; self.assets()], high: vec![m; self.assets()] }
    }

    fn layout(&self) -> ObservationLayout {
        ObservationLayout::default()
    }
}

/// One episode in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Portfolio {
    /// Every period's prices, assets x periods.
    pub prices: Vec<Vec<f64>>,
    pub cash: f64,
    pub holdings: Vec<f64>,
    pub period: usize,
    /// The reference's state as last updated (it is not after the last trade).
    state: Vec<f32>,
}

/// One step's trades as executed (shares; bought positive).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trades {
    pub shares: Vec<f64>,
    pub reward: f64,
}

impl Portfolio {
    /// A new episode on these prices.
    pub fn on_prices(config: &PortfolioConfig, prices: Vec<Vec<f64>>) -> Self {
        let mut episode = Portfolio {
            prices,
            cash: config.initial_cash,
            holdings: vec![0.0; config.assets()],
            period: 0,
            state: Vec::new(),
        };
        episode.update_state();
        episode
    }

    fn update_state(&mut self) {
        let t = self.period;
        self.state = std::iter::once(self.cash)
            .chain(self.prices.iter().map(|row| row[t]))
            .chain(self.holdings.iter().copied())
            .map(|x| x as f32)
            .collect();
    }

    /// Wealth at this period's prices.
    pub fn wealth(&self) -> f64 {
        let t = self.period.min(self.prices[0].len() - 1);
        self.prices.iter().zip(&self.holdings).map(|(row, h)| row[t] * h).sum::<f64>() + self.cash
    }

    pub fn step_period(&mut self, config: &PortfolioConfig, action: &[f32]) -> Trades {
        let t = self.period;
        let limit = config.max_trade as f32;
        let mut shares = vec![0.0; config.assets()];
        for (i, &requested) in action.iter().enumerate().take(config.assets()) {
            let price = self.prices[i][t];
            let a = f64::from(requested.clamp(-limit, limit));
            if a < 0.0 {
                let sold = a.abs().min(self.holdings[i]);
                self.holdings[i] -= sold;
                self.cash += price * sold * (1.0 - config.sell_cost[i]);
                shares[i] = -sold;
            } else if a > 0.0 {
                let mut bought = a;
                let mut cost = price * bought * (1.0 + config.buy_cost[i]);
                if self.cash < cost {
                    bought = (self.cash / (price * (1.0 + config.buy_cost[i]))).floor();
                    cost = price * bought * (1.0 + config.buy_cost[i]);
                }
                self.holdings[i] += bought;
                self.cash -= cost;
                shares[i] = bought;
            }
        }
        let last = t + 1 == config.periods();
        let reward = if last { self.wealth() } else { 0.0 };
        self.period += 1;
        if !last {
            self.update_state();
        }
        Trades { shares, reward }
    }

    pub fn fill(&self, config: &PortfolioConfig, out: &mut [f32]) {
        let (out, features) = out.split_at_mut(config.reference_dim());
        out.copy_from_slice(&self.state);
        if config.planning_features {
            let periods = config.periods();
            // The period the state shows (the reference's last state is the one before its last trade).
            let t = self.period.min(periods - 1);
            features[0] = (periods - t) as f32 / periods as f32;
            for (i, means) in config.price_means.iter().enumerate() {
                let next = means[(t + 1).min(periods - 1)];
                let best = means[(t + 1).min(periods - 1)..].iter().copied().fold(f64::MIN, f64::max);
                features[1 + 3 * i..4 + 3 * i].copy_from_slice(&[next as f32, best as f32, means[periods - 1] as f32]);
            }
        }
    }
}

/// A batch of PortfolioOpt envs.
pub type PortfolioVecEnv = crate::problems::orgym::env::OrGymVecEnv<Portfolio>;

impl crate::problems::orgym::env::OrGymEpisode for Portfolio {
    type Config = PortfolioConfig;

    fn start(config: &PortfolioConfig, rng: &mut ChaCha8Rng) -> Self {
        let prices = config.prices.clone().unwrap_or_else(|| config.draw_prices(rng));
        Portfolio::on_prices(config, prices)
    }

    fn step(&mut self, config: &PortfolioConfig, action: &[f32], _rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let trades = self.step_period(config, action);
        (trades.reward as f32, false, self.period >= config.periods())
    }

    fn observe(&self, config: &PortfolioConfig, out: &mut [f32]) {
        self.fill(config, out)
    }
}

impl PortfolioVecEnv {
    /// Env i restarts its episode on these prices (fixture replay presents the reference's).
    pub fn set_prices(&mut self, i: usize, prices: Vec<Vec<f64>>) {
        let config = self.config().clone();
        *self.episode_mut(i) = Portfolio::on_prices(&config, prices);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A sale is capped by the holding, a purchase by the cash (whole shares then), trades run
    /// in asset order (a sale of a later asset cannot fund an earlier purchase), bankruptcy
    /// zeroes the rest of a path, and only the last period pays the wealth.
    #[test]
    fn trades_bankruptcy_and_reward() {
        let config = PortfolioConfig {
            price_means: vec![vec![2.0, 4.0], vec![1.0, 1.0]],
            buy_cost: vec![0.0, 0.0],
            sell_cost: vec![0.5, 0.0],
            ..Default::default()
        };
        let mut p = Portfolio::on_prices(&config, vec![vec![2.0, 4.0], vec![1.0, 1.0]]);
        let t = p.step_period(&config, &[60.0, 10.0]);
        assert_eq!(t.shares, vec![50.0, 0.0], "100 cash buys 50 shares at 2; nothing left for asset 1");
        assert_eq!(t.reward, 0.0);
        let t = p.step_period(&config, &[-80.0, 5000.0]);
        assert_eq!(t.shares[0], -50.0, "sells only what it holds");
        assert_eq!(t.shares[1], 100.0, "50 x 4 x (1 - 0.5) = 100 cash, 100 shares at 1");
        assert!((t.reward - 100.0).abs() < 1e-12 && p.cash.abs() < 1e-12, "{t:?}");
        let mut paths = vec![vec![1.0, -0.5, 2.0], vec![3.0, 2.0, 1.0]];
        bankrupt(&mut paths);
        assert_eq!(paths, vec![vec![1.0, 0.0, 0.0], vec![3.0, 2.0, 1.0]]);
        let drawn = PortfolioConfig::default().draw_prices(&mut ChaCha8Rng::seed_from_u64(3));
        assert_eq!((drawn.len(), drawn[0].len()), (3, 10));
    }
}
