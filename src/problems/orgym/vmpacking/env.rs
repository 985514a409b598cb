//! VMPacking-v0 (permanent) and -v1 (temporary) as or-gymnasium's `vmpacking.py`: 72 virtual
//! machines (one every 20 minutes of a day) arrive, each with a CPU and a memory demand
//! normalized by a physical machine's capacity, and each is sent to one of 50 physical
//! machines. Overloading a machine (a load above 1 + 1e-5) gives -1000 and ends the episode;
//! otherwise the reward is minus the free capacity of the open machines, sum over open PMs of
//! (cpu + mem - 2). In v1 each VM ends at a step drawn uniformly after its arrival, releasing
//! its load (a machine left empty closes). Observation (the reference's `Dict` flattened):
//! the action mask (PMs the next VM fits), `avail_actions` (all 1), then the state, 51 rows of
//! (open, cpu, mem), the last row the next VM's (time of day, cpu, mem). The state is float32
//! and loads are clipped to 1 after each step, as the reference computes them.
//!
//! Where we differ: or-gymnasium's v1 cannot release a VM (it subtracts a VM's three-column
//! demand row from two load columns and raises a broadcasting error, within the first steps of
//! almost every episode); ours subtracts the VM's (cpu, mem), which the code means. Demands are
//! drawn from the episode's seeded stream with the reference's distributions.

use crate::drl::env::ConfigError;
use crate::drl::env::{ActionSpace, ObservationLayout};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal, WeightedIndex};
use serde::{Deserialize, Serialize};

/// The most physical machines.
pub const MAX_MACHINES: usize = 1_000;
/// The most VMs per episode.
pub const MAX_STEPS: usize = 10_000;

/// The registered ids and whether each releases VMs.
pub const IDS: [(&str, bool); 2] = [("VMPacking-v0", false), ("VMPacking-v1", true)];

/// The reference's memory sizes (normalized) and their odds.
const MEMORY_SIZES: [f64; 6] = [0.02857143, 0.05714286, 0.11428571, 0.45714286, 0.91428571, 1.0];
const MEMORY_PROBS: [f64; 6] = [0.12, 0.165, 0.328, 0.287, 0.064, 0.036];

/// The env's parameters; the defaults are or-gym's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VmPackingConfig {
    /// v1: each VM ends at a step drawn uniformly in (its arrival, the last step + 1].
    pub temporary: bool,
    /// Physical machines (50).
    pub machines: usize,
    /// VMs per episode (72: a day in 20-minute intervals).
    pub step_limit: usize,
    /// Mean and standard deviation of a VM's CPU demand in percent (16.08, 1.26).
    pub cpu_mean: f64,
    pub cpu_std: f64,
    /// Every VM's (cpu, mem) instead of draws (normalized, each at most 1).
    pub demands: Option<Vec<[f64; 2]>>,
}

impl Default for VmPackingConfig {
    fn default() -> Self {
        VmPackingConfig {
            temporary: false,
            machines: 50,
            step_limit: 72,
            cpu_mean: 16.08,
            cpu_std: 1.26,
            demands: None,
        }
    }
}

impl VmPackingConfig {
    pub fn by_id(id: &str) -> Option<Self> {
        IDS.iter().find(|(i, _)| *i == id).map(|&(_, temporary)| VmPackingConfig { temporary, ..Default::default() })
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |field, message: String| Err(ConfigError { field, message, too_large: false });
        let too_large = |field, message: String| Err(ConfigError { field, message, too_large: true });
        if self.machines == 0 || self.step_limit == 0 {
            return invalid(if self.machines == 0 { "machines" } else { "step_limit" }, "must be at least 1".into());
        }
        if self.machines > MAX_MACHINES {
            return too_large("machines", format!("at most {MAX_MACHINES}, got {}", self.machines));
        }
        if self.step_limit > MAX_STEPS {
            return too_large("step_limit", format!("at most {MAX_STEPS}, got {}", self.step_limit));
        }
        if !(self.cpu_mean.is_finite() && self.cpu_mean > 0.0 && self.cpu_std.is_finite() && self.cpu_std >= 0.0) {
            return invalid("cpu_mean", "the mean must be positive and the deviation at least 0, both finite".into());
        }
        match &self.demands {
            Some(d) if d.len() != self.step_limit => {
                invalid("demands", format!("{} VMs for {} steps", d.len(), self.step_limit))
            }
            Some(d) if d.iter().flatten().any(|x| !(0.0..=1.0).contains(x)) => {
                invalid("demands", "every demand must be in [0, 1]".into())
            }
            _ => Ok(()),
        }
    }

