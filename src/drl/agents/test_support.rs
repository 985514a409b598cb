//! Helpers of the agents' unit tests: a store's parameters, and one set of transitions written
//! both in the unit action box and in a wider one (TD3's and SAC's action-box tests).

use crate::drl::buffer::ReplayBuffer;
use tch::{nn, Kind, Tensor};

/// The unit box and the wide box [-3, 3] x [0, 4], as (low, high).
pub const UNIT: ([f32; 2], [f32; 2]) = ([-1.0, -1.0], [1.0, 1.0]);
pub const WIDE: ([f32; 2], [f32; 2]) = ([-3.0, 0.0], [3.0, 4.0]);

/// A unit-box action [.., 2] in the wide box's units.
pub fn to_wide(unit: &Tensor) -> Tensor {
    Tensor::stack(&[unit.select(1, 0) * 3.0, unit.select(1, 1) * 2.0 + 2.0], 1)
}

/// A store's parameters in the order of their names.
pub fn parameters(store: &nn::VarStore) -> Vec<f64> {
    let mut variables: Vec<(String, Tensor)> = store.variables().into_iter().collect();
    variables.sort_by(|a, b| a.0.cmp(&b.0));
    variables.iter().flat_map(|(_, t)| Vec::<f64>::try_from(t.flatten(0, -1).to_kind(Kind::Double)).unwrap()).collect()
}

