//! The learner/rollout split (Ape-X): a learner replica owns the replay and the
//! updates; two rollout processes of the binary stream binary transition batches to it and load
//! its published weights; both stop when the learner's update budget is spent. Bad batches get
//! a 422 naming the body.

mod common;

use common::start_server;
use rlsolver::api::state::{Role, ServerConfig};
use rlsolver::drl::apex::wire::Transitions;
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::{Duration, Instant};

const UPDATES: usize = 1500;

#[test]
fn two_rollouts_feed_one_learner_until_its_updates_are_spent() {
    let learn = serde_json::from_value(json!({
        "algorithm": "dqn", "env": "CartPole-v1", "seed": 4, "updates": UPDATES, "broadcast_every": 50,
        "send_every": 128, "eval_episodes": 10, "hyperparameters": {"learning_starts": 300},
    }))
    .unwrap();
    let base = start_server(ServerConfig { role: Role::Learner, learn: Some(learn), ..ServerConfig::default() });
    let c = reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let status: Value = c.get(format!("{base}/v1/learner")).send().unwrap().json().unwrap();
    assert_eq!((status["observation_dim"].as_u64(), status["action_width"].as_u64()), (Some(4), Some(1)));
    assert_eq!(status["updates"], 0);
    let weights = c.get(format!("{base}/v1/learner/weights")).send().unwrap();
    assert_eq!(weights.headers()["x-weights-version"], "0");
    assert!(!weights.bytes().unwrap().is_empty());

    // Malformed and mismatched batches are refused before they reach the replay.
    let post = |body: Vec<u8>| {
        c.post(format!("{base}/v1/learner/transitions"))
            .header("content-type", "application/octet-stream")
            .body(body)
            .send()
            .unwrap()
    };
    common::expect_422(post(b"{\"obs\": [1, 2], \"actions\": [0]}".to_vec()), "body", "RLTX");
    common::expect_422(post(b"RLTX".to_vec()), "body", "header");
    let mut wide = Transitions::new(3, 1);
    wide.push(&[0.0; 3], &[0.0], 1.0, &[0.0; 3], false);
    common::expect_422(post(wide.encode()), "body", "observations of 4");

    let data = std::env::temp_dir().join(format!("rlsolver-apex-{}", std::process::id()));
    // Both at once (a rollout whose learner is already done exits at its first batch).
    let rollouts: Vec<_> = ["r1", "r2"]
        .iter()
        .map(|name| {
            std::process::Command::new(env!("CARGO_BIN_EXE_rlsolver"))
                .args(["serve", "--port", "0", "--role", "rollout", "--learner-url", &base, "--replica", name])
                .arg("--data-dir")
                .arg(data.join(name))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    let done = loop {
        let status: Value = c.get(format!("{base}/v1/learner")).send().unwrap().json().unwrap();
        if status["done"] == true {
            break status;
        }
        assert!(Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done["updates"], UPDATES, "{done}");
    assert_eq!(done["weights_version"], UPDATES, "{done}");
    assert!(done["error"].is_null(), "{done}");
    let by = &done["by_rollout"];
    for name in ["r1", "r2"] {
        assert!(by[name].as_u64().unwrap() >= 128, "{name} sent nothing: {done}");
    }
    let total: u64 = by.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(done["transitions"].as_u64(), Some(total), "{done}");
    let final_return = done["final_return"].as_f64().unwrap();
    // The replay's contents depend on how fast the rollouts run against the learner, so the
    // return varies from run to run with the same seed: 23 runs on 2 cores (18 of them beside a
    // busy loop) and one on CI gave median 206, worst 120, the CI run (random 22). Twice the
    // updates did not narrow it (118-241 over 8 runs): DQN's greedy return at this budget
    // oscillates.
    let random = common::random_return("CartPole-v1");
    eprintln!("final return {final_return}, random {random}");
    assert!(final_return >= random + 60.0, "the split did not learn: {final_return} (random {random}): {done}");
    // The rollouts end by themselves once the learner is done.
    for mut rollout in rollouts {
        let deadline = Instant::now() + Duration::from_secs(30);
        while rollout.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "a rollout kept running after the learner was done");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let _ = std::fs::remove_dir_all(&data);
}
