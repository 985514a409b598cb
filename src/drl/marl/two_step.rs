//! The two-step cooperative matrix game of the QMIX paper (Rashid et al. 2018, section 6.1):
//! two agents, two actions each. In the first step agent 1's action picks the game of the second
//! step (0: state 2A, 1: state 2B), reward 0. In 2A every joint action pays 7; in 2B the payoff is
//! [[0, 1], [1, 8]]. The optimum is 8 (2B, both play 1); a value decomposition that cannot
//! represent the non-additive 2B payoff settles for 7 (VDN). Observations and state are the
//! one-hot game state (fully observable).

use super::{MultiAgentEnv, MultiAgentObservation, MultiAgentStep};
use crate::drl::env::ActionSpace;

const AGENTS: usize = 2;
const STATES: usize = 3;
const PAYOFF_2B: [[f32; 2]; 2] = [[0.0, 1.0], [1.0, 8.0]];

pub struct TwoStepGame {
    /// 0 = first step, 1 = 2A, 2 = 2B.
    states: Vec<usize>,
}

impl TwoStepGame {
    pub fn new(num_envs: usize) -> Self {
        TwoStepGame { states: vec![0; num_envs] }
    }

    fn observe(&self) -> MultiAgentObservation {
        let mut states = vec![0.0; self.states.len() * STATES];
        for (i, &s) in self.states.iter().enumerate() {
            states[i * STATES + s] = 1.0;
        }
        let observations = states.chunks(STATES).flat_map(|row| row.repeat(AGENTS)).collect();
        MultiAgentObservation { observations, states, available_actions: vec![1.0; self.states.len() * AGENTS * 2] }
    }
}

impl MultiAgentEnv for TwoStepGame {
    fn num_envs(&self) -> usize {
        self.states.len()
    }
    fn num_agents(&self) -> usize {
        AGENTS
    }
    fn observation_dim(&self) -> usize {
        STATES
    }
    fn state_dim(&self) -> usize {
        STATES
    }
    fn action_space(&self) -> ActionSpace {
        ActionSpace::Discrete { n: 2 }
    }
    fn episode_limit(&self) -> usize {
        2
    }

    fn reset(&mut self, _seed: u64) -> MultiAgentObservation {
        self.states.iter_mut().for_each(|s| *s = 0);
        self.observe()
    }

    fn step(&mut self, actions: &[f32]) -> MultiAgentStep {
        let b = self.states.len();
        let mut team_rewards = vec![0.0; b];
        let mut terminated = vec![false; b];
        for i in 0..b {
            let (a0, a1) = (actions[i * AGENTS] as usize, actions[i * AGENTS + 1] as usize);
            match self.states[i] {
                0 => self.states[i] = if a0 == 0 { 1 } else { 2 },
                s => {
                    team_rewards[i] = if s == 1 { 7.0 } else { PAYOFF_2B[a0][a1] };
                    terminated[i] = true;
                }
            }
        }
        MultiAgentStep {
            next: self.observe(),
            // Each agent's share is the team reward (a shared-reward game).
            rewards: team_rewards.iter().flat_map(|&r| [r; AGENTS]).collect(),
            team_rewards,
            terminated,
            truncated: vec![false; b],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payoffs_follow_the_paper() {
        let mut game = TwoStepGame::new(3);
        game.reset(0);
        // env 0 goes to 2A, envs 1-2 to 2B.
        let first = game.step(&[0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
        assert_eq!(first.team_rewards, vec![0.0; 3]);
        assert_eq!(&first.next.states[..STATES], &[0.0, 1.0, 0.0]);
        let second = game.step(&[1.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        assert_eq!(second.team_rewards, vec![7.0, 8.0, 0.0]);
        assert!(second.terminated.iter().all(|&t| t));
    }
}