/// The largest difference between the parameters of two stores of one shape.
pub fn largest_difference(a: &nn::VarStore, b: &nn::VarStore) -> f64 {
    parameters(a).iter().zip(parameters(b)).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// 32 transitions (3-d observations, rewards 0-2, none terminal) whose i-th action is
/// `action(i)` in the unit box: one buffer holds them in the unit box's units, the other in
/// `WIDE`'s.
pub fn twin_buffers(action: impl Fn(usize) -> [f32; 2]) -> (ReplayBuffer, ReplayBuffer) {
    let (mut unit, mut wide) = (ReplayBuffer::new(64, 3, 2, None), ReplayBuffer::new(64, 3, 2, None));
    for i in 0..32 {
        let obs = [i as f32 / 10.0, 1.0, -1.0];
        let a = action(i);
        unit.push(&obs, &a, (i % 3) as f32, &obs, false);
        wide.push(&obs, &[3.0 * a[0], 2.0 + 2.0 * a[1]], (i % 3) as f32, &obs, false);
    }
    (unit, wide)
}

/// Variables by name, copied (what a store held before an update), or SB3's after its update.
pub type Snapshot = std::collections::HashMap<String, Tensor>;

/// Every store of `agent` (its `var_stores`, by their names), copied.
pub fn snapshots(agent: &mut impl super::AgentState) -> Vec<(&'static str, Snapshot)> {
    let copy =
        |store: &nn::VarStore| store.variables().into_iter().map(|(name, t)| (name, t.detach().copy())).collect();
    agent.var_stores().into_iter().map(|(name, store)| (name, copy(store))).collect()
}

/// A one-element f64 tensor (a setting in `sb3_update`'s input).
pub fn scalar(x: f64) -> Tensor {
    Tensor::from_slice(&[x])
}

/// Stable-Baselines3's own update (`benches/peers/sb3_update.py ALGORITHM`) from the weights in
/// `before` (`snapshots` taken before our update), the data and the settings in `input`; returns
/// SB3's weights after it, under the names `w/<store>/<variable>`. None (with the reason
/// printed) where .venv lacks SB3, which fails under CI=true.
pub fn sb3_update(algorithm: &str, before: &[(&str, Snapshot)], input: Vec<(&str, Tensor)>) -> Option<Snapshot> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    let has_sb3 = std::process::Command::new(&python)
        .args(["-c", "import stable_baselines3"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_sb3 {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but .venv lacks stable-baselines3");
        eprintln!("skipped: .venv lacks stable-baselines3 (make simulators)");
        return None;
    }
    let mut named: Vec<(String, Tensor)> = input.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    for (store_name, variables) in before {
        for (name, variable) in variables {
            named.push((format!("w/{store_name}/{name}"), variable.shallow_clone()));
        }
    }
    let dir = std::env::temp_dir().join(format!("rlsolver-sb3-{algorithm}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (in_path, out_path) = (dir.join("in.npz"), dir.join("out.npz"));
    Tensor::write_npz(&named, &in_path).unwrap();
    let status = std::process::Command::new(&python)
        .arg(root.join("benches/peers/sb3_update.py"))
        .arg(algorithm)
        .args([&in_path, &out_path])
        .status()
        .unwrap();
    assert!(status.success(), "SB3's {algorithm} update failed");
    let after = Tensor::read_npz(&out_path).unwrap().into_iter().collect();
    std::fs::remove_dir_all(&dir).ok();
    Some(after)
}

/// The largest distance between a variable of `agent` and SB3's after the update, relative to
/// how far ours moved from `before`; panics where a variable did not move or SB3's lacks one of
/// ours.
pub fn largest_relative_gap(before: &[(&str, Snapshot)], agent: &mut impl super::AgentState, sb3: &Snapshot) -> f64 {
    let mut worst = 0.0f64;
    for (store_name, store) in agent.var_stores() {
        let start = &before.iter().find(|(name, _)| *name == store_name).expect("a snapshot of every store").1;
        for (name, mine) in store.variables() {
            let key = format!("w/{store_name}/{name}");
            let theirs = sb3.get(&key).unwrap_or_else(|| panic!("SB3's weights lack {key}")).to_kind(Kind::Float);
            let moved = (&mine - &start[&name]).norm().double_value(&[]);
            assert!(moved > 0.0, "{key} did not move");
            worst = worst.max((&mine - theirs).norm().double_value(&[]) / moved);
        }
    }
    worst
}

/// Hopper-v5's episodes in the off-policy run tests end at this many steps (a random policy
/// falls after about 20), so that the replay holds truncations besides falls.
pub const HOPPER_LIMIT: usize = 16;

/// What every off-policy run test gives `sb3_update`: the env's reset seed, the episode cut and
/// the warm-up's uniform actions [warmup, actions] (Hopper's box is [-1, 1]), drawn from `rows`,
/// a replay of the loop's stream seeded like the run.
pub fn hopper_run_input(seed: u64, warmup: usize, rows: &mut rand_chacha::ChaCha8Rng) -> Vec<(&'static str, Tensor)> {
    use rand::Rng;
    let action_dim = 3;
    let actions: Vec<f32> = (0..warmup * action_dim).map(|_| rows.gen_range(-1.0f32..=1.0)).collect();
    let env_seed = crate::drl::env::gymnasium::env_seed(seed, 0, 0) as i64;
    vec![
        ("warmup_actions", Tensor::from_slice(&actions).view([warmup as i64, action_dim as i64])),
        ("env_seeds", Tensor::from_slice(&[env_seed])),
        ("max_episode_steps", scalar(HOPPER_LIMIT as f64)),
    ]
}

/// Trains `algorithm` with `overrides` for `steps` on Hopper-v5 through the Gymnasium bridge
/// (`run::train`, episodes cut at `HOPPER_LIMIT`) and loads the run's end state into `agent`.
pub fn train_on_hopper(
    algorithm: &str,
    overrides: serde_json::Value,
    steps: usize,
    seed: u64,
    agent: &mut impl super::AgentState,
) {
    use crate::drl::run::{train, TrainConfig};
    let dir = std::env::temp_dir().join(format!("rlsolver-{algorithm}-run-{}", uuid::Uuid::new_v4()));
    let run = TrainConfig {
        eval_every: steps,
        eval_episodes: 1,
        overrides,
        out_dir: Some(dir.clone()),
        env_config: serde_json::json!({"max_episode_steps": HOPPER_LIMIT}),
        ..TrainConfig::new(algorithm, "gymnasium:Hopper-v5", steps, seed)
    };
    train(&run).unwrap();
    agent.load_state(&crate::drl::state::StateDict::read(&dir).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

/// SB3's side of an off-policy run test ended episodes both ways and used every draw given.
pub fn assert_sb3_run_ended_both_ways_on_our_draws(sb3: &Snapshot) {
    let count = |key: &str| Vec::<f64>::try_from(sb3[key].to_kind(Kind::Double).flatten(0, -1)).unwrap()[0];
    let (terminated, truncated) = (count("terminated"), count("truncated"));
    eprintln!("episodes ended: {terminated} terminated, {truncated} truncated");
    assert!(terminated >= 2.0 && truncated >= 2.0, "the replay holds both ends");
    assert_eq!(count("unused"), 0.0, "SB3 used every draw given to it");
}
