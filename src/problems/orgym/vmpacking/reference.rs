//! The references a VM-packing policy is judged against, the classic online bin-packing rules
//! in two dimensions: first fit (the lowest-numbered open machine the VM fits, else the
//! lowest-numbered closed one) and best fit (the open machine the VM leaves with the least free
//! CPU + memory, else the lowest-numbered closed one). Both only ever pick a machine the mask
//! allows, so neither overloads.

use super::env::{DataCenter, VmPackingConfig};
use crate::drl::env::VecEnv;

/// The packing rule of a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    FirstFit,
    BestFit,
}

/// The rule's machine for this step's VM (machine 0 when none fits: the env's overload).
pub fn rule_action(config: &VmPackingConfig, center: &DataCenter, rule: Rule) -> usize {
    let [cpu, mem] = center.vm(config);
    let open_fits = center.machines.iter().enumerate().filter(|(i, p)| p[0] > 0.0 && center.mask[*i]);
    let chosen = match rule {
        Rule::FirstFit => open_fits.map(|(i, _)| i).next(),
        Rule::BestFit => open_fits
            .min_by(|(_, a), (_, b)| (2.0 - a[1] - a[2] - cpu - mem).total_cmp(&(2.0 - b[1] - b[2] - cpu - mem)))
            .map(|(i, _)| i),
    };
    chosen.or_else(|| center.machines.iter().enumerate().position(|(i, p)| p[0] == 0.0 && center.mask[i])).unwrap_or(0)
}

/// Actions from the batch, its observations and their width: one row per env, flat.
pub type VmActor<'a> = crate::problems::orgym::env::Actor<'a, DataCenter>;

/// Per-episode returns of `act` on `episodes` episodes from `seed` (each env's first episode).
pub fn rollout(config: &VmPackingConfig, episodes: usize, seed: u64, act: &mut VmActor<'_>) -> Vec<f64> {
    crate::problems::orgym::env::first_episode_returns(config, episodes, seed, act)
}

/// Per-episode returns of a rule.
pub fn rule_returns(config: &VmPackingConfig, episodes: usize, seed: u64, rule: Rule) -> Vec<f64> {
    rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs()).map(|i| rule_action(config, env.episode(i), rule) as f32).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::super::env::VmPackingVecEnv;
    use super::*;
    use rand::SeedableRng;

    /// Neither rule overloads (-1000) on drawn episodes of either version, and both leave less
    /// free capacity than a random allowed machine; on given demands best fit prefers the
    /// fuller machine.
    #[test]
    fn rules_never_overload_and_best_fit_fills() {
        for temporary in [false, true] {
            let config = VmPackingConfig { temporary, ..Default::default() };
            let first = rule_returns(&config, 16, 4, Rule::FirstFit);
            let best = rule_returns(&config, 16, 4, Rule::BestFit);
            assert!(first.iter().chain(&best).all(|&r| r > -1000.0), "{first:?} {best:?}");
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
            let random: f64 = rollout(&config, 16, 4, &mut |env, obs, dim| {
                obs.chunks(dim)
                    .map(|row| crate::problems::orgym::env::random_allowed(&row[..env.config().machines], &mut rng))
                    .collect()
            })
            .iter()
            .sum();
            let (f, b): (f64, f64) = (first.iter().sum(), best.iter().sum());
            assert!(f > random && b > random, "temporary {temporary}: first fit {f}, best fit {b}, random {random}");
        }
        let config = VmPackingConfig {
            machines: 3,
            step_limit: 3,
            demands: Some(vec![[0.5, 0.1], [0.3, 0.1], [0.4, 0.1]]),
            ..Default::default()
        };
        let mut env = VmPackingVecEnv::new(config.clone(), 1);
        env.step(&[0.0]);
        env.step(&[1.0]);
        // Machine 0 holds 0.5 cpu, machine 1 0.3: the 0.4 VM fits both; best fit takes 0, first fit 0.
        assert_eq!(rule_action(&config, env.episode(0), Rule::BestFit), 0);
        let mut env = VmPackingVecEnv::new(config.clone(), 1);
        env.step(&[1.0]);
        env.step(&[0.0]);
        assert_eq!(rule_action(&config, env.episode(0), Rule::BestFit), 1, "machine 1 holds 0.5 now");
        assert_eq!(rule_action(&config, env.episode(0), Rule::FirstFit), 0);
    }
}
