//! InvManagement-v0 (backlog) and -v1 (lost sales) as or-gymnasium's
//! `inventory_management.py` (Hubbs et al. 2020; Perez et al. 2021): a serial supply chain of a
//! retailer (stage 0), two distributors and a factory (stage 3, unlimited raw material). Each
//! period every stage but the factory orders from its supplier (capped by the supplier's
//! capacity and on-hand stock), shipments placed L_i periods ago arrive, Poisson demand meets
//! the retailer's stock, and what is not met is backlogged (v0; unmet replenishment orders too)
//! or lost (v1), each at a per-unit penalty. Reward: the period's discounted profit,
//! alpha^n sum_i (p_i S_i - r_i R_i - k_i U_i - h_i I_i). 30 periods, truncated.
//!
//! Observation (as the reference builds it): on-hand stock of stages 0-2 at the start of the
//! period, then the last max(L) periods' orders (oldest first, zeros before the first period).
//!
//! `planning_features` (ours, off by default) appends what the reference's state leaves out or
//! spreads over its order log: the fraction of periods left, last period's backlog of every
//! stage and the factory, and each stage's shipped-but-not-arrived stock. The dynamics do not
//! change.
//!
//! Where we differ: the reference's `base_stock_action` cannot run (its inventory position is
//! written to `self.state` and the method returns None); ours is in `reference.rs`.

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ObservationLayout};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson};
use serde::{Deserialize, Serialize};

/// The most stages an env takes (observations grow with stages x lead time).
pub const MAX_STAGES: usize = 10;
/// The longest lead time.
pub const MAX_LEAD_TIME: usize = 100;
/// The most periods per episode.
pub const MAX_PERIODS: usize = 1_000;

/// The registered ids and whether each backlogs.
pub const IDS: [(&str, bool); 2] = [("InvManagement-v0", true), ("InvManagement-v1", false)];

/// The env's parameters; the defaults are or-gym's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InventoryConfig {
    /// Periods per episode (30).
    pub periods: usize,
    /// Initial on-hand stock of stages 0..M-1 ([100, 100, 200]).
    pub initial_inventory: Vec<u32>,
    /// The retailer's unit price (2).
    pub price: f64,
    /// Unit replenishment cost of each stage, the factory's last ([1.5, 1.0, 0.75, 0.5]).
    pub unit_cost: Vec<f64>,
    /// Unit penalty for unmet demand or orders at each stage ([0.1, 0.075, 0.05, 0.025]).
    pub penalty: Vec<f64>,
    /// Unit holding cost at stages 0..M-1 ([0.15, 0.1, 0.05]).
    pub holding_cost: Vec<f64>,
    /// Supply capacity of stages 1..M ([100, 90, 80]).
    pub capacity: Vec<u32>,
    /// Lead time of the shipments into stages 0..M-1 ([3, 5, 10]).
    pub lead_time: Vec<usize>,
    /// Unmet demand and orders are backlogged (v0) or lost (v1).
    pub backlog: bool,
    /// Mean of the Poisson demand (20).
    pub mean_demand: f64,
    /// The discount alpha (0.97).
    pub discount: f64,
    /// Demand for every period instead of draws (or-gym's dist 5).
    pub demand: Option<Vec<u32>>,
    /// Append the periods left, the backlogs and the pipelines (module doc); false: the
    /// reference's observation exactly.
    pub planning_features: bool,
}

impl Default for InventoryConfig {
    fn default() -> Self {
        InventoryConfig {
            periods: 30,
            initial_inventory: vec![100, 100, 200],
            price: 2.0,
            unit_cost: vec![1.5, 1.0, 0.75, 0.5],
            penalty: vec![0.10, 0.075, 0.05, 0.025],
            holding_cost: vec![0.15, 0.10, 0.05],
            capacity: vec![100, 90, 80],
            lead_time: vec![3, 5, 10],
            backlog: true,
            mean_demand: 20.0,
            discount: 0.97,
            demand: None,
            planning_features: false,
        }
    }
}

impl InventoryConfig {
    pub fn by_id(id: &str) -> Option<Self> {
        IDS.iter().find(|(i, _)| *i == id).map(|&(_, backlog)| InventoryConfig { backlog, ..Default::default() })
    }

    /// Stages that hold stock and order (all but the factory).
    pub fn stages(&self) -> usize {
        self.initial_inventory.len()
    }

