//! StockTrading-v0: FinRL's stock-trading environment (`finrl/meta/env_stock_trading/
//! env_stocktrading.py`, FinRL 0.3.x; Liu et al. 2020) ported natively, on a price set this
//! module generates (no downloads): D stocks, one step per trading day.
//!
//! As FinRL: the action is a vector in [-1, 1]^D scaled by `hmax` to whole shares; sales go
//! first, in the order of the most negative action, capped by the holding; purchases next, in
//! the order of the largest action, capped by the cash (floor(cash / (price (1 + cost))) shares);
//! proportional costs on both sides; the reward is the change of total assets (cash plus
//! holdings at the close) times `reward_scaling`; the episode runs from the first to the last
//! day of its period and ends terminated. The state is FinRL's: cash, the D closes, the D
//! holdings, then each technical indicator's D values (MACD, Bollinger upper and lower bands,
//! RSI 30, CCI 30, 30- and 60-day close SMAs; FinRL's DX 30 needs intraday highs and lows,
//! which a close-only price set lacks, so it is left out).
//!
//! Where we differ: FinRL feeds the raw state (cash in dollars) to the networks; ours divides
//! each column by a constant fixed by the data set (cash by the initial amount, prices and
//! price-valued indicators by the stock's first close, holdings by `hmax`, RSI by 100, CCI by
//! 100), which leaves the dynamics unchanged and spares every algorithm a normalizer.
//!
//! The price set: daily log returns r_{t,i} = mu_i + beta_i m_t + s_i e_{t,i}, a market factor
//! m_t = phi m_{t-1} + sigma_m eta_t (momentum, so the indicators carry some signal), drawn from
//! `data_seed`; 60 warm-up days for the indicators, then `train_days` and `test_days`.
//! `split` picks the period an env trades: policies train on "train" and are scored
//! out-of-sample on "test" (`rlsolver bench trading`).

use super::ConfigError;
use super::{ActionSpace, StepBatch, VecEnv};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const ID: &str = "StockTrading-v0";
/// Days before the first trading day (the 60-day SMA's window).
const WARMUP: usize = 60;
/// Indicator columns per stock.
const INDICATORS: usize = 7;
pub const MAX_STOCKS: usize = 100;
pub const MAX_DAYS: usize = 10_000;

/// `env_config` fields; defaults as FinRL's DOW-30 example, on 10 generated stocks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct StockTradingConfig {
    pub stocks: usize,
    pub train_days: usize,
    pub test_days: usize,
    /// The generated market (a different seed, a different price set).
    pub data_seed: u64,
    /// "train" or "test".
    pub split: String,
    /// Most shares one action trades.
    pub hmax: f64,
    pub initial_amount: f64,
    pub buy_cost_pct: f64,
    pub sell_cost_pct: f64,
    pub reward_scaling: f64,
}

impl Default for StockTradingConfig {
    fn default() -> Self {
        StockTradingConfig {
            stocks: 10,
            train_days: 756,
            test_days: 252,
            data_seed: 0,
            split: "train".into(),
            hmax: 100.0,
            initial_amount: 1_000_000.0,
            buy_cost_pct: 0.001,
            sell_cost_pct: 0.001,
            reward_scaling: 1e-4,
        }
    }
}

impl StockTradingConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field: &'static str, message: String| Err(ConfigError { field, message, too_large: false });
        if self.stocks == 0 || self.stocks > MAX_STOCKS {
            return Err(ConfigError {
                field: "stocks",
                message: format!("expected 1..={MAX_STOCKS}"),
                too_large: true,
            });
        }
        for (field, days) in [("train_days", self.train_days), ("test_days", self.test_days)] {
            if !(2..=MAX_DAYS).contains(&days) {
                return Err(ConfigError { field, message: format!("expected 2..={MAX_DAYS}"), too_large: days > 2 });
            }
        }
        if self.split != "train" && self.split != "test" {
            return invalid("split", "expected \"train\" or \"test\"".into());
        }
        for (field, v) in [("hmax", self.hmax), ("initial_amount", self.initial_amount)] {
            if !(v.is_finite() && v >= 1.0) {
                return invalid(field, "expected at least 1".into());
            }
        }
        for (field, v) in [("buy_cost_pct", self.buy_cost_pct), ("sell_cost_pct", self.sell_cost_pct)] {
            if !(0.0..0.5).contains(&v) {
                return invalid(field, "expected 0 <= cost < 0.5".into());
            }
        }
        if !(self.reward_scaling.is_finite() && self.reward_scaling > 0.0) {
            return invalid("reward_scaling", "expected a positive number".into());
        }
        Ok(())
    }
}

