//! VehicleRouting-v0 as or-gymnasium's `vehicle_routing.py` (Balaji et al. 2019, the
//! food-delivery VRP): a driver on a 5 x 5 grid serves two restaurants. Each step up to 10
//! order slots may fill (each open slot with odds 0.5; the zone of the delivery point by the
//! zone odds, the restaurant uniform, the value min + 0.5 |N(0, 1)| truncated to the zone's
//! maximum), unaccepted orders time out with odds 0.15, and every order expires 60 steps after
//! it appeared. Actions: 0 wait; 1-10 accept order k (+value/3); 11-20 move one cell toward
//! order k's restaurant and pick it up there (+value/3, within the vehicle's capacity); 21-30
//! move one cell toward order k's delivery point and deliver every loaded order there (the
//! reward *becomes* value/3 of the last one delivered on time, as the reference writes it);
//! 31-32 move toward a restaurant. Each move costs 0.1; an accepted or loaded order that expires
//! costs 50 plus what accepting and picking it up paid (a loaded one also takes a seat of the
//! vehicle for good, as the reference does). 1000 steps, truncated. Observation (68, float32):
//! the restaurants' cells, the driver's cell, the load and the capacity, then per order slot
//! (status, restaurant, delivery x, y, age, value).
//!
//! Kept as the reference has them: new orders are numbered from the lowest open slot upward,
//! so a new order can overwrite an open one (the dictionary keeps the old one's place); a
//! delivered order older than 59 steps still costs 50; the driver's cell is clipped to 0..=5.
//! Where we differ: the reference never restores the capacity expired orders took (it is not
//! reset between episodes); ours starts every episode at the configured capacity. Draws come
//! from the episode's seeded stream.

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ObservationLayout};
use rand::seq::index::sample;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal, WeightedIndex};
use serde::{Deserialize, Serialize};

/// The env's parameters; the defaults are or-gym's (the grid, zones and slots are fixed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VehicleRoutingConfig {
    /// Odds that an open order slot fills each step (0.5).
    pub order_prob: f64,
    /// Orders the vehicle carries at once (4).
    pub vehicle_capacity: u32,
    /// Steps an order lives (60).
    pub order_promise: u32,
    /// Odds that an unaccepted order is withdrawn each step (0.15).
    pub order_timeout_prob: f64,
    /// Odds of each zone for a delivery point ([0.1, 0.5, 0.3, 0.1]).
    pub order_probs_per_zone: [f64; 4],
    pub order_reward_min: [f64; 4],
    pub order_reward_max: [f64; 4],
    pub penalty_per_move: f64,
    pub order_miss_penalty: f64,
    pub step_limit: usize,
}

impl Default for VehicleRoutingConfig {
    fn default() -> Self {
        VehicleRoutingConfig {
            order_prob: 0.5,
            vehicle_capacity: 4,
            order_promise: 60,
            order_timeout_prob: 0.15,
            order_probs_per_zone: [0.1, 0.5, 0.3, 0.1],
            order_reward_min: [8.0, 5.0, 2.0, 1.0],
            order_reward_max: [12.0, 8.0, 5.0, 3.0],
            penalty_per_move: 0.1,
            order_miss_penalty: 50.0,
            step_limit: 1000,
        }
    }
}

/// Order slots, restaurants, grid side and zones (fixed, as in the reference).
pub const MAX_ORDERS: usize = 10;
pub const RESTAURANTS: usize = 2;
const GRID: i64 = 5;
const REWARD_SCALE: f64 = 0.5;
/// The most steps per episode.
pub const MAX_STEPS: usize = 100_000;

impl VehicleRoutingConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        for (field, p) in [("order_prob", self.order_prob), ("order_timeout_prob", self.order_timeout_prob)] {
            if !(0.0..=1.0).contains(&p) {
                return invalid(field, format!("must be in [0, 1], got {p}"));
            }
        }
        if self.order_probs_per_zone.iter().any(|p| !p.is_finite() || *p < 0.0)
            || self.order_probs_per_zone.iter().sum::<f64>() <= 0.0
        {
            return invalid("order_probs_per_zone", "odds must be at least 0 and not all 0".into());
        }
        if self
            .order_reward_min
            .iter()
            .zip(&self.order_reward_max)
            .any(|(lo, hi)| !(lo.is_finite() && hi.is_finite() && lo <= hi))
        {
            return invalid("order_reward_max", "each zone's maximum must be at least its finite minimum".into());
        }
        if !(self.penalty_per_move.is_finite() && self.order_miss_penalty.is_finite()) {
            return invalid("penalty_per_move", "penalties must be finite".into());
        }
        if self.step_limit == 0 || self.step_limit > MAX_STEPS {
            let too_large = self.step_limit > MAX_STEPS;
            return Err(ConfigError { field: "step_limit", message: format!("must be 1..={MAX_STEPS}"), too_large });
        }
        Ok(())
    }

    pub fn observation_dim(&self) -> usize {
        2 * RESTAURANTS + 4 + 6 * MAX_ORDERS
    }

    pub fn action_count(&self) -> usize {
        1 + 3 * MAX_ORDERS + RESTAURANTS
    }
}

