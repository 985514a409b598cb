//! Knapsack-v0 (unbounded), -v1 (0/1), -v2 (bounded) and -v3 (online) as or-gymnasium's
//! `knapsack.py`: an action places an item; an item that does not fit (or has no copy left) ends
//! the episode with reward 0, an exactly full knapsack ends it too, and the online variant shows
//! one item at a time (drawn with probability proportional to its copies) for `step_limit` steps.
//! v0-v2 have no time limit: every step that does not end the episode adds at least one unit of
//! weight. Knapsack-v3's `planning_features` (ours, off by default) appends the fraction of its
//! items still to be shown: the reference's state has no clock, and the best online policy's
//! threshold depends on it.

use crate::drl::env::{ActionSpace, ConfigError, ItemLayout, ObservationLayout};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The most items a knapsack env takes (requests are checked against it before any work).
pub const MAX_ITEMS: usize = 10_000;
/// The largest capacity a knapsack env takes.
pub const MAX_CAPACITY: u32 = 100_000;
/// The most items x capacity an env takes: its reference DP's cells, and a bound on a policy's
/// episode (at most `capacity` steps over `items` items each).
pub const MAX_WORK: u64 = 2_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Knapsack-v0: any number of copies of each item.
    Unbounded,
    /// Knapsack-v1: each item once.
    Binary,
    /// Knapsack-v2: item i at most `limits[i]` times.
    Bounded,
    /// Knapsack-v3: accept (1) or reject (0) the item shown.
    Online,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Unbounded, Variant::Binary, Variant::Bounded, Variant::Online];

    pub fn id(self) -> &'static str {
        match self {
            Variant::Unbounded => "Knapsack-v0",
            Variant::Binary => "Knapsack-v1",
            Variant::Bounded => "Knapsack-v2",
            Variant::Online => "Knapsack-v3",
        }
    }

    pub fn from_id(id: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.id() == id)
    }

    /// Whether items come with a number of copies (drawn 1..=max_item_limit).
    fn has_limits(self) -> bool {
        matches!(self, Variant::Bounded | Variant::Online)
    }
}

/// One instance: item i weighs `weights[i]` and is worth `values[i]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnapsackItems {
    pub weights: Vec<u32>,
    pub values: Vec<u32>,
    /// Copies of each item (bounded; online: the odds of showing it). Unbounded and 0/1
    /// instances have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Vec<u32>>,
}

/// The env's parameters; the defaults are or-gym's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KnapsackConfig {
    pub variant: Variant,
    /// Items N (or-gym: 200).
    pub items: usize,
    /// The knapsack's capacity (`max_weight`, 200).
    pub capacity: u32,
    /// Generated weights are uniform on 1..=this (or-gym: `integers(1, 100)`).
    pub max_item_weight: u32,
    /// Generated values are uniform on 0..=this (99).
    pub max_item_value: u32,
    /// Generated copies are uniform on 1..=this (9; bounded and online).
    pub max_item_limit: u32,
    /// Items shown per online episode (50).
    pub step_limit: usize,
    /// A fixed instance for every episode; None: a fresh one per episode from its seeded stream.
    pub instance: Option<KnapsackItems>,
    /// Knapsack-v3: append the fraction of items still to be shown (module doc); false: the
    /// reference's observation exactly.
    pub planning_features: bool,
}

impl Default for KnapsackConfig {
    fn default() -> Self {
        KnapsackConfig {
            variant: Variant::Binary,
            items: 200,
            capacity: 200,
            max_item_weight: 99,
            max_item_value: 99,
            max_item_limit: 9,
            step_limit: 50,
            instance: None,
            planning_features: false,
        }
    }
}

impl crate::problems::orgym::env::OrGymConfig for KnapsackConfig {
    /// Knapsack-v3's policy reads the clock.
    fn policy_observation(&self) -> Self {
        KnapsackConfig { planning_features: self.variant == Variant::Online, ..self.clone() }
    }

    fn observation_dim(&self) -> usize {
        KnapsackConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Discrete { n: self.action_count() }
    }

    fn layout(&self) -> ObservationLayout {
        self.layout_of()
    }
}