/// The generated market: closes [day][stock] over warm-up, train and test, and the indicators.
#[derive(Debug)]
pub struct PriceSet {
    pub closes: Vec<Vec<f64>>,
    /// [day][indicator][stock], in the state's order.
    indicators: Vec<Vec<Vec<f64>>>,
}

fn sma(series: &[f64], t: usize, n: usize) -> f64 {
    let from = (t + 1).saturating_sub(n);
    series[from..=t].iter().sum::<f64>() / (t + 1 - from) as f64
}

impl PriceSet {
    pub fn generate(stocks: usize, days: usize, seed: u64) -> PriceSet {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let total = WARMUP + days;
        let mu: Vec<f64> = (0..stocks).map(|_| rng.gen_range(-0.0002..0.0008)).collect();
        let beta: Vec<f64> = (0..stocks).map(|_| rng.gen_range(0.5..1.5)).collect();
        let sigma: Vec<f64> = (0..stocks).map(|_| rng.gen_range(0.01..0.02)).collect();
        let mut price: Vec<f64> = (0..stocks).map(|_| rng.gen_range(20.0..200.0)).collect();
        let (phi, sigma_m) = (0.1, 0.01);
        let mut market = 0.0;
        let mut closes = Vec::with_capacity(total);
        for _ in 0..total {
            let eta: f64 = StandardNormal.sample(&mut rng);
            market = phi * market + sigma_m * eta;
            for i in 0..stocks {
                let e: f64 = StandardNormal.sample(&mut rng);
                price[i] *= (mu[i] + beta[i] * market + sigma[i] * e).exp();
            }
            closes.push(price.clone());
        }
        let series: Vec<Vec<f64>> = (0..stocks).map(|i| closes.iter().map(|c| c[i]).collect()).collect();
        let mut per_stock = vec![vec![[0.0; INDICATORS]; stocks]; total];
        for (i, s) in series.iter().enumerate() {
            let (mut ema12, mut ema26) = (s[0], s[0]);
            for t in 0..total {
                ema12 += (s[t] - ema12) * 2.0 / 13.0;
                ema26 += (s[t] - ema26) * 2.0 / 27.0;
                let mean20 = sma(s, t, 20);
                let from20 = (t + 1).saturating_sub(20);
                let sd20 =
                    (s[from20..=t].iter().map(|x| (x - mean20).powi(2)).sum::<f64>() / (t + 1 - from20) as f64).sqrt();
                let from30 = (t + 1).saturating_sub(31);
                let (mut gain, mut loss) = (0.0, 0.0);
                for k in from30 + 1..=t {
                    let d = s[k] - s[k - 1];
                    if d > 0.0 {
                        gain += d;
                    } else {
                        loss -= d;
                    }
                }
                let rsi = if gain + loss == 0.0 { 50.0 } else { 100.0 * gain / (gain + loss) };
                let mean30 = sma(s, t, 30);
                let from = (t + 1).saturating_sub(30);
                let mad = s[from..=t].iter().map(|x| (x - mean30).abs()).sum::<f64>() / (t + 1 - from) as f64;
                let cci = if mad == 0.0 { 0.0 } else { (s[t] - mean30) / (0.015 * mad) };
                per_stock[t][i] =
                    [ema12 - ema26, mean20 + 2.0 * sd20, mean20 - 2.0 * sd20, rsi, cci, mean30, sma(s, t, 60)];
            }
        }
        let indicators = per_stock
            .into_iter()
            .map(|day| (0..INDICATORS).map(|k| day.iter().map(|v| v[k]).collect()).collect())
            .collect();
        PriceSet { closes, indicators }
    }
}

/// One account: what FinRL's env keeps between steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Account {
    cash: f64,
    holdings: Vec<f64>,
    day: usize,
}

pub struct StockTradingVecEnv {
    config: StockTradingConfig,
    prices: Arc<PriceSet>,
    /// First and last day (inclusive) of the split.
    first: usize,
    last: usize,
    accounts: Vec<Account>,
}

