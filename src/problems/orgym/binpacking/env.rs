//! BinPacking-v0..v5 as or-gymnasium's `binpacking.py` (Balaji et al. 2019, "ORL: Reinforcement
//! learning benchmarks for online stochastic optimization problems"): items arrive one at a time,
//! drawn from a discrete size distribution; action 0 opens a new bin with the item, action h puts
//! it into a bin filled to level h. Reward: opening a bin costs its free space (-(capacity -
//! size)), filling one earns the size, so an episode's return is minus its waste (the free space
//! of every bin opened). An overflowing action or one naming a level no bin has ends the episode
//! with -100 minus the previous step's waste term, as the reference does.
//!
//! Observations: or-gymnasium's default (`mask` false) is the state alone, bin counts per level
//! 0..capacity-1 then the item's size; or-gym's `mask: true` is the `Dict` flattened (the
//! action mask, `avail_actions`, the state). The reference's mask holds the bins' counts (its
//! uint8 ones times the uint32 counts), not 0/1, with level 0 (a new bin) always 1; ours too.

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ObservationLayout};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The reference's penalty for an impossible action.
pub const BIG_NEG_REWARD: f32 = -100.0;
/// The largest bin capacity an env takes (observations are 3 x capacity + 1 wide).
pub const MAX_CAPACITY: u32 = 1_000;
/// The most items one episode shows.
pub const MAX_STEPS: usize = 100_000;

/// The six registered envs.
pub const IDS: [&str; 6] =
    ["BinPacking-v0", "BinPacking-v1", "BinPacking-v2", "BinPacking-v3", "BinPacking-v4", "BinPacking-v5"];

/// The env's parameters; `BinPackingConfig::by_id` gives the reference's for each id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BinPackingConfig {
    /// A bin's capacity (v0, v2, v4: 9; v1, v3, v5: 100).
    pub bin_capacity: u32,
    /// The sizes an item can have, each 1..capacity-1.
    pub item_sizes: Vec<u32>,
    /// The probability of each size (they sum to 1).
    pub item_probs: Vec<f64>,
    /// Items per episode (100; 1000 for the large envs).
    pub step_limit: usize,
    /// Observe the action mask (or-gym's `mask: true`); false is or-gymnasium's plain state.
    pub mask: bool,
    /// Items shown in this order instead of drawn (the episode is as long as the list).
    pub sequence: Option<Vec<u32>>,
}

impl Default for BinPackingConfig {
    fn default() -> Self {
        BinPackingConfig::by_id("BinPacking-v0").expect("v0")
    }
}

impl crate::problems::orgym::env::OrGymConfig for BinPackingConfig {
    fn observation_dim(&self) -> usize {
        BinPackingConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Discrete { n: self.action_count() }
    }

    fn layout(&self) -> ObservationLayout {
        self.layout_of()
    }
}

impl BinPackingConfig {
    /// The reference's parameters for an id, masked (the policies need the mask; `mask: false`
    /// gives or-gymnasium's default observation exactly).
    pub fn by_id(id: &str) -> Option<Self> {
        let small = |probs: [f64; 2]| BinPackingConfig {
            bin_capacity: 9,
            item_sizes: vec![2, 3],
            item_probs: probs.to_vec(),
            step_limit: 100,
            mask: true,
            sequence: None,
        };
        let large = |probs: [f64; 9]| BinPackingConfig {
            bin_capacity: 100,
            item_sizes: (1..=9).collect(),
            item_probs: probs.to_vec(),
            step_limit: 1000,
            mask: true,
            sequence: None,
        };
        Some(match id {
            "BinPacking-v0" => small([0.8, 0.2]),
            "BinPacking-v1" => large([0.14, 0.1, 0.06, 0.13, 0.11, 0.13, 0.03, 0.11, 0.19]),
            "BinPacking-v2" => small([0.75, 0.25]),
            "BinPacking-v3" => large([0.06, 0.11, 0.11, 0.22, 0.0, 0.11, 0.06, 0.0, 0.33]),
            "BinPacking-v4" => small([0.5, 0.5]),
            "BinPacking-v5" => large([0.0, 0.0, 0.0, 1.0 / 3.0, 0.0, 0.0, 0.0, 0.0, 2.0 / 3.0]),
            _ => return None,
        })
    }

