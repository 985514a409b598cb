//! The native environments replay trajectories recorded from gymnasium
//! (tests/fixtures/gymnasium/record.py): same observations, rewards, termination and truncation.

use rlsolver::drl::env::classic::{ClassicDynamics, ClassicVecEnv};
use rlsolver::drl::env::{acrobot, cartpole, mountain_car, pendulum, VecEnv};
use serde_json::Value;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn assert_close(ours: &[f32], theirs: &[f64], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: ours {ours:?} gymnasium {theirs:?}");
    for (a, b) in ours.iter().zip(theirs) {
        let tolerance = 1e-5 * (1.0 + b.abs());
        assert!((f64::from(*a) - b).abs() <= tolerance, "{what}: ours {ours:?} gymnasium {theirs:?}");
    }
}

fn replay<D: ClassicDynamics>(id: &str) {
    let path = format!("{}/tests/fixtures/gymnasium/{id}.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = data["episodes"].as_array().unwrap();
    let mut ends = (0, 0);
    for episode in episodes {
        let label = format!("{id} {} seed {}", episode["policy"], episode["seed"]);
        let mut env = ClassicVecEnv::<D>::new(1);
        env.set_state(0, &floats(&episode["initial_state"]));
        assert_close(&env.observations(), &floats(&episode["initial_observation"]), &format!("{label} reset"));
        let steps = episode["steps"].as_array().unwrap();
        // Whole episodes: every step before the last continues, the last ends (so matching the
        // flags step by step also matches the episode's length).
        let last = &steps[steps.len() - 1];
        assert!(last["terminated"] == true || last["truncated"] == true, "{label}: the fixture stops mid-episode");
        for (t, step) in steps.iter().enumerate() {
            let action: Vec<f32> = floats(&step["action"]).iter().map(|&a| a as f32).collect();
            let batch = env.step(&action);
            let (terminated, truncated) = (step["terminated"].as_bool().unwrap(), step["truncated"].as_bool().unwrap());
            let at = format!("{label} step {t}");
            assert_eq!((batch.terminated[0], batch.truncated[0]), (terminated, truncated), "{at}");
            let observation = if terminated || truncated { &batch.final_observations } else { &batch.observations };
            assert_close(observation, &floats(&step["observation"]), &at);
            let reward = step["reward"].as_f64().unwrap();
            assert!((f64::from(batch.rewards[0]) - reward).abs() <= 1e-5 * (1.0 + reward.abs()), "{at}: reward");
            env.resync(0, &floats(&step["state"]));
            ends.0 += usize::from(terminated);
            ends.1 += usize::from(truncated);
        }
    }
    assert!(episodes.len() >= 3, "{id}: fixture has {} episodes", episodes.len());
    eprintln!("{id}: {} episodes replayed, {} terminations, {} truncations", episodes.len(), ends.0, ends.1);
}

#[test]
fn cartpole_matches_gymnasium() {
    replay::<cartpole::CartPole>("CartPole-v1");
}

#[test]
fn acrobot_matches_gymnasium() {
    replay::<acrobot::Acrobot>("Acrobot-v1");
}

#[test]
fn mountain_car_matches_gymnasium() {
    replay::<mountain_car::MountainCar>("MountainCar-v0");
}

#[test]
fn mountain_car_continuous_matches_gymnasium() {
    replay::<mountain_car::MountainCarContinuous>("MountainCarContinuous-v0");
}

#[test]
fn pendulum_matches_gymnasium() {
    replay::<pendulum::Pendulum>("Pendulum-v1");
}

#[test]
fn vectorized_envs_auto_reset_and_reproduce_from_a_seed() {
    let envs = rlsolver::problems::envs(Default::default());
    for id in envs.ids() {
        let mut a = envs.make(id, 8).unwrap();
        let mut b = envs.make(id, 8).unwrap();
        let (oa, ob) = (a.reset(3), b.reset(3));
        assert_eq!(oa, ob, "{id}");
        let (dim, width) = (a.observation_dim(), a.action_space().width());
        // Envs 0 and 2 get the same actions (k + t alternates per env row): their rows must
        // part within the run unless they share a stream (some envs start identically, e.g.
        // the inventory chain's fixed stock).
        let mut parted = oa[..dim] != oa[2 * dim..3 * dim];
        let mut finished = 0;
        for t in 0..1000 {
            let actions: Vec<f32> = (0..8 * width).map(|k| ((k / width + t) % 2) as f32).collect();
            let (sa, sb) = (a.step(&actions), b.step(&actions));
            assert_eq!(sa.observations, sb.observations, "{id}");
            parted |= sa.observations[..dim] != sa.observations[2 * dim..3 * dim];
            finished += sa.terminated.iter().zip(&sa.truncated).filter(|(x, y)| **x || **y).count();
        }
        // StockTrading-v0 replays its data set's one price path in every env (as FinRL's does).
        assert!(parted || id == "StockTrading-v0", "{id}: envs share a stream");
        assert!(finished >= 8, "{id}: only {finished} episodes ended in 1000 steps");
    }
}