impl StockTradingVecEnv {
    pub fn new(config: StockTradingConfig, num_envs: usize) -> Self {
        let prices =
            Arc::new(PriceSet::generate(config.stocks, config.train_days + config.test_days, config.data_seed));
        let (first, last) = if config.split == "test" {
            (WARMUP + config.train_days, WARMUP + config.train_days + config.test_days - 1)
        } else {
            (WARMUP, WARMUP + config.train_days - 1)
        };
        let fresh = Account { cash: config.initial_amount, holdings: vec![0.0; config.stocks], day: first };
        StockTradingVecEnv { config, prices, first, last, accounts: vec![fresh; num_envs] }
    }

    fn fresh_account(&self) -> Account {
        Account { cash: self.config.initial_amount, holdings: vec![0.0; self.config.stocks], day: self.first }
    }

    /// The split's closes, [day][stock] (the baselines trade on them).
    pub fn closes(&self) -> &[Vec<f64>] {
        &self.prices.closes[self.first..=self.last]
    }

    /// The training period's closes, [day][stock], whatever this env's split.
    pub fn train_closes(&self) -> &[Vec<f64>] {
        &self.prices.closes[WARMUP..WARMUP + self.config.train_days]
    }

    pub fn config(&self) -> &StockTradingConfig {
        &self.config
    }

    fn total_assets(&self, account: &Account) -> f64 {
        let closes = &self.prices.closes[account.day];
        account.cash + account.holdings.iter().zip(closes).map(|(h, p)| h * p).sum::<f64>()
    }

    fn observe(&self, account: &Account, out: &mut [f32]) {
        let d = self.config.stocks;
        let base = &self.prices.closes[self.first];
        let closes = &self.prices.closes[account.day];
        out[0] = (account.cash / self.config.initial_amount) as f32;
        for i in 0..d {
            out[1 + i] = (closes[i] / base[i]) as f32;
            out[1 + d + i] = (account.holdings[i] / self.config.hmax) as f32;
        }
        for (k, values) in self.prices.indicators[account.day].iter().enumerate() {
            for i in 0..d {
                let divisor = match k {
                    3 | 4 => 100.0,
                    _ => base[i],
                };
                out[1 + 2 * d + k * d + i] = (values[i] / divisor) as f32;
            }
        }
    }

    fn trade(&self, account: &mut Account, action: &[f32]) {
        let (hmax, closes) = (self.config.hmax, &self.prices.closes[account.day]);
        let shares: Vec<f64> = action.iter().map(|a| (f64::from(a.clamp(-1.0, 1.0)) * hmax).trunc()).collect();
        let mut order: Vec<usize> = (0..shares.len()).collect();
        order.sort_by(|&a, &b| shares[a].total_cmp(&shares[b]));
        for &i in order.iter().filter(|&&i| shares[i] < 0.0) {
            let sold = (-shares[i]).min(account.holdings[i]);
            account.cash += closes[i] * sold * (1.0 - self.config.sell_cost_pct);
            account.holdings[i] -= sold;
        }
        for &i in order.iter().rev().filter(|&&i| shares[i] > 0.0) {
            let unit = closes[i] * (1.0 + self.config.buy_cost_pct);
            let bought = shares[i].min((account.cash / unit).floor());
            account.cash -= unit * bought;
            account.holdings[i] += bought;
        }
    }
}

impl VecEnv for StockTradingVecEnv {
    fn num_envs(&self) -> usize {
        self.accounts.len()
    }

    fn observation_dim(&self) -> usize {
        1 + (2 + INDICATORS) * self.config.stocks
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Continuous { low: vec![-1.0; self.config.stocks], high: vec![1.0; self.config.stocks] }
    }

    /// The price path is the data set's; the seed changes nothing (FinRL's env is
    /// deterministic given its data).
    fn reset(&mut self, _seed: u64) -> Vec<f32> {
        let fresh = self.fresh_account();
        self.accounts.iter_mut().for_each(|a| *a = fresh.clone());
        let dim = self.observation_dim();
        let mut out = vec![0.0; self.accounts.len() * dim];
        for (account, row) in self.accounts.iter().zip(out.chunks_mut(dim)) {
            self.observe(account, row);
        }
        out
    }

