//! Newsvendor-v0 as or-gymnasium's `newsvendor.py` (Balaji et al. 2019): a multi-period
//! newsvendor with lead time. Each episode draws a price p, a cost c, a holding cost h, a
//! lost-sales penalty k and a mean demand mu; each step orders a quantity that arrives
//! `lead_time` steps later, meets a Poisson(mu) demand from what arrives now, and the rest
//! expires. Reward: sales - purchase - holding - lost-sales penalty, where the reference's
//! purchase term is excess x c x (this step's order) x gamma^L (as or-gym writes it: the units
//! left over now times the order placed now). Observation: (p, c, h, k, mu, the orders in the
//! pipeline, oldest first); 40 steps, truncated.
//!
//! Where we differ: or-gymnasium draws p, c, h, k, mu with its generator at reset; ours draw
//! them the same way from the episode's stream, or take them from the config (`instance`).

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ObservationLayout};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson};
use serde::{Deserialize, Serialize};

/// The longest lead time an env takes (observations are 5 + lead time wide).
pub const MAX_LEAD_TIME: usize = 100;
/// The most steps one episode takes.
pub const MAX_STEPS: usize = 100_000;
/// The largest mean demand (a Poisson draw's cost grows with it).
pub const MAX_MEAN_DEMAND: f64 = 1e6;

/// One episode's economics (drawn per episode, or given).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Economics {
    pub price: f64,
    pub cost: f64,
    pub holding_cost: f64,
    pub lost_sales_penalty: f64,
    pub mean_demand: f64,
}

/// The env's parameters; the defaults are or-gym's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewsvendorConfig {
    /// Steps an order takes to arrive (5).
    pub lead_time: usize,
    /// Orders are clipped so the pipeline holds at most this (4000).
    pub max_inventory: f64,
    /// The action space's upper bound (2000).
    pub max_order_quantity: f64,
    pub step_limit: usize,
    /// Drawn prices are uniform on [0, p_max) (floored at 1), costs on [0, price) (floored at 1).
    pub p_max: f64,
    /// Holding costs uniform on [0, min(cost, h_max)).
    pub h_max: f64,
    /// Lost-sales penalties uniform on [0, k_max).
    pub k_max: f64,
    /// Mean demands uniform on [0, mu_max).
    pub mu_max: f64,
    /// The discount in the purchase term (1).
    pub gamma: f64,
    /// Fixed economics for every episode; None: drawn per episode.
    pub instance: Option<Economics>,
}

impl Default for NewsvendorConfig {
    fn default() -> Self {
        NewsvendorConfig {
            lead_time: 5,
            max_inventory: 4000.0,
            max_order_quantity: 2000.0,
            step_limit: 40,
            p_max: 100.0,
            h_max: 5.0,
            k_max: 10.0,
            mu_max: 200.0,
            gamma: 1.0,
            instance: None,
        }
    }
}

impl crate::problems::orgym::env::OrGymConfig for NewsvendorConfig {
    fn observation_dim(&self) -> usize {
        NewsvendorConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Continuous { low: vec![0.0], high: vec![self.max_order_quantity as f32] }
    }

    fn layout(&self) -> ObservationLayout {
        self.layout_of()
    }
}

impl NewsvendorConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        let too_large = |field, message: String| Err(ConfigError { field, message, too_large: true });
        if self.lead_time > MAX_LEAD_TIME {
            return too_large("lead_time", format!("at most {MAX_LEAD_TIME}, got {}", self.lead_time));
        }
        if self.step_limit == 0 || self.step_limit > MAX_STEPS {
            let message = format!("must be 1..={MAX_STEPS}, got {}", self.step_limit);
            return if self.step_limit > MAX_STEPS {
                too_large("step_limit", message)
            } else {
                invalid("step_limit", message)
            };
        }
        let numbers = [
            ("max_inventory", self.max_inventory),
            ("max_order_quantity", self.max_order_quantity),
            ("p_max", self.p_max),
            ("h_max", self.h_max),
            ("k_max", self.k_max),
            ("mu_max", self.mu_max),
            ("gamma", self.gamma),
        ];
        if let Some((field, value)) = numbers.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
            return invalid(field, format!("must be finite and at least 0, got {value}"));
        }
        if self.mu_max > MAX_MEAN_DEMAND {
            return too_large("mu_max", format!("at most {MAX_MEAN_DEMAND}, got {}", self.mu_max));
        }
        let Some(e) = &self.instance else { return Ok(()) };
        let given = [
            ("instance.price", e.price),
            ("instance.cost", e.cost),
            ("instance.holding_cost", e.holding_cost),
            ("instance.lost_sales_penalty", e.lost_sales_penalty),
            ("instance.mean_demand", e.mean_demand),
        ];
        if let Some((field, value)) = given.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
            return invalid(field, format!("must be finite and at least 0, got {value}"));
        }
        if e.mean_demand > MAX_MEAN_DEMAND {
            return too_large("instance.mean_demand", format!("at most {MAX_MEAN_DEMAND}, got {}", e.mean_demand));
        }
        Ok(())
    }

    pub fn observation_dim(&self) -> usize {
        5 + self.lead_time
    }

    /// Economics drawn as the reference draws them at reset.
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> Economics {
        let price = (rng.gen::<f64>() * self.p_max).max(1.0);
        let cost = (rng.gen::<f64>() * price).max(1.0);
        let holding_cost = rng.gen::<f64>() * cost.min(self.h_max);
        let lost_sales_penalty = rng.gen::<f64>() * self.k_max;
        let mean_demand = rng.gen::<f64>() * self.mu_max;
        Economics { price, cost, holding_cost, lost_sales_penalty, mean_demand }
    }

    fn layout_of(&self) -> ObservationLayout {
        // Money in units of p_max, demand and orders in units of mu_max.
        let (money, units) = (self.p_max.max(1.0) as f32, self.mu_max.max(1.0) as f32);
        let scale =
            [money, money, money, money, units].into_iter().chain(std::iter::repeat_n(units, self.lead_time)).collect();
        ObservationLayout { action_mask: None, scale, items: None }
    }
}