    /// The first field out of range, and why.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        if self.bin_capacity < 2 {
            return invalid("bin_capacity", format!("must be at least 2, got {}", self.bin_capacity));
        }
        if self.bin_capacity > MAX_CAPACITY {
            let message = format!("at most {MAX_CAPACITY}, got {}", self.bin_capacity);
            return Err(ConfigError { field: "bin_capacity", message, too_large: true });
        }
        if self.steps() == 0 || self.steps() > MAX_STEPS {
            let field = if self.sequence.is_some() { "sequence" } else { "step_limit" };
            let message = format!("items per episode must be 1..={MAX_STEPS}, got {}", self.steps());
            return Err(ConfigError { field, message, too_large: self.steps() > MAX_STEPS });
        }
        let fits = |s: u32| (1..self.bin_capacity).contains(&s);
        if let Some(i) = self.item_sizes.iter().position(|&s| !fits(s)) {
            return invalid(
                "item_sizes",
                format!("size {} (entry {i}) is not in 1..{}", self.item_sizes[i], self.bin_capacity),
            );
        }
        if let Some(sequence) = &self.sequence {
            if let Some(i) = sequence.iter().position(|&s| !fits(s)) {
                return invalid(
                    "sequence",
                    format!("item {i} has size {}, not in 1..{}", sequence[i], self.bin_capacity),
                );
            }
            return Ok(());
        }
        if self.item_sizes.is_empty() || self.item_probs.len() != self.item_sizes.len() {
            let message = format!("{} probabilities for {} sizes", self.item_probs.len(), self.item_sizes.len());
            return invalid("item_probs", message);
        }
        if self.item_probs.iter().any(|p| !p.is_finite() || *p < 0.0) {
            return invalid("item_probs", "every probability must be finite and at least 0".into());
        }
        let total: f64 = self.item_probs.iter().sum();
        if (total - 1.0).abs() > 1e-6 {
            return invalid("item_probs", format!("must sum to 1, got {total}"));
        }
        Ok(())
    }

    /// Items per episode.
    pub fn steps(&self) -> usize {
        self.sequence.as_ref().map_or(self.step_limit, Vec::len)
    }

    pub fn observation_dim(&self) -> usize {
        let state = self.bin_capacity as usize + 1;
        if self.mask {
            2 * self.bin_capacity as usize + state
        } else {
            state
        }
    }

    pub fn action_count(&self) -> usize {
        self.bin_capacity as usize
    }

    fn layout_of(&self) -> ObservationLayout {
        let cap = self.bin_capacity as usize;
        // Counts in tens of bins, the item in tenths of a bin (fixed units, so a policy reads a
        // changed size mix as it reads the one it trained on).
        let counts = std::iter::repeat_n(10.0f32, cap);
        let state: Vec<f32> = counts.clone().chain([self.bin_capacity as f32 / 10.0]).collect();
        if self.mask {
            let scale = counts.clone().chain(std::iter::repeat_n(1.0, cap)).chain(state).collect();
            ObservationLayout { action_mask: Some(0), scale, items: None }
        } else {
            ObservationLayout { action_mask: None, scale: state, items: None }
        }
    }

    /// An item size drawn from the distribution (or the sequence's item `t`).
    fn draw(&self, t: usize, rng: &mut ChaCha8Rng) -> u32 {
        if let Some(sequence) = &self.sequence {
            return sequence.get(t).copied().unwrap_or(sequence[0]);
        }
        let mut u: f64 = rng.gen();
        for (&size, &p) in self.item_sizes.iter().zip(&self.item_probs) {
            if u < p {
                return size;
            }
            u -= p;
        }
        // Rounding left u above the last probability: the last size with any.
        let last = self.item_probs.iter().rposition(|&p| p > 0.0).unwrap_or(0);
        self.item_sizes[last]
    }
}

