//! A weighted ensemble of single-agent policies, served like one agent: the action is the
//! weighted mean of the members' greedy actions (continuous) or the weighted vote over their
//! greedy actions (discrete). A promoted ensemble folder holds `ensemble.json` and each member's
//! policy files under the prefix `member<i>.`; `run::load_checkpoint` rebuilds it. It serves and
//! evaluates; it does not train (its update changes nothing).

use super::agents::{Agent, AgentState, Metrics, OffPolicyAgent, OffPolicySchedule};
use super::buffer::ReplayBuffer;
use super::state::StateDict;
use anyhow::{bail, Result};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::{nn, Kind, Tensor};

pub const ENSEMBLE_FILE: &str = "ensemble.json";

/// `ensemble.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnsembleSpec {
    /// One weight per member (non-negative, summing to 1).
    pub weights: Vec<f64>,
    /// Discrete action count (None: continuous actions).
    pub discrete_actions: Option<usize>,
}

/// The prefix of member `i`'s files in an ensemble folder.
pub fn member_prefix(i: usize) -> String {
    format!("member{i}.")
}

/// Weights from evaluation returns: exp((score - best) / spread), normalized (uniform when the
/// scores tie), so the best member weighs e times the worst.
pub fn weights_from_scores(scores: &[f64]) -> Vec<f64> {
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let worst = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let spread = best - worst;
    let raw: Vec<f64> = scores.iter().map(|s| if spread > 0.0 { ((s - best) / spread).exp() } else { 1.0 }).collect();
    let total: f64 = raw.iter().sum();
    raw.iter().map(|w| w / total).collect()
}

pub struct WeightedEnsemble {
    members: Vec<Agent>,
    spec: EnsembleSpec,
    schedule: OffPolicySchedule,
}

impl WeightedEnsemble {
    pub fn new(members: Vec<Agent>, spec: EnsembleSpec) -> Result<Self> {
        if members.is_empty() || members.len() != spec.weights.len() {
            bail!(
                "an ensemble needs one weight per member ({} members, {} weights)",
                members.len(),
                spec.weights.len()
            );
        }
        Ok(WeightedEnsemble { members, spec, schedule: OffPolicySchedule::new(1, 1) })
    }
}

impl AgentState for WeightedEnsemble {
    fn var_stores(&mut self) -> Vec<(&'static str, &mut nn::VarStore)> {
        Vec::new()
    }

    fn save_state(&mut self, _state: &mut StateDict) -> Result<()> {
        bail!("an ensemble serves; it does not train or checkpoint")
    }

    fn load_state(&mut self, _state: &StateDict) -> Result<()> {
        bail!("an ensemble serves; it does not train or checkpoint")
    }

    fn set_hyperparameters(&mut self, _patch: &serde_json::Value) -> Result<()> {
        bail!("an ensemble has no hyperparameters")
    }
}

impl OffPolicyAgent for WeightedEnsemble {
    fn schedule(&self) -> &OffPolicySchedule {
        &self.schedule
    }

    fn act(&mut self, obs: &Tensor, _explore: bool) -> Tensor {
        let actions: Vec<Tensor> = self.members.iter_mut().map(|m| super::run::act_greedy(m, obs)).collect();
        let (shape, kind) = (actions[0].size(), actions[0].kind());
        let combined = match self.spec.discrete_actions {
            Some(n) => {
                let votes = actions
                    .iter()
                    .zip(&self.spec.weights)
                    .map(|(a, w)| a.to_kind(Kind::Int64).view([-1]).one_hot(n as i64).to_kind(Kind::Double) * *w)
                    .reduce(|a, b| a + b)
                    .expect("members");
                votes.argmax(-1, false)
            }
            None => actions
                .iter()
                .zip(&self.spec.weights)
                .map(|(a, w)| a.to_kind(Kind::Double) * *w)
                .reduce(|a, b| a + b)
                .expect("members"),
        };
        combined.to_kind(kind).view(shape.as_slice())
    }

    fn update(&mut self, _buffer: &mut ReplayBuffer, _rng: &mut ChaCha8Rng) -> Metrics {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_favour_the_better_members_and_sum_to_one() {
        let w = weights_from_scores(&[-150.0, -300.0, -200.0]);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(w[0] > w[2] && w[2] > w[1]);
        assert!((w[0] / w[1] - std::f64::consts::E).abs() < 1e-9);
        assert_eq!(weights_from_scores(&[5.0, 5.0]), vec![0.5, 0.5]);
    }
}
