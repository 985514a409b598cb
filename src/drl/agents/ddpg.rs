//! DDPG (Lillicrap et al. 2016): a deterministic actor trained through one critic, Gaussian
//! exploration noise, Polyak-averaged targets. It is TD3's special case (one critic, no
//! target-policy smoothing, no delay), so the agent is `td3::Td3` with this preset.

use super::td3::Td3Config;

/// TD3's Pendulum settings with TD3's three additions switched off.
pub fn config() -> Td3Config {
    Td3Config { critics: 1, policy_noise: 0.0, noise_clip: 0.0, policy_delay: 1, ..Td3Config::td3() }
}
