//! Identity of the native simple_spread with mpe2's simple_spread_v3: replays the trajectories
//! that tests/fixtures/mpe2/record.py recorded (fixed seeds, fixed joint actions, discrete and
//! continuous, collisions included) and compares every observation, reward and flag.

use rlsolver::drl::marl::simple_spread::{SimpleSpread, World, AGENTS, OBSERVATION_DIM};
use rlsolver::drl::marl::MultiAgentEnv;
use serde_json::Value;

fn pairs(v: &Value) -> Vec<[f64; 2]> {
    v.as_array().unwrap().iter().map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()]).collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|x| match x.as_array() {
            Some(row) => row.iter().map(|y| y.as_f64().unwrap()).collect::<Vec<_>>(),
            None => vec![x.as_f64().unwrap()],
        })
        .collect()
}

fn assert_close(ours: &[f32], theirs: &[f64], tolerance: f64, what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: lengths");
    for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!((f64::from(*a) - b).abs() <= tolerance * (1.0 + b.abs()), "{what}[{k}]: ours {a}, mpe2 {b}");
    }
}

#[test]
fn simple_spread_replays_mpe2_trajectories() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mpe2/simple_spread_v3.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = fixture["episodes"].as_array().unwrap();
    assert_eq!(episodes.len(), 6);
    let mut collisions = 0;
    for episode in episodes {
        let continuous = episode["continuous"].as_bool().unwrap();
        let mut env = SimpleSpread::new(1, continuous);
        env.reset(0);
        let agents = pairs(&episode["agent_positions"]);
        let landmarks = pairs(&episode["landmark_positions"]);
        let world = World {
            agent_positions: std::array::from_fn(|i| agents[i]),
            agent_velocities: Default::default(),
            landmark_positions: std::array::from_fn(|i| landmarks[i]),
        };
        env.set_world(0, world);
        let mut first = vec![0.0f32; AGENTS * OBSERVATION_DIM];
        for i in 0..AGENTS {
            env.worlds()[0].observe(i, &mut first[i * OBSERVATION_DIM..(i + 1) * OBSERVATION_DIM]);
        }
        assert_close(&first, &floats(&episode["initial_observations"]), 1e-6, "initial observation");
        for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
            let actions: Vec<f32> = floats(&step["actions"]).iter().map(|&a| a as f32).collect();
            let result = env.step(&actions);
            let what = format!("continuous={continuous} seed={} t={t}", episode["seed"]);
            assert_close(
                &result.next.observations,
                &floats(&step["observations"]),
                1e-5,
                &format!("{what} observations"),
            );
            let rewards = floats(&step["rewards"]);
            assert_close(&result.rewards, &rewards, 1e-5, &format!("{what} rewards"));
            assert_eq!(result.truncated[0], step["truncated"].as_bool().unwrap(), "{what} truncated");
            assert_eq!(result.terminated[0], step["terminated"].as_bool().unwrap(), "{what} terminated");
            collisions += usize::from(rewards.iter().any(|r| (r - rewards[0]).abs() > 1e-9));
        }
    }
    assert!(collisions > 0, "the fixtures exercise collisions");
}