/// One episode in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BinState {
    /// Open bins per fill level 0..capacity-1 (full bins leave).
    pub levels: Vec<u32>,
    pub full_bins: u32,
    /// The item to place.
    pub item: u32,
    /// The waste term of the last step (the reference's `self.waste`).
    waste: i64,
    pub steps: usize,
    /// Total size placed and bins opened, for the episode's waste.
    pub placed: u64,
    pub bins: u64,
}

impl BinState {
    fn new(config: &BinPackingConfig, rng: &mut ChaCha8Rng) -> Self {
        let levels = vec![0; config.bin_capacity as usize];
        let item = config.draw(0, rng);
        BinState { levels, full_bins: 0, item, waste: 0, steps: 0, placed: 0, bins: 0 }
    }

    /// Free space left in the bins opened so far.
    pub fn waste(&self, capacity: u32) -> u64 {
        self.bins * u64::from(capacity) - self.placed
    }

    /// Whether action `h` places the item (the mask's rule).
    pub fn allowed(&self, capacity: u32, h: usize) -> bool {
        h + self.item as usize <= capacity as usize && (h == 0 || self.levels[h] > 0)
    }

    /// (reward, terminated, truncated).
    fn apply(&mut self, config: &BinPackingConfig, action: usize, rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        let (cap, size) = (config.bin_capacity as usize, self.item as usize);
        let h = action.min(cap - 1);
        let (reward, terminated) = if h > cap - size || (h > 0 && self.levels[h] == 0) {
            (BIG_NEG_REWARD - self.waste as f32, true)
        } else {
            if h == 0 {
                self.levels[size] += 1;
                self.waste = (cap - size) as i64;
                self.bins += 1;
            } else {
                if h + size == cap {
                    self.full_bins += 1;
                } else {
                    self.levels[h + size] += 1;
                }
                self.levels[h] -= 1;
                self.waste = -(size as i64);
            }
            self.placed += size as u64;
            (-self.waste as f32, false)
        };
        self.steps += 1;
        self.item = config.draw(self.steps, rng);
        (reward, terminated, self.steps >= config.steps())
    }

    fn fill(&self, config: &BinPackingConfig, out: &mut [f32]) {
        let cap = config.bin_capacity as usize;
        let state = if config.mask {
            let (mask, rest) = out.split_at_mut(cap);
            for (h, m) in mask.iter_mut().enumerate() {
                *m = if h + self.item as usize > cap { 0.0 } else { self.levels[h] as f32 };
            }
            mask[0] = 1.0;
            rest[..cap].fill(1.0);
            &mut rest[cap..]
        } else {
            out
        };
        state.iter_mut().zip(&self.levels).for_each(|(s, &l)| *s = l as f32);
        state[cap] = self.item as f32;
    }
}

/// A batch of bin-packing envs.
pub type BinPackingVecEnv = crate::problems::orgym::env::OrGymVecEnv<BinState>;

impl crate::problems::orgym::env::OrGymEpisode for BinState {
    type Config = BinPackingConfig;

    fn start(config: &BinPackingConfig, rng: &mut ChaCha8Rng) -> Self {
        BinState::new(config, rng)
    }

    fn step(&mut self, config: &BinPackingConfig, action: &[f32], rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        self.apply(config, action[0].max(0.0) as usize, rng)
    }

    fn observe(&self, config: &BinPackingConfig, out: &mut [f32]) {
        self.fill(config, out)
    }
}

impl BinPackingVecEnv {
    pub fn by_id(id: &str, num_envs: usize) -> Option<Self> {
        BinPackingConfig::by_id(id).map(|config| BinPackingVecEnv::new(config, num_envs))
    }

    /// Shows an item of `size` in env i (fixture replay presents the reference's draw).
    pub fn show(&mut self, i: usize, size: u32) {
        self.episode_mut(i).item = size;
    }
}