    pub fn observation_dim(&self) -> usize {
        2 * self.machines + 3 * (self.machines + 1)
    }

    /// The demand rows (time of day, cpu, mem) as float32, drawn as the reference draws them
    /// (or the given ones).
    pub fn draw_demand(&self, rng: &mut ChaCha8Rng) -> Vec<[f32; 3]> {
        let n = self.step_limit;
        let pairs: Vec<[f64; 2]> = self.demands.clone().unwrap_or_else(|| {
            let normal = Normal::new(self.cpu_mean, self.cpu_std).expect("validated");
            let cpu: Vec<f64> =
                (0..n).map(|_| normal.sample(rng)).map(|c| if c <= 0.0 { self.cpu_mean } else { c } / 100.0).collect();
            let memory = WeightedIndex::new(MEMORY_PROBS).expect("positive odds");
            cpu.into_iter().map(|c| [c, MEMORY_SIZES[memory.sample(rng)]]).collect()
        });
        pairs.iter().enumerate().map(|(i, &[c, m])| [(i as f64 / n as f64) as f32, c as f32, m as f32]).collect()
    }

    /// v1's end step of each VM: uniform in i + 1..=n.
    pub fn draw_durations(&self, rng: &mut ChaCha8Rng) -> Vec<usize> {
        (0..self.step_limit).map(|i| rng.gen_range(i + 1..=self.step_limit)).collect()
    }
}

impl crate::problems::orgym::env::OrGymConfig for VmPackingConfig {
    fn observation_dim(&self) -> usize {
        VmPackingConfig::observation_dim(self)
    }

    fn action_space(&self) -> ActionSpace {
        ActionSpace::Discrete { n: self.machines }
    }

    fn layout(&self) -> ObservationLayout {
        ObservationLayout { action_mask: Some(0), ..Default::default() }
    }
}

/// NumPy's pairwise sum of a float32 array of at most 128 elements (eight running sums).
fn numpy_sum_f32(values: &[f32]) -> f32 {
    if values.len() < 8 {
        return values.iter().fold(0.0f32, |acc, &v| acc + v);
    }
    let mut r = [0.0f32; 8];
    r.copy_from_slice(&values[..8]);
    let whole = values.len() - values.len() % 8;
    for block in values[8..whole].chunks(8) {
        for (acc, &v) in r.iter_mut().zip(block) {
            *acc += v;
        }
    }
    let mut total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for &v in &values[whole..] {
        total += v;
    }
    total
}

/// One episode in progress: the reference's float32 state and bookkeeping.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DataCenter {
    /// (open, cpu, mem) per PM, as the observation shows them (clipped to 1).
    pub machines: Vec<[f32; 3]>,
    /// The mask for the next VM (computed before the clip, as the reference does).
    pub mask: Vec<bool>,
    pub demand: Vec<[f32; 3]>,
    /// v1: each VM's end step.
    pub durations: Vec<usize>,
    /// The PM of each VM placed.
    pub assignment: Vec<Option<usize>>,
    pub step: usize,
}

impl DataCenter {
    pub fn on(config: &VmPackingConfig, demand: Vec<[f32; 3]>, durations: Vec<usize>) -> Self {
        let m = config.machines;
        DataCenter {
            machines: vec![[0.0; 3]; m],
            mask: vec![true; m],
            demand,
            durations,
            assignment: vec![None; config.step_limit],
            step: 0,
        }
    }

    /// This step's VM (cpu, mem).
    pub fn vm(&self, config: &VmPackingConfig) -> [f32; 2] {
        let row = self.demand[self.step.min(config.step_limit - 1)];
        [row[1], row[2]]
    }

