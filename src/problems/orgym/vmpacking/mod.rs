//! VMPacking-v0/v1 as solve endpoints: the env's parameters (`demands` fixes every VM's (cpu,
//! mem); without it they, and v1's end steps, are drawn with the request's seed), one episode
//! placed by the shipped policy, answered with each VM's machine, each step's reward and open
//! machines, the return, and on the same draws first fit's and best fit's returns. Baselines:
//! `first_fit`, `best_fit`.

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::vmpacking::env::{DataCenter, VmPackingConfig, VmPackingVecEnv, IDS};
use crate::problems::orgym::vmpacking::reference::{rule_action, Rule};
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use serde_json::{json, Value};
use std::time::Instant;

/// One registry row per env id.
pub(crate) static VM_PACKING: [Endpoint<VmEpisode>; 2] = [Endpoint::new(IDS[0].0), Endpoint::new(IDS[1].0)];

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "first_fit", "best_fit"];

pub(crate) struct VmEpisode {
    id: &'static str,
    config: VmPackingConfig,
}

/// One episode: each step's machine, reward and open machines after it.
pub(crate) struct Run {
    demands: Vec<[f32; 2]>,
    steps: Vec<(usize, f32, usize)>,
}

impl Run {
    fn total(&self) -> f64 {
        self.steps.iter().map(|s| f64::from(s.1)).sum()
    }
}

impl VmEpisode {
    /// Runs one episode from `seed`, each machine from `act` (observation row, data center).
    fn run(&self, seed: u64, act: &mut dyn FnMut(&[f32], &DataCenter) -> usize) -> Run {
        let mut env = VmPackingVecEnv::new(self.config.clone(), 1);
        env.reset(seed);
        let mut center = env.episode(0).clone();
        let demands = center.demand.iter().map(|r| [r[1], r[2]]).collect();
        let mut row = vec![0.0; self.config.observation_dim()];
        let mut steps = Vec::new();
        loop {
            center.fill(&self.config, &mut row);
            let machine = act(&row, &center).min(self.config.machines - 1);
            let (reward, terminated, truncated) = center.place(&self.config, machine);
            steps.push((machine, reward, center.machines.iter().filter(|p| p[0] > 0.0).count()));
            if terminated || truncated {
                break;
            }
        }
        Run { demands, steps }
    }

    fn rule(&self, seed: u64, rule: Rule) -> Run {
        self.run(seed, &mut |_, center| rule_action(&self.config, center, rule))
    }
}

impl EpisodeSolve for VmEpisode {
    type Run = Run;
    const FALLBACK: &'static str = "best_fit";
    const SUMMARY: &'static str = "OR-Gym online virtual-machine packing (v1: VMs end): one episode by the shipped policy, with first fit's and best fit's returns on the same VMs";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "machines": {"type": "integer", "minimum": 1, "maximum": crate::problems::orgym::vmpacking::env::MAX_MACHINES, "description": "physical machines (50)"},
                "step_limit": {"type": "integer", "minimum": 1, "maximum": crate::problems::orgym::vmpacking::env::MAX_STEPS, "description": "VMs per episode (72)"},
                "cpu_mean": {"type": "number", "exclusiveMinimum": 0, "description": "mean CPU demand in percent of a machine (16.08)"},
                "cpu_std": {"type": "number", "minimum": 0, "description": "its standard deviation (1.26)"},
                "temporary": {"type": "boolean", "description": "VMs end (v1: true)"},
                "demands": {"type": "array", "items": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}, "minItems": 2, "maxItems": 2}, "description": "every VM's (cpu, mem), normalized, instead of draws"}
            }
        })
    }

    fn load(id: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config = config_from(VmPackingConfig::by_id(id).expect("registered id"), input, VmPackingConfig::validate)?;
        Ok(VmEpisode { id, config })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let probe = VmPackingVecEnv::new(self.config.clone(), 1);
        with_policy(models, self.id, &probe, |act| self.run(seed, &mut |row, _| act(row)[0] as usize))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "first_fit" => self.rule(seed, Rule::FirstFit),
            "best_fit" => self.rule(seed, Rule::BestFit),
            _ => return None,
        }))
    }

    fn report(&self, method: &str, run: Run, start: Instant, seed: u64) -> SolveReport {
        let total = run.total();
        let solution = json!({
            "method": method,
            "demands": run.demands,
            "machines": run.steps.iter().map(|s| s.0).collect::<Vec<_>>(),
            "rewards": run.steps.iter().map(|s| s.1).collect::<Vec<_>>(),
            "open_machines": run.steps.iter().map(|s| s.2).collect::<Vec<_>>(),
            "overloaded": run.steps.last().is_some_and(|s| s.1 <= -1000.0),
            "return": total,
            "reference": {
                "first_fit_return": self.rule(seed, Rule::FirstFit).total(),
                "best_fit_return": self.rule(seed, Rule::BestFit).total(),
            },
        });
        super::episode_report(self.id, total, solution, run.steps.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} machines, {} VMs", self.config.machines, self.config.step_limit)
    }
}
