//! The learned proposal policy of the move-set loop (`moves.rs`): MCPG's Bernoulli policy
//! (Chen et al., "Monte Carlo policy gradient method for binary optimization"; `policy.rs`) over
//! a problem's 0/1 choices (a set chosen, an item packed), trained online by its REINFORCE step on
//! an elite pool of the distinct best solutions the chains have reported, and handed to every
//! chain as weights (`strength` times the log-odds) that its proposals follow (set cover's repair prefers the sets the policy
//! favours). MCPG trains on the current batch of samples; with one chain per core that batch is
//! two solutions, so the pool (the `pool` best distinct ones so far) stands in for it.

use super::policy::{BernoulliPolicy, PolicyParams};
use super::SamplePool;
use std::sync::Arc;

/// Proposal-policy hyperparameters.
#[derive(Debug, Clone, Copy)]
pub struct ProposalParams {
    /// Train and hand out the policy at all (a move set without choices ignores it).
    pub enabled: bool,
    /// The chains receive `strength` times the log-odds: a move set weighs choice j by
    /// exp(`strength` theta_j).
    pub strength: f64,
    /// Distinct best solutions the policy is trained on each round.
    pub pool: usize,
    /// The policy-gradient step (learning rate, entropy bonus, logit clip) of `policy.rs`.
    pub policy: PolicyParams,
}

impl Default for ProposalParams {
    fn default() -> Self {
        ProposalParams {
            enabled: false,
            strength: 0.1,
            pool: 16,
            policy: PolicyParams { learning_rate: 0.05, entropy_weight: 0.01, logit_clip: 2.0 },
        }
    }
}

/// The policy and the elite pool it learns from.
pub struct ProposalPolicy {
    policy: BernoulliPolicy,
    pool: SamplePool,
    /// `strength` times the policy's log-odds: what the chains receive.
    weights: Arc<[f32]>,
    strength: f64,
}

impl ProposalPolicy {
    pub fn new(num_choices: usize, params: &ProposalParams) -> Self {
        ProposalPolicy {
            policy: BernoulliPolicy::new(num_choices, params.policy),
            pool: SamplePool::new(params.pool.max(2)),
            weights: vec![0.0; num_choices].into(),
            strength: params.strength,
        }
    }

    /// Offers a chain's best solution (its choices and energy) to the pool.
    pub fn offer(&mut self, choices: &[bool], energy: f64) {
        let spins: Vec<i8> = choices.iter().map(|&on| if on { 1 } else { -1 }).collect();
        self.pool.offer(&spins, energy);
    }

    /// One policy-gradient step on the pool (none until it holds two solutions: the advantages
    /// of a single one are undefined); returns `strength` times the log-odds, which the chains
    /// follow next.
    pub fn learn(&mut self) -> Arc<[f32]> {
        let states = self.pool.states();
        if states.len() >= 2 {
            let spins: Vec<i8> = states.iter().flat_map(|(s, _)| s.iter().copied()).collect();
            let energies: Vec<f64> = states.iter().map(|(_, e)| *e).collect();
            self.policy.update(&spins, &energies);
            let strength = self.strength as f32;
            self.weights = self.policy.log_odds().iter().map(|t| strength * t).collect();
        }
        self.weights.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Choice 0 is in every good solution and in no bad one: its log-odds rise, those of the
    /// choice that only bad solutions hold fall, and a choice that good and bad solutions share
    /// alike stays where it was.
    #[test]
    fn the_policy_moves_towards_the_choices_of_the_better_solutions() {
        let params = ProposalParams { strength: 1.0, ..ProposalParams::default() };
        let mut proposal = ProposalPolicy::new(3, &params);
        proposal.offer(&[true, false, true], 1.0);
        proposal.offer(&[true, false, false], 2.0);
        proposal.offer(&[false, true, false], 5.0);
        proposal.offer(&[false, true, true], 6.0);
        let mut log_odds = proposal.learn();
        for _ in 0..50 {
            log_odds = proposal.learn();
        }
        assert!(log_odds[0] > 0.5, "{log_odds:?}");
        assert!(log_odds[1] < -0.5, "{log_odds:?}");
        assert!(log_odds[2].abs() < 0.1, "choice 2 splits good and bad alike: {log_odds:?}");
    }

    #[test]
    fn a_single_solution_teaches_nothing() {
        let mut proposal = ProposalPolicy::new(2, &ProposalParams::default());
        proposal.offer(&[true, false], 1.0);
        proposal.offer(&[true, false], 0.5);
        assert_eq!(&*proposal.learn(), &[0.0, 0.0]);
    }
}
