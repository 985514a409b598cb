//! The reference a VehicleRouting policy is judged against: a greedy dispatcher (the rule a
//! dispatcher would write, as the OR-Gym paper's heuristic baseline does). Each step, in order:
//! pick up an accepted order at the restaurant the driver stands on (if a seat is free); accept
//! the most valuable open order while accepted plus loaded orders leave a seat; drive toward the
//! nearest delivery point of a loaded order; drive toward the nearest restaurant with an accepted
//! order; else wait. Distances are grid steps (the driver moves one cell per step).

use super::env::{Dispatch, VehicleRoutingConfig, MAX_ORDERS};
use crate::drl::env::VecEnv;

fn steps(a: (i64, i64), b: (i64, i64)) -> i64 {
    (a.0 - b.0).abs() + (a.1 - b.1).abs()
}

/// The dispatcher's action.
pub fn dispatcher_action(episode: &Dispatch) -> usize {
    let k = MAX_ORDERS;
    let with = |status: u8| episode.orders.iter().filter(move |(_, o)| o.status == status);
    let free_seat = episode.load < episode.capacity;
    if free_seat {
        if let Some((slot, _)) = with(2).find(|(_, o)| episode.restaurants[o.restaurant] == episode.driver) {
            return 1 + k + slot;
        }
    }
    let committed = with(2).count() as i64 + episode.load;
    if committed < episode.capacity {
        if let Some((slot, _)) = with(1).max_by(|a, b| a.1.value.total_cmp(&b.1.value)) {
            return 1 + slot;
        }
    }
    if let Some((slot, _)) = with(3).min_by_key(|(_, o)| steps(o.delivery, episode.driver)) {
        return 1 + 2 * k + slot;
    }
    if free_seat {
        if let Some((slot, _)) = with(2).min_by_key(|(_, o)| steps(episode.restaurants[o.restaurant], episode.driver)) {
            return 1 + k + slot;
        }
    }
    0
}

/// Actions from the batch, its observations and their width: one row per env, flat.
pub type RoutingActor<'a> = crate::problems::orgym::env::Actor<'a, Dispatch>;

/// Per-episode returns of `act` on `episodes` episodes from `seed` (each env's first episode).
pub fn rollout(config: &VehicleRoutingConfig, episodes: usize, seed: u64, act: &mut RoutingActor<'_>) -> Vec<f64> {
    crate::problems::orgym::env::first_episode_returns(config, episodes, seed, act)
}

/// Per-episode returns of the dispatcher.
pub fn dispatcher_returns(config: &VehicleRoutingConfig, episodes: usize, seed: u64) -> Vec<f64> {
    rollout(config, episodes, seed, &mut |env, _, _| {
        (0..env.num_envs()).map(|i| dispatcher_action(env.episode(i)) as f32).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The dispatcher earns more than waiting (0) and than uniform actions on drawn episodes.
    #[test]
    fn dispatcher_beats_waiting_and_uniform() {
        let config = VehicleRoutingConfig { step_limit: 300, ..Default::default() };
        let dispatcher = dispatcher_returns(&config, 8, 3);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let uniform =
            rollout(&config, 8, 3, &mut |env, _, _| (0..env.num_envs()).map(|_| rng.gen_range(0..33) as f32).collect());
        let (d, u): (f64, f64) = (dispatcher.iter().sum(), uniform.iter().sum());
        assert!(d > 0.0 && d > u, "dispatcher {dispatcher:?}, uniform {uniform:?}");
    }
}
