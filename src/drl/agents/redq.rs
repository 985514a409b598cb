//! REDQ (Chen et al. 2021, "Randomized Ensembled Double Q-learning"): SAC with an ensemble of
//! N = 10 critics, the minimum over a random subset of M = 2 in every target (Algorithm 1,
//! line 8), the actor trained against the ensemble mean (line 13) and an update-to-data ratio
//! G = 20 (20 critic updates per env step, one actor update after them). The agent is
//! `sac::Sac` with this preset.

use super::sac::SacConfig;
use super::OffPolicySchedule;

pub fn config() -> SacConfig {
    SacConfig {
        schedule: OffPolicySchedule::new(1, 20),
        critics: 10,
        target_subset: 2,
        actor_on_mean: true,
        critic_updates_per_actor_update: 20,
        ..SacConfig::sac()
    }
}