    fn longest_lead(&self) -> usize {
        self.lead_time.iter().copied().max().unwrap_or(0)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        let too_large = |field, message: String| Err(ConfigError { field, message, too_large: true });
        let m = self.stages();
        if m == 0 {
            return invalid("initial_inventory", "needs at least one stage".into());
        }
        if m > MAX_STAGES {
            return too_large("initial_inventory", format!("at most {MAX_STAGES} stages, got {m}"));
        }
        if self.periods == 0 || self.periods > MAX_PERIODS {
            let message = format!("must be 1..={MAX_PERIODS}, got {}", self.periods);
            return if self.periods > MAX_PERIODS {
                too_large("periods", message)
            } else {
                invalid("periods", message)
            };
        }
        let lengths = [
            ("unit_cost", self.unit_cost.len(), m + 1),
            ("penalty", self.penalty.len(), m + 1),
            ("holding_cost", self.holding_cost.len(), m),
            ("capacity", self.capacity.len(), m),
            ("lead_time", self.lead_time.len(), m),
        ];
        if let Some((field, got, want)) = lengths.iter().find(|(_, got, want)| got != want) {
            return invalid(field, format!("{got} entries for {m} stages; needs {want}"));
        }
        if let Some(l) = self.lead_time.iter().find(|&&l| l > MAX_LEAD_TIME) {
            return too_large("lead_time", format!("at most {MAX_LEAD_TIME}, got {l}"));
        }
        if self.capacity.contains(&0) {
            return invalid("capacity", "every capacity must be positive".into());
        }
        let costs = self
            .unit_cost
            .iter()
            .chain(&self.penalty)
            .chain(&self.holding_cost)
            .chain([&self.price, &self.mean_demand]);
        if costs.clone().any(|x| !x.is_finite() || *x < 0.0) {
            return invalid(
                "price",
                "prices, costs, penalties and the mean demand must be finite and at least 0".into(),
            );
        }
        if self.mean_demand > 1e6 {
            return too_large("mean_demand", format!("at most 1e6, got {}", self.mean_demand));
        }
        if !(self.discount > 0.0 && self.discount <= 1.0) {
            return invalid("discount", format!("must be in (0, 1], got {}", self.discount));
        }
        match &self.demand {
            Some(d) if d.len() != self.periods => {
                invalid("demand", format!("{} values for {} periods", d.len(), self.periods))
            }
            _ => Ok(()),
        }
    }

    /// The reference's observation width (on-hand stock, then the order log).
    pub fn reference_dim(&self) -> usize {
        self.stages() * (self.longest_lead() + 1)
    }

    pub fn observation_dim(&self) -> usize {
        self.reference_dim() + if self.planning_features { 2 * self.stages() + 2 } else { 0 }
    }
}

impl crate::problems::orgym::env::OrGymConfig for InventoryConfig {
    fn policy_observation(&self) -> Self {
        InventoryConfig { planning_features: true, ..self.clone() }
    }

    fn observation_dim(&self) -> usize {
        InventoryConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Continuous {
            low: vec![0.0; self.stages()],
            high: self.capacity.iter().map(|&c| c as f32).collect(),
        }
    }

    fn layout(&self) -> ObservationLayout {
        ObservationLayout::default()
    }
}

/// One period's outcome (units sold, unmet, and the profit), for the references and answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodLog {
    /// Orders as placed (before capacity and stock).
    pub requested: Vec<i64>,
    /// Orders shipped.
    pub shipped: Vec<f64>,
    pub demand: u64,
    pub sold: f64,
    pub reward: f64,
}

/// One episode in progress (the reference's I, T, R, B arrays, kept as far as they are read).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chain {
    pub period: usize,
    /// On-hand stock per stage at the start of the period.
    pub on_hand: Vec<f64>,
    /// Shipped but not arrived, per stage.
    pub pipeline: Vec<f64>,
    /// Shipped orders per period (R), for arrivals.
    shipped: Vec<Vec<f64>>,
    /// Orders as placed per period (the observation's action log).
    placed: Vec<Vec<i64>>,
    /// Last period's backlog per stage and the factory (0 in lost-sales mode).
    pub backlog: Vec<f64>,
    forced_demand: Option<u64>,
}

impl Chain {
    fn new(config: &InventoryConfig) -> Self {
        let m = config.stages();
        Chain {
            period: 0,
            on_hand: config.initial_inventory.iter().map(|&x| f64::from(x)).collect(),
            pipeline: vec![0.0; m],
            shipped: Vec::new(),
            placed: Vec::new(),
            backlog: vec![0.0; m + 1],
            forced_demand: None,
        }
    }

    /// What arrives at stage `i` in `period` from shipments already made (0 for one not yet
    /// shipped or before the first period).
    pub fn shipped_arrival(&self, config: &InventoryConfig, i: usize, period: usize) -> f64 {
        period.checked_sub(config.lead_time[i]).and_then(|n| self.shipped.get(n)).map_or(0.0, |r| r[i])
    }