    fn step(&mut self, actions: &[f32]) -> StepBatch {
        let (b, dim, d) = (self.accounts.len(), self.observation_dim(), self.config.stocks);
        let mut batch = StepBatch::zeroed(b, dim);
        let mut accounts = std::mem::take(&mut self.accounts);
        for (i, account) in accounts.iter_mut().enumerate() {
            let before = self.total_assets(account);
            self.trade(account, &actions[i * d..(i + 1) * d]);
            account.day += 1;
            let after = self.total_assets(account);
            batch.rewards[i] = ((after - before) * self.config.reward_scaling) as f32;
            let rows = i * dim..(i + 1) * dim;
            if account.day >= self.last {
                batch.terminated[i] = true;
                self.observe(account, &mut batch.final_observations[rows.clone()]);
                *account = self.fresh_account();
            }
            self.observe(account, &mut batch.observations[rows]);
        }
        self.accounts = accounts;
        batch
    }

    fn save_state(&self) -> anyhow::Result<serde_json::Value> {
        Ok(serde_json::to_value(&self.accounts)?)
    }

    fn load_state(&mut self, state: &serde_json::Value) -> anyhow::Result<()> {
        let accounts: Vec<Account> = serde_json::from_value(state.clone())?;
        anyhow::ensure!(
            accounts.len() == self.accounts.len(),
            "{} envs saved, {} here",
            accounts.len(),
            self.accounts.len()
        );
        self.accounts = accounts;
        Ok(())
    }
}

/// StockTrading-v0 with `overrides` over the defaults; None for another id.
pub fn make_configured(
    id: &str,
    num_envs: usize,
    overrides: &serde_json::Value,
) -> Option<Result<Box<dyn VecEnv>, ConfigError>> {
    if id != ID {
        return None;
    }
    let mut merged = serde_json::to_value(StockTradingConfig::default()).expect("config");
    if let (Some(fields), Some(base)) = (overrides.as_object(), merged.as_object_mut()) {
        for (k, v) in fields {
            base.insert(k.clone(), v.clone());
        }
    }
    Some(
        serde_json::from_value::<StockTradingConfig>(merged)
            .map_err(|e| ConfigError { field: "env_config", message: e.to_string(), too_large: false })
            .and_then(|config| {
                config.validate()?;
                Ok(Box::new(StockTradingVecEnv::new(config, num_envs)) as Box<dyn VecEnv>)
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(split: &str) -> StockTradingVecEnv {
        let config =
            StockTradingConfig { stocks: 3, train_days: 40, test_days: 20, split: split.into(), ..Default::default() };
        StockTradingVecEnv::new(config, 2)
    }

    #[test]
    fn sales_come_first_and_purchases_are_capped_by_cash() {
        let mut e = env("train");
        e.reset(0);
        let closes = e.prices.closes[e.first].clone();
        let mut account = Account { cash: closes[0] * 10.0, holdings: vec![0.0, 5.0, 0.0], day: e.first };
        // Sell all 5 of stock 1 (asks 100), buy stock 0 (asks 100, the cash buys 10 less costs).
        e.trade(&mut account, &[1.0, -1.0, 0.0]);
        assert_eq!(account.holdings[1], 0.0);
        let cash = closes[0] * 10.0 + closes[1] * 5.0 * 0.999;
        let bought = (cash / (closes[0] * 1.001)).floor().min(100.0);
        assert_eq!(account.holdings[0], bought);
        assert!((account.cash - (cash - bought * closes[0] * 1.001)).abs() < 1e-6);
    }

    #[test]
    fn reward_is_the_scaled_change_of_assets_and_the_split_ends_terminated() {
        let mut e = env("test");
        e.reset(0);
        let mut steps = 0;
        let mut total = 0.0;
        loop {
            let s = e.step(&[0.5, 0.5, 0.5, 0.0, 0.0, 0.0]);
            steps += 1;
            total += f64::from(s.rewards[0]);
            if s.terminated[0] {
                assert!(!s.truncated[0]);
                break;
            }
        }
        assert_eq!(steps, 19, "20 test days: 19 steps from the first close to the last");
        // Buy-and-hold of 50 shares a day on a rising or falling market: the return is the
        // assets' change, which the reward scaling recovers.
        assert!(total.abs() > 0.0);
        assert_eq!(e.closes().len(), 20);
    }
}