impl crate::problems::orgym::env::OrGymConfig for VehicleRoutingConfig {
    fn observation_dim(&self) -> usize {
        VehicleRoutingConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Discrete { n: self.action_count() }
    }

    fn layout(&self) -> ObservationLayout {
        ObservationLayout::default()
    }
}

/// One order (the reference's dictionary entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// 1 open, 2 accepted, 3 in the vehicle, 4 delivered.
    pub status: u8,
    pub restaurant: usize,
    pub delivery: (i64, i64),
    pub time: u32,
    pub value: f64,
}

/// The random part of one update, given instead of drawn (fixture replay).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Draws {
    /// Open orders withdrawn.
    pub timeouts: Vec<usize>,
    /// New orders by slot, in the order they were made.
    pub new_orders: Vec<(usize, Order)>,
}

/// One episode in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dispatch {
    pub restaurants: [(i64, i64); RESTAURANTS],
    pub driver: (i64, i64),
    pub load: i64,
    pub capacity: i64,
    /// The orders by slot in the reference's dictionary order.
    pub orders: Vec<(usize, Order)>,
    pub steps: usize,
    zones: Vec<Vec<(i64, i64)>>,
    forced: Option<Draws>,
}

/// The grid's cells in the reference's order (x major).
fn cells() -> Vec<(i64, i64)> {
    (0..GRID).flat_map(|x| (0..GRID).map(move |y| (x, y))).collect()
}

/// The reference's zones: consecutive runs of 7, 6, 6, 6 cells, less the restaurants' cells.
fn zones(restaurants: &[(i64, i64)]) -> Vec<Vec<(i64, i64)>> {
    let all = cells();
    let sizes = [7, 6, 6, 6];
    let mut start = 0;
    sizes
        .iter()
        .map(|&n| {
            let zone: Vec<_> = all[start..start + n].iter().copied().filter(|c| !restaurants.contains(c)).collect();
            start += n;
            zone
        })
        .collect()
}

impl Dispatch {
    /// An episode with these restaurants and driver, before its first orders.
    pub fn placed(config: &VehicleRoutingConfig, restaurants: [(i64, i64); RESTAURANTS], driver: (i64, i64)) -> Self {
        Dispatch {
            restaurants,
            driver,
            load: 0,
            capacity: i64::from(config.vehicle_capacity),
            orders: Vec::new(),
            steps: 0,
            zones: zones(&restaurants),
            forced: None,
        }
    }

    pub fn order(&self, slot: usize) -> Option<&Order> {
        self.orders.iter().find(|(k, _)| *k == slot).map(|(_, o)| o)
    }

    fn order_mut(&mut self, slot: usize) -> Option<&mut Order> {
        self.orders.iter_mut().find(|(k, _)| *k == slot).map(|(_, o)| o)
    }

    /// The next update's random part is `draws` instead of the stream's.
    pub fn force(&mut self, draws: Draws) {
        self.forced = Some(draws);
    }

    fn go_to(&mut self, to: (i64, i64)) {
        let (dx, dy) = (self.driver.0 - to.0, self.driver.1 - to.1);
        if dx.abs() >= dy.abs() {
            self.driver.0 -= dx.signum();
        } else {
            self.driver.1 -= dy.signum();
        }
        self.driver.0 = self.driver.0.clamp(0, GRID);
        self.driver.1 = self.driver.1.clamp(0, GRID);
    }

    /// (reward, truncated) of one action.
    pub fn act(&mut self, config: &VehicleRoutingConfig, action: usize, rng: &mut ChaCha8Rng) -> (f64, bool) {
        let mut reward = 0.0;
        let k = MAX_ORDERS;
        match action {
            0 => {}
            a if a <= k => {
                if let Some(o) = self.order_mut(a - 1).filter(|o| o.status == 1) {
                    o.status = 2;
                    reward += o.value / 3.0;
                }
            }
            a if a <= 2 * k => {
                if let Some(o) = self.order(a - k - 1).cloned() {
                    let at = self.restaurants[o.restaurant];
                    self.go_to(at);
                    reward -= config.penalty_per_move;
                    if o.status == 2 && self.driver == at && self.load < self.capacity {
                        self.load += 1;
                        let o = self.order_mut(a - k - 1).expect("present");
                        o.status = 3;
                        reward += o.value / 3.0;
                    }
                }
            }
            a if a <= 3 * k => {
                if let Some(o) = self.order(a - 2 * k - 1).cloned() {
                    self.go_to(o.delivery);
                    reward -= config.penalty_per_move;
                    let driver = self.driver;
                    for (_, v) in self.orders.iter_mut() {
                        if v.status == 3 && v.delivery == driver {
                            if v.time <= config.order_promise {
                                reward = v.value / 3.0;
                            }
                            self.load -= 1;
                            v.status = 4;
                        }
                    }
                }
            }
            a => {
                let to = self.restaurants[(a - 3 * k - 1).min(RESTAURANTS - 1)];
                self.go_to(to);
                reward -= config.penalty_per_move;
            }
        }
        reward += self.update_orders(config, rng);
        self.steps += 1;
        (reward, self.steps >= config.step_limit)
    }