/// The outcome of one step, for the references and the solve endpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    pub order: f64,
    pub on_hand: f64,
    pub demand: u64,
    pub reward: f64,
}

/// One episode in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shop {
    pub economics: Economics,
    /// Orders in the pipeline, the one arriving now first (f32 as the reference's state).
    pub pipeline: Vec<f32>,
    pub steps: usize,
    /// A demand to use next instead of a draw (fixture replay).
    forced_demand: Option<u64>,
}

impl Shop {
    fn new(config: &NewsvendorConfig, rng: &mut ChaCha8Rng) -> Self {
        let economics = config.instance.unwrap_or_else(|| config.draw(rng));
        Shop { economics, pipeline: vec![0.0; config.lead_time], steps: 0, forced_demand: None }
    }

    /// The order the env will accept: clipped to [0, max_inventory - pipeline] (the pipeline
    /// summed in f32, as NumPy sums the reference's float32 state).
    pub fn clip(&self, config: &NewsvendorConfig, order: f64) -> f64 {
        let room = config.max_inventory - f64::from(self.pipeline.iter().sum::<f32>());
        order.max(0.0).min(room)
    }

    pub fn step_period(&mut self, config: &NewsvendorConfig, order: f32, rng: &mut ChaCha8Rng) -> Period {
        let e = self.economics;
        let order = self.clip(config, f64::from(order));
        let demand = self
            .forced_demand
            .take()
            .unwrap_or_else(|| Poisson::new(e.mean_demand).map_or(0, |p| p.sample(rng) as u64));
        let on_hand = if config.lead_time == 0 { order } else { f64::from(self.pipeline[0]) };
        let d = demand as f64;
        let sales = on_hand.min(d) * e.price;
        let excess = (on_hand - d).max(0.0);
        let short = (d - on_hand).max(0.0);
        let purchase = excess * e.cost * order * config.gamma.powi(config.lead_time as i32);
        let reward = sales - purchase - excess * e.holding_cost - short * e.lost_sales_penalty;
        if config.lead_time > 0 {
            self.pipeline.rotate_left(1);
            *self.pipeline.last_mut().expect("lead time > 0") = order as f32;
        }
        self.steps += 1;
        Period { order, on_hand, demand, reward }
    }

    pub fn fill(&self, out: &mut [f32]) {
        let e = self.economics;
        out[..5]
            .copy_from_slice(&[e.price, e.cost, e.holding_cost, e.lost_sales_penalty, e.mean_demand].map(|x| x as f32));
        out[5..].copy_from_slice(&self.pipeline);
    }
}

/// A batch of newsvendor envs.
pub type NewsvendorVecEnv = crate::problems::orgym::env::OrGymVecEnv<Shop>;

impl crate::problems::orgym::env::OrGymEpisode for Shop {
    type Config = NewsvendorConfig;

    fn start(config: &NewsvendorConfig, rng: &mut ChaCha8Rng) -> Self {
        Shop::new(config, rng)
    }

    fn step(&mut self, config: &NewsvendorConfig, order: &[f32], rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let period = self.step_period(config, order[0], rng);
        (period.reward as f32, false, self.steps >= config.step_limit)
    }

    fn observe(&self, _config: &NewsvendorConfig, out: &mut [f32]) {
        self.fill(out)
    }
}

impl NewsvendorVecEnv {
    /// Sets env i's economics (fixture replay presents the reference's draw).
    pub fn set_economics(&mut self, i: usize, economics: Economics) {
        self.episode_mut(i).economics = economics;
    }

    /// Env i meets `demand` at its next step instead of a draw (fixture replay).
    pub fn force_demand(&mut self, i: usize, demand: u64) {
        self.episode_mut(i).forced_demand = Some(demand);
    }
}