impl KnapsackConfig {
    pub fn new(variant: Variant) -> Self {
        KnapsackConfig { variant, ..KnapsackConfig::default() }
    }

    /// The first field that is out of range, and why.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let too_large = |field, message| Err(ConfigError { field, message, too_large: true });
        if self.items == 0 || self.capacity == 0 {
            let field = if self.items == 0 { "items" } else { "capacity" };
            return Err(ConfigError { field, message: "must be at least 1".into(), too_large: false });
        }
        if self.items > MAX_ITEMS {
            return too_large("items", format!("at most {MAX_ITEMS}, got {}", self.items));
        }
        if self.capacity > MAX_CAPACITY {
            return too_large("capacity", format!("at most {MAX_CAPACITY}, got {}", self.capacity));
        }
        if self.items as u64 * u64::from(self.capacity) > MAX_WORK {
            let message =
                format!("items x capacity must be at most {MAX_WORK}, got {} x {}", self.items, self.capacity);
            return too_large("capacity", message);
        }
        self.check_rest().map_err(|(field, message)| ConfigError { field, message, too_large: false })
    }

    fn check_rest(&self) -> Result<(), (&'static str, String)> {
        if self.max_item_weight == 0 {
            return Err(("max_item_weight", "must be at least 1 (a weightless item never fills the knapsack)".into()));
        }
        if self.variant.has_limits() && self.max_item_limit == 0 {
            return Err(("max_item_limit", "must be at least 1".into()));
        }
        if self.planning_features && self.variant != Variant::Online {
            return Err(("planning_features", "only Knapsack-v3 (online) takes them".into()));
        }
        if self.variant == Variant::Online && (self.step_limit == 0 || self.step_limit > MAX_ITEMS) {
            return Err(("step_limit", format!("must be 1..={MAX_ITEMS}, got {}", self.step_limit)));
        }
        let Some(instance) = &self.instance else { return Ok(()) };
        if instance.weights.len() != self.items {
            return Err(("instance.weights", format!("{} weights for {} items", instance.weights.len(), self.items)));
        }
        if instance.values.len() != self.items {
            return Err(("instance.values", format!("{} values for {} items", instance.values.len(), self.items)));
        }
        if let Some(i) = instance.weights.iter().position(|&w| w == 0) {
            return Err(("instance.weights", format!("item {i} weighs 0; weights must be at least 1")));
        }
        match (&instance.limits, self.variant.has_limits()) {
            (None, true) => Err(("instance.limits", "this variant needs every item's copies".into())),
            (Some(_), false) => Err(("instance.limits", "only the bounded and online variants take limits".into())),
            (Some(limits), true) if limits.len() != self.items => {
                Err(("instance.limits", format!("{} limits for {} items", limits.len(), self.items)))
            }
            (Some(limits), true) if self.variant == Variant::Online && limits.iter().all(|&l| l == 0) => Err((
                "instance.limits",
                "the online variant shows items in proportion to their copies; all are 0".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Columns of one observation row.
    pub fn observation_dim(&self) -> usize {
        let n = self.items;
        match self.variant {
            Variant::Unbounded => 4 * n + 1,
            Variant::Binary | Variant::Bounded => 5 * n + 3,
            Variant::Online => 8 + usize::from(self.planning_features),
        }
    }

    pub fn action_count(&self) -> usize {
        if self.variant == Variant::Online {
            2
        } else {
            self.items
        }
    }

    /// The unit values are measured in: the instance's largest value, or the generator's.
    fn value_unit(&self) -> f32 {
        let largest =
            self.instance.as_ref().map_or(self.max_item_value, |i| i.values.iter().copied().max().unwrap_or(1));
        largest.max(1) as f32
    }

    /// An instance drawn as or-gym draws one (weights, values, copies uniform on their ranges).
    pub fn generate(&self, rng: &mut impl Rng) -> KnapsackItems {
        let n = self.items;
        let weights = (0..n).map(|_| rng.gen_range(1..=self.max_item_weight)).collect();
        let values = (0..n).map(|_| rng.gen_range(0..=self.max_item_value)).collect();
        let limits =
            self.variant.has_limits().then(|| (0..n).map(|_| rng.gen_range(1..=self.max_item_limit)).collect());
        KnapsackItems { weights, values, limits }
    }

    fn layout_of(&self) -> ObservationLayout {
        let n = self.items;
        let (cap, value, limit) = (self.capacity as f32, self.value_unit(), self.max_item_limit.max(1) as f32);
        let ones = |k: usize| std::iter::repeat_n(1.0f32, k);
        let block = |unit: f32| std::iter::repeat_n(unit, n);
        match self.variant {
            Variant::Unbounded => ObservationLayout {
                action_mask: Some(0),
                scale: ones(2 * n).chain(block(cap)).chain(block(value)).chain([cap]).collect(),
                items: Some(ItemLayout { count: n, features: vec![2 * n, 3 * n], globals: vec![4 * n] }),
            },
            Variant::Binary | Variant::Bounded => {
                let base = 2 * n;
                let copies = if self.variant == Variant::Bounded { limit } else { 1.0 };
                ObservationLayout {
                    action_mask: Some(0),
                    scale: ones(base)
                        .chain(block(cap))
                        .chain([cap])
                        .chain(block(value))
                        .chain([cap])
                        .chain(block(copies))
                        .chain([1.0])
                        .collect(),
                    items: Some(ItemLayout {
                        count: n,
                        features: vec![base, base + n + 1, base + 2 * n + 2],
                        globals: vec![base + n, base + 2 * n + 1],
                    }),
                }
            }
            Variant::Online => ObservationLayout {
                action_mask: Some(0),
                scale: [1.0, 1.0, 1.0, 1.0, cap, n as f32, cap, value]
                    .into_iter()
                    .chain(self.planning_features.then_some(1.0))
                    .collect(),
                items: None,
            },
        }
    }
}

/// One episode in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Episode {
    items: KnapsackItems,
    /// Copies left (0/1 and bounded).
    left: Vec<u32>,
    load: u32,
    /// The item shown (online).
    shown: usize,
    steps: usize,
}

impl Episode {
    fn new(config: &KnapsackConfig, rng: &mut ChaCha8Rng) -> Self {
        let items = config.instance.clone().unwrap_or_else(|| config.generate(rng));
        let left = match (&items.limits, config.variant) {
            (Some(limits), Variant::Bounded) => limits.clone(),
            (_, Variant::Binary) => vec![1; config.items],
            _ => Vec::new(),
        };
        let mut episode = Episode { items, left, load: 0, shown: 0, steps: 0 };
        if config.variant == Variant::Online {
            episode.shown = episode.draw(rng);
        }
        episode
    }

    /// An item with probability proportional to its copies (or-gym's `item_probs`).
    fn draw(&self, rng: &mut ChaCha8Rng) -> usize {
        let limits = self.items.limits.as_deref().unwrap_or(&[]);
        let total: u64 = limits.iter().map(|&l| u64::from(l)).sum();
        let mut ticket = rng.gen_range(0..total.max(1));
        for (i, &l) in limits.iter().enumerate() {
            if ticket < u64::from(l) {
                return i;
            }
            ticket -= u64::from(l);
        }
        0
    }

    fn fits(&self, capacity: u32, item: usize) -> bool {
        self.load + self.items.weights[item] <= capacity
    }

    /// Places `item`; (reward, terminated).
    fn place(&mut self, capacity: u32, item: usize) -> (f32, bool) {
        self.load += self.items.weights[item];
        (self.items.values[item] as f32, self.load == capacity)
    }

    /// (reward, terminated, truncated) of one action.
    fn apply(&mut self, config: &KnapsackConfig, action: usize, rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let capacity = config.capacity;
        match config.variant {
            Variant::Unbounded => {
                let item = action.min(config.items - 1);
                if self.fits(capacity, item) {
                    let (reward, full) = self.place(capacity, item);
                    (reward, full, false)
                } else {
                    (0.0, true, false)
                }
            }
            Variant::Binary | Variant::Bounded => {
                let item = action.min(config.items - 1);
                if self.left[item] > 0 && self.fits(capacity, item) {
                    self.left[item] -= 1;
                    let (reward, full) = self.place(capacity, item);
                    (reward, full, false)
                } else {
                    (0.0, true, false)
                }
            }
            Variant::Online => {
                let (reward, terminated) = match (action != 0, self.fits(capacity, self.shown)) {
                    (true, true) => self.place(capacity, self.shown),
                    (true, false) => (0.0, true),
                    (false, _) => (0.0, false),
                };
                self.shown = self.draw(rng);
                self.steps += 1;
                (reward, terminated, self.steps >= config.step_limit)
            }
        }
    }

    fn fill(&self, config: &KnapsackConfig, out: &mut [f32]) {
        let (n, capacity) = (config.items, config.capacity);
        let weights = &self.items.weights;
        if config.variant == Variant::Online {
            let w = weights[self.shown];
            let fits = self.load + w <= capacity;
            let state = [self.load as f32, self.shown as f32, w as f32, self.items.values[self.shown] as f32];
            out[..4].copy_from_slice(&[1.0, f32::from(u8::from(fits)), 1.0, 1.0]);
            out[4..8].copy_from_slice(&state);
            if config.planning_features {
                out[8] = config.step_limit.saturating_sub(self.steps) as f32 / config.step_limit as f32;
            }
            return;
        }
        let (mask, rest) = out.split_at_mut(n);
        for (i, m) in mask.iter_mut().enumerate() {
            let available = config.variant == Variant::Unbounded || self.left[i] > 0;
            *m = f32::from(u8::from(available && self.load + weights[i] <= capacity));
        }
        let (avail, state) = rest.split_at_mut(n);
        avail.fill(1.0);
        let as_f32 = |dst: &mut [f32], src: &[u32]| dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s as f32);
        as_f32(&mut state[..n], weights);
        if config.variant == Variant::Unbounded {
            as_f32(&mut state[n..2 * n], &self.items.values);
            state[2 * n] = self.load as f32;
        } else {
            state[n] = capacity as f32;
            as_f32(&mut state[n + 1..2 * n + 1], &self.items.values);
            state[2 * n + 1] = self.load as f32;
            as_f32(&mut state[2 * n + 2..3 * n + 2], &self.left);
            state[3 * n + 2] = 0.0;
        }
    }
}

/// A batch of knapsack envs sharing one config; env i draws from the stream (seed, i).
pub type KnapsackVecEnv = crate::problems::orgym::env::OrGymVecEnv<Episode>;

impl crate::problems::orgym::env::OrGymEpisode for Episode {
    type Config = KnapsackConfig;

    fn start(config: &KnapsackConfig, rng: &mut ChaCha8Rng) -> Self {
        Episode::new(config, rng)
    }

    fn step(&mut self, config: &KnapsackConfig, action: &[f32], rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        self.apply(config, action[0].max(0.0) as usize, rng)
    }

    fn observe(&self, config: &KnapsackConfig, out: &mut [f32]) {
        self.fill(config, out)
    }
}

impl KnapsackVecEnv {
    /// The default env of a registered id (a fresh or-gym-distributed instance every episode).
    pub fn by_id(id: &str, num_envs: usize) -> Option<Self> {
        Variant::from_id(id).map(|v| KnapsackVecEnv::new(KnapsackConfig::new(v), num_envs))
    }

    /// Env i's current instance.
    pub fn instance(&self, i: usize) -> &KnapsackItems {
        &self.episode(i).items
    }

    /// The items online env i shows in its episode from now on if it runs to its limit (the
    /// draws do not depend on the actions; for the offline optimum).
    pub fn shown_sequence(&self, i: usize) -> Vec<usize> {
        let episode = self.episode(i);
        let mut rng = self.stream(i).clone();
        let mut shown = vec![episode.shown];
        for _ in episode.steps + 1..self.config().step_limit {
            shown.push(episode.draw(&mut rng));
        }
        shown
    }

    /// Shows item `item` in online env i (fixture replay presents the reference's draw).
    pub fn show(&mut self, i: usize, item: usize) {
        self.episode_mut(i).shown = item;
    }
}