    /// (reward, terminated, truncated) of sending this step's VM to PM `action`.
    pub fn place(&mut self, config: &VmPackingConfig, action: usize) -> (f32, bool, bool) {
        let action = action.min(config.machines - 1);
        let [cpu, mem] = self.vm(config);
        let limit = 1.0f32 + 1e-5;
        let mut pms = self.machines.clone();
        let (reward, terminated) = if pms[action][1] + cpu > limit || pms[action][2] + mem > limit {
            (-1000.0, true)
        } else {
            if pms[action][0] == 0.0 {
                pms[action][0] = 1.0;
            }
            pms[action][1] += cpu;
            pms[action][2] += mem;
            self.assignment[self.step] = Some(action);
            let slack: Vec<f32> = pms.iter().map(|p| p[0] * ((0.0 + p[1] + p[2]) - 2.0)).collect();
            (numpy_sum_f32(&slack), false)
        };
        if config.temporary {
            for process in 0..self.step {
                if self.durations[process] == self.step {
                    if let Some(pm) = self.assignment[process] {
                        pms[pm][1] -= self.demand[process][1];
                        pms[pm][2] -= self.demand[process][2];
                        if 0.0 + pms[pm][1] + pms[pm][2] == 0.0 {
                            pms[pm][0] = 0.0;
                        }
                    }
                }
            }
        }
        self.step += 1;
        let [cpu, mem] = self.vm(config);
        self.mask = pms.iter().map(|p| p[1] + cpu <= 1.0 && p[2] + mem <= 1.0).collect();
        self.machines = pms.iter().map(|p| p.map(|x| if x > 1.0 { 1.0 } else { x })).collect();
        (reward, terminated, self.step >= config.step_limit)
    }

    pub fn fill(&self, config: &VmPackingConfig, out: &mut [f32]) {
        let m = config.machines;
        for (o, &allowed) in out[..m].iter_mut().zip(&self.mask) {
            *o = f32::from(u8::from(allowed));
        }
        out[m..2 * m].fill(1.0);
        for (o, pm) in out[2 * m..].chunks_mut(3).zip(&self.machines) {
            o.copy_from_slice(pm);
        }
        let row = self.demand[self.step.min(config.step_limit - 1)];
        out[2 * m + 3 * m..].copy_from_slice(&row);
    }
}

/// A batch of VM-packing envs.
pub type VmPackingVecEnv = crate::problems::orgym::env::OrGymVecEnv<DataCenter>;

impl crate::problems::orgym::env::OrGymEpisode for DataCenter {
    type Config = VmPackingConfig;

    fn start(config: &VmPackingConfig, rng: &mut ChaCha8Rng) -> Self {
        let demand = config.draw_demand(rng);
        let durations = if config.temporary { config.draw_durations(rng) } else { Vec::new() };
        DataCenter::on(config, demand, durations)
    }

    fn step(&mut self, config: &VmPackingConfig, action: &[f32], _rng: &mut ChaCha8Rng) -> (f32, bool, bool) {
        self.place(config, action[0].max(0.0) as usize)
    }

    fn observe(&self, config: &VmPackingConfig, out: &mut [f32]) {
        self.fill(config, out)
    }
}

impl VmPackingVecEnv {
    pub fn by_id(id: &str, num_envs: usize) -> Option<Self> {
        Some(VmPackingVecEnv::new(VmPackingConfig::by_id(id)?, num_envs))
    }

    /// Env i restarts on these demand rows and end steps (fixture replay).
    pub fn set_draws(&mut self, i: usize, demand: Vec<[f32; 3]>, durations: Vec<usize>) {
        let config = self.config().clone();
        *self.episode_mut(i) = DataCenter::on(&config, demand, durations);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy's pairwise float32 sum: eight running sums, then the tail.
    #[test]
    fn pairwise_sum_orders_like_numpy() {
        let values: Vec<f32> = (0..50).map(|i| 0.1 * i as f32 - 1.3).collect();
        let mut r = [0.0f32; 8];
        for (i, &v) in values[..48].iter().enumerate() {
            r[i % 8] += v;
        }
        let expected = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])) + values[48] + values[49];
        assert_eq!(numpy_sum_f32(&values), expected);
        assert_eq!(numpy_sum_f32(&[1.0, 2.0]), 3.0);
    }
}