    /// Ages, expires, withdraws and makes orders; returns the expiry penalties (negative).
    pub fn update_orders(&mut self, config: &VehicleRoutingConfig, rng: &mut ChaCha8Rng) -> f64 {
        let forced = self.forced.take();
        let mut reward = 0.0;
        for (_, o) in self.orders.iter_mut() {
            o.time += 1;
        }
        let mut kept = Vec::with_capacity(self.orders.len());
        for (slot, o) in std::mem::take(&mut self.orders) {
            let remove = if o.time >= config.order_promise {
                if o.status >= 2 {
                    let paid = o.value * f64::from(u8::from(o.status == 2)) / 3.0
                        + o.value * f64::from(u8::from(o.status == 3)) * 2.0 / 3.0;
                    reward -= config.order_miss_penalty + paid;
                }
                if o.status == 3 {
                    self.capacity -= 1;
                }
                true
            } else if o.status == 4 {
                true
            } else if o.status == 1 {
                match &forced {
                    Some(d) => d.timeouts.contains(&slot),
                    None => rng.gen::<f64>() < config.order_timeout_prob,
                }
            } else {
                false
            };
            if !remove {
                kept.push((slot, o));
            }
        }
        self.orders = kept;
        let made = match forced {
            Some(d) => d.new_orders,
            None => self.draw_orders(config, rng),
        };
        for (slot, order) in made {
            match self.orders.iter_mut().find(|(k, _)| *k == slot) {
                Some(entry) => entry.1 = order,
                None => self.orders.push((slot, order)),
            }
        }
        reward
    }

    /// New orders as the reference makes them: each open slot fills with odds `order_prob`,
    /// numbered from the lowest open slot upward.
    fn draw_orders(&self, config: &VehicleRoutingConfig, rng: &mut ChaCha8Rng) -> Vec<(usize, Order)> {
        let open: Vec<usize> = (0..MAX_ORDERS).filter(|s| self.order(*s).is_none()).collect();
        let Some(&first) = open.first() else { return Vec::new() };
        let zone_odds = WeightedIndex::new(config.order_probs_per_zone).expect("validated");
        let mut next = first;
        let mut made = Vec::new();
        for _ in &open {
            if rng.gen::<f64>() < config.order_prob {
                let zone = zone_odds.sample(rng);
                let cells = &self.zones[zone];
                let delivery = cells[rng.gen_range(0..cells.len())];
                let restaurant = rng.gen_range(0..RESTAURANTS);
                let upper = (config.order_reward_max[zone] - config.order_reward_min[zone]) / REWARD_SCALE;
                let half_normal = loop {
                    let x: f64 = StandardNormal.sample(rng);
                    if x.abs() <= upper {
                        break x.abs();
                    }
                };
                let value = config.order_reward_min[zone] + REWARD_SCALE * half_normal;
                made.push((next, Order { status: 1, restaurant, delivery, time: 0, value }));
                next += 1;
            }
        }
        made
    }

    pub fn fill(&self, out: &mut [f32]) {
        out.fill(0.0);
        for (r, &(x, y)) in self.restaurants.iter().enumerate() {
            out[2 * r] = x as f32;
            out[2 * r + 1] = y as f32;
        }
        let base = 2 * RESTAURANTS;
        out[base] = self.driver.0 as f32;
        out[base + 1] = self.driver.1 as f32;
        out[base + 2] = self.load as f32;
        out[base + 3] = self.capacity as f32;
        for (slot, o) in &self.orders {
            let row = &mut out[base + 4 + 6 * slot..base + 10 + 6 * slot];
            row.copy_from_slice(&[
                f32::from(o.status),
                o.restaurant as f32,
                o.delivery.0 as f32,
                o.delivery.1 as f32,
                o.time as f32,
                o.value as f32,
            ]);
        }
    }
}

/// A batch of vehicle-routing envs.
pub type VehicleRoutingVecEnv = crate::problems::orgym::env::OrGymVecEnv<Dispatch>;

impl crate::problems::orgym::env::OrGymEpisode for Dispatch {
    type Config = VehicleRoutingConfig;

    fn start(config: &VehicleRoutingConfig, rng: &mut ChaCha8Rng) -> Self {
        let all = cells();
        let picked = sample(rng, all.len(), RESTAURANTS);
        let restaurants = [all[picked.index(0)], all[picked.index(1)]];
        let driver = all[rng.gen_range(0..all.len())];
        let mut episode = Dispatch::placed(config, restaurants, driver);
        episode.update_orders(config, rng);
        episode
    }

    fn step(&mut self, config: &VehicleRoutingConfig, action: &[f32], rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let action = (action[0].max(0.0) as usize).min(config.action_count() - 1);
        let (reward, truncated) = self.act(config, action, rng);
        (reward as f32, false, truncated)
    }

    fn observe(&self, _config: &VehicleRoutingConfig, out: &mut [f32]) {
        self.fill(out)
    }
}