    /// Meets `demand` at the next period instead of a draw (fixture replay).
    pub fn force_demand(&mut self, demand: u64) {
        self.forced_demand = Some(demand);
    }

    pub fn step_period(&mut self, config: &InventoryConfig, action: &[f32], rng: &mut ChaCha8Rng) -> PeriodLog {
        let (m, n) = (config.stages(), self.period);
        // The reference's np.maximum(action, 0).astype(int): truncation toward zero.
        let requested: Vec<i64> = action.iter().map(|&a| f64::from(a).max(0.0) as i64).collect();
        self.placed.push(requested.clone());
        let mut stock = self.on_hand.clone();
        let wanted: Vec<f64> =
            (0..m).map(|i| requested[i] as f64 + if n >= 1 { self.backlog[i + 1] } else { 0.0 }).collect();
        let shipped: Vec<f64> = (0..m)
            .map(|i| {
                let supplier = if i + 1 < m { stock[i + 1] } else { f64::INFINITY };
                wanted[i].min(f64::from(config.capacity[i])).min(supplier)
            })
            .collect();
        self.shipped.push(shipped.clone());
        let mut arrived = vec![0.0; m];
        for i in 0..m {
            if n >= config.lead_time[i] {
                arrived[i] = self.shipped[n - config.lead_time[i]][i];
                stock[i] += arrived[i];
            }
        }
        let drawn = self.forced_demand.take().unwrap_or_else(|| {
            config.demand.as_ref().map_or_else(
                || Poisson::new(config.mean_demand).map_or(0, |p| p.sample(rng) as u64),
                |d| u64::from(d[n]),
            )
        });
        let demand = drawn as f64 + if n >= 1 { self.backlog[0] } else { 0.0 };
        let sold = stock[0].min(demand);
        let sales: Vec<f64> = std::iter::once(sold).chain(shipped.iter().copied()).collect();
        for i in 0..m {
            stock[i] -= sales[i];
            self.pipeline[i] += shipped[i] - arrived[i];
        }
        let unmet: Vec<f64> =
            std::iter::once(demand).chain(wanted.iter().copied()).zip(&sales).map(|(w, s)| w - s).collect();
        self.backlog = if config.backlog { unmet.clone() } else { vec![0.0; m + 1] };
        // p = (price, r_0..r_{M-1}); costs r on shipments and the factory's production; no
        // holding at the factory.
        let mut profit = 0.0;
        for i in 0..=m {
            let unit_price = if i == 0 { config.price } else { config.unit_cost[i - 1] };
            let bought = if i < m { shipped[i] } else { shipped[m - 1] };
            let held = if i < m { stock[i] * config.holding_cost[i] } else { 0.0 };
            profit += unit_price * sales[i] - (config.unit_cost[i] * bought + config.penalty[i] * unmet[i] + held);
        }
        let reward = config.discount.powi(n as i32) * profit;
        self.on_hand = stock;
        self.period += 1;
        PeriodLog { requested, shipped, demand: drawn, sold, reward }
    }

    /// The reference's state: on-hand stock, then the last max(L) periods' orders.
    pub fn fill(&self, config: &InventoryConfig, out: &mut [f32]) {
        let m = config.stages();
        out.fill(0.0);
        for (o, &x) in out.iter_mut().zip(&self.on_hand) {
            *o = x as i32 as f32;
        }
        let (out, features) = out.split_at_mut(config.reference_dim());
        if config.planning_features {
            let left = config.periods.saturating_sub(self.period) as f32 / config.periods as f32;
            let values = std::iter::once(left).chain(self.backlog.iter().chain(&self.pipeline).map(|&x| x as f32));
            for (o, x) in features.iter_mut().zip(values) {
                *o = x;
            }
        }
        let lead = config.longest_lead();
        let recent = &self.placed[self.placed.len().saturating_sub(lead)..];
        let start = out.len() - m * recent.len();
        for (k, order) in recent.iter().enumerate() {
            for (i, &r) in order.iter().enumerate() {
                out[start + k * m + i] += r as i32 as f32;
            }
        }
    }
}

/// A batch of inventory envs.
pub type InventoryVecEnv = crate::problems::orgym::env::OrGymVecEnv<Chain>;

impl crate::problems::orgym::env::OrGymEpisode for Chain {
    type Config = InventoryConfig;

    fn start(config: &InventoryConfig, _rng: &mut ChaCha8Rng) -> Self {
        Chain::new(config)
    }

    fn step(&mut self, config: &InventoryConfig, action: &[f32], rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let log = self.step_period(config, action, rng);
        (log.reward as f32, false, self.period >= config.periods)
    }

    fn observe(&self, config: &InventoryConfig, out: &mut [f32]) {
        self.fill(config, out)
    }
}
