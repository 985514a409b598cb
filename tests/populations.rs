//! Population training over HTTP: a PBT population and a tournament run to the end
//! of their budgets on the job queue; every leaderboard score is re-measured here from the
//! checkpoint it names; exploits copy only evaluated checkpoints and run with the perturbed
//! hyperparameters (not the ones restored with the weights); the leader, a fusion and a
//! weighted ensemble promote into /v1/models; cancel stops a population.

mod common;

use common::start_server;
use reqwest::blocking::Client;
use rlsolver::api::state::ServerConfig;
use rlsolver::jobs::JobsConfig;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(120)).build().unwrap()
}

fn population(c: &Client, base: &str, id: &str) -> Value {
    c.get(format!("{base}/v1/populations/{id}")).send().unwrap().json().unwrap()
}

fn wait_until_ended(c: &Client, base: &str, id: &str, seconds: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut ended_at: Option<Instant> = None;
    loop {
        let p = population(c, base, id);
        if p["state"] != "running" {
            // The round that ends a population is filed a moment before its last job's row
            // settles: give the job counts up to 10 s to show nothing running.
            let settled = p["jobs"]["evaluation"]["running"].is_null() && p["jobs"]["member"]["running"].is_null();
            let since = *ended_at.get_or_insert_with(Instant::now);
            if settled || since.elapsed() > Duration::from_secs(10) {
                return p;
            }
        } else {
            assert!(Instant::now() < deadline, "population {id} still running after {seconds} s: {p}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Mean return of `episodes` greedy episodes of the checkpoint in `dir`, seeded by `seed`: the
/// test's own episode loop over the library's env and policy.
fn rescore(dir: &Path, episodes: usize, seed: u64) -> f64 {
    use rlsolver::drl::algorithms::Learner;
    let (learner, env_id) =
        rlsolver::drl::run::load_checkpoint(dir, tch::Device::Cpu, &rlsolver::problems::envs(Default::default()))
            .unwrap();
    let Learner::Single(mut agent) = learner else { panic!("single-agent") };
    let mut env = rlsolver::problems::envs(Default::default()).make(&env_id, episodes).unwrap();
    let dim = env.observation_dim();
    let mut obs = env.reset(seed);
    let (mut total, mut done) = (vec![0.0f64; episodes], vec![false; episodes]);
    while done.iter().any(|d| !d) {
        let actions = rlsolver::drl::run::greedy_actions(&mut agent, &obs, dim);
        let step = env.step(&actions);
        for i in 0..episodes {
            if !done[i] {
                total[i] += f64::from(step.rewards[i]);
                done[i] = step.terminated[i] || step.truncated[i];
            }
        }
        obs = step.observations;
    }
    total.iter().sum::<f64>() / episodes as f64
}

/// The learning rate the optimizer of a whole-run checkpoint holds.
fn saved_learning_rate(dir: &Path) -> f64 {
    let state: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).unwrap()).unwrap();
    fn find(v: &Value) -> Option<f64> {
        match v {
            Value::Object(map) => {
                map.get("learning_rate").and_then(Value::as_f64).or_else(|| map.values().find_map(find))
            }
            Value::Array(items) => items.iter().find_map(find),
            Value::String(text) => serde_json::from_str::<Value>(text).ok().as_ref().and_then(find),
            _ => None,
        }
    }
    find(&state).expect("an optimizer learning rate in state.json")
}

fn request(scheme: &str, seed: u64) -> Value {
    json!({
        "algorithm": "dqn", "env": "CartPole-v1", "scheme": scheme, "size": 4,
        "total_steps": 12_000, "interval_steps": 1_000, "seed": seed, "eval_episodes": 5,
        "hyperparameters": {"learning_starts": 200},
        "explore": {"learning_rate": {"min": 1e-4, "max": 3e-3, "log": true}, "gamma": {"min": 0.9, "max": 0.999}},
    })
}

#[test]
fn a_pbt_population_spends_its_budget_and_its_leaderboard_rescores() {
    let data = std::env::temp_dir().join(format!("rlsolver-population-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    // One worker: rounds run in submission order (evaluations first), so the run is the same
    // every time.
    let config = ServerConfig { data_dir: data.clone(), ..ServerConfig::default() };
    let base = start_server(config);
    let c = client();
    let submitted = c.post(format!("{base}/v1/populations")).json(&request("pbt", 3)).send().unwrap();
    assert_eq!(submitted.status(), 202);
    let location = submitted.headers()["location"].to_str().unwrap().to_string();
    let id = location.rsplit('/').next().unwrap().to_string();
    let ended = wait_until_ended(&c, &base, &id, 300);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!((ended["rounds_done"].as_i64(), ended["rounds_total"].as_i64()), (Some(12), Some(12)));
    assert_eq!(ended["jobs"]["member"]["succeeded"], 12, "{}", ended["jobs"]);
    assert_eq!(ended["jobs"]["evaluation"]["succeeded"], 12, "{}", ended["jobs"]);
    let board = ended["leaderboard"].as_array().unwrap();
    assert_eq!(board.len(), 12);
    assert_eq!(ended["members"].as_array().unwrap().len(), 4);
    // Once it ended, the rounds' replay and optimizer tensors go (the policies stay).
    let folder = data.join("populations").join(&id);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_dir(&folder).unwrap().flatten().any(|r| r.path().join("state.safetensors").exists()) {
        assert!(Instant::now() < deadline, "whole-run states left in {}", folder.display());
        std::thread::sleep(Duration::from_millis(100));
    }
    let scores: Vec<f64> = board.iter().map(|e| e["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
    let mut exploits = 0;
    for entry in board {
        let dir = data.join(entry["checkpoint"].as_str().unwrap());
        let (member, round) = (entry["member"].as_u64().unwrap(), entry["round"].as_u64().unwrap());
        // The evaluator's score, re-measured from the checkpoint on the evaluator's seed.
        let evaluation = rlsolver::jobs::population::EvaluationRound {
            population: id.clone(),
            member: member as usize,
            round: round as usize,
            steps: 0,
            hyperparameters: Value::Null,
            origin: Value::Null,
            checkpoint: String::new(),
        };
        let population: rlsolver::jobs::population::PopulationRequest =
            serde_json::from_value(request("pbt", 3)).unwrap();
        let again = rescore(&dir, 5, evaluation.seed(&population));
        assert!((again - entry["score"].as_f64().unwrap()).abs() < 1e-6, "{entry}: rescored {again}");
        // Every round trained its interval on top of its source's steps.
        assert_eq!(entry["steps"].as_u64().unwrap() % 1_000, 0, "{entry}");
        assert!(entry["steps"].as_u64().unwrap() >= (round + 1) * 1_000, "{entry}");
        // The round ran with its own hyperparameters, also after restoring a copied checkpoint.
        let lr = entry["hyperparameters"]["learning_rate"].as_f64().unwrap();
        assert!((1e-4..=3e-3).contains(&lr), "{entry}");
        assert!(
            (saved_learning_rate(&dir) - lr).abs() < 1e-12,
            "{entry}: the optimizer ran at {}",
            saved_learning_rate(&dir)
        );
        let config: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
        assert_eq!(config["overrides"], entry["hyperparameters"], "{entry}");
        if entry["origin"]["action"] == "exploit" {
            exploits += 1;
            // The donor was on the board, evaluated, before this round started.
            let from = &entry["origin"]["from"];
            let donor = board
                .iter()
                .find(|d| d["member"] == from["member"] && d["round"] == from["round"])
                .expect("an exploit copies an evaluated round");
            assert!(donor["evaluated_at"].as_f64().unwrap() < entry["evaluated_at"].as_f64().unwrap());
            assert_ne!(donor["hyperparameters"], entry["hyperparameters"], "explored: {entry}");
        }
    }
    assert!(exploits >= 1, "8 decisions over 4 members without one exploit: {board:?}");
    println!("{exploits} exploits in 8 decisions");

    // The leader promotes and lists like any model; a fusion promotes only when it helps.
    let leader = c
        .post(format!("{base}/v1/populations/{id}/models"))
        .json(&json!({"name": "pbt-leader", "method": "leader"}))
        .send()
        .unwrap();
    assert_eq!(leader.status(), 201);
    let manifest: Value = leader.json().unwrap();
    assert_eq!(manifest["metrics"]["leader"]["score"], board[0]["score"], "{manifest}");
    let models: Value = c.get(format!("{base}/v1/models")).send().unwrap().json().unwrap();
    assert!(models["models"].as_array().unwrap().iter().any(|m| m["name"] == "pbt-leader"));
    let fusion = c
        .post(format!("{base}/v1/populations/{id}/models"))
        .json(&json!({"name": "pbt-fusion", "method": "fusion"}))
        .send()
        .unwrap();
    let status = fusion.status().as_u16();
    let body: Value = fusion.json().unwrap();
    // The fusion itself, run here on the same leaderboard: the service promotes it exactly when
    // it scores at least the leader on the same fresh episodes, and says so otherwise.
    let entries: Vec<rlsolver::store::Entry> = board
        .iter()
        .map(|e| rlsolver::store::Entry {
            member: e["member"].as_i64().unwrap(),
            round: e["round"].as_i64().unwrap(),
            steps: e["steps"].as_i64().unwrap(),
            score: e["score"].as_f64().unwrap(),
            score_std: e["score_std"].as_f64().unwrap(),
            hyperparameters: e["hyperparameters"].clone(),
            origin: e["origin"].clone(),
            checkpoint: e["checkpoint"].as_str().unwrap().to_string(),
            evaluated_at: e["evaluated_at"].as_f64().unwrap(),
        })
        .collect();
    let population: rlsolver::jobs::population::PopulationRequest = serde_json::from_value(request("pbt", 3)).unwrap();
    let staging = data.join("fusion-here");
    let here = rlsolver::jobs::ensemble::fuse(&data, &population, &entries, 4, &staging, &Default::default()).unwrap();
    eprintln!("fusion of {:?}: {} against the leader's {}", here.members, here.fused_score, here.leader_score);
    assert!(here.members.len() >= 2, "the leader shares its ancestor with no other member: {board:?}");
    if here.helps() {
        assert_eq!(status, 201, "{body}");
        let report = &body["metrics"]["fusion"];
        assert_eq!(report["fused_score"].as_f64(), Some(here.fused_score), "{body}");
        let dir = data.join("models/pbt-fusion");
        let again = rescore(&dir, report["episodes"].as_u64().unwrap() as usize, report["seed"].as_u64().unwrap());
        assert!((again - here.fused_score).abs() < 1e-6, "{body}");
    } else {
        assert_eq!((status, body["field"].as_str()), (422, Some("method")), "{body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("{:.3}", here.fused_score)), "{detail}");
    }
    // The weighted ensemble of the 3 best members serves as one policy; its score re-measures.
    let weighted = c
        .post(format!("{base}/v1/populations/{id}/models"))
        .json(&json!({"name": "pbt-weighted", "method": "weighted", "members": 3}))
        .send()
        .unwrap();
    assert_eq!(weighted.status(), 201);
    let manifest: Value = weighted.json().unwrap();
    let report = &manifest["metrics"]["weighted"];
    let weights: Vec<f64> = report["weights"].as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
    assert_eq!(weights.len(), 3);
    assert!((weights.iter().sum::<f64>() - 1.0).abs() < 1e-9 && weights.windows(2).all(|w| w[0] >= w[1]), "{report}");
    assert!(manifest["files"].as_object().unwrap().contains_key("member2.config.json"), "{manifest}");
    let dir = data.join("models/pbt-weighted");
    let again = rescore(&dir, report["episodes"].as_u64().unwrap() as usize, report["seed"].as_u64().unwrap());
    assert!((again - report["ensemble_score"].as_f64().unwrap()).abs() < 1e-6, "{report}: rescored {again}");
    let bad = c
        .post(format!("{base}/v1/populations/{id}/models"))
        .json(&json!({"name": "x", "method": "vote"}))
        .send()
        .unwrap();
    assert_eq!(bad.status(), 422);
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn a_tournament_generates_from_the_leaderboard_and_a_cancel_stops_a_population() {
    let config = ServerConfig { jobs: JobsConfig { workers: 2, ..JobsConfig::default() }, ..ServerConfig::default() };
    let base = start_server(config);
    let c = client();
    let submitted: Value =
        c.post(format!("{base}/v1/populations")).json(&request("tournament", 5)).send().unwrap().json().unwrap();
    let id = submitted["id"].as_str().unwrap().to_string();
    assert_eq!(submitted["rounds_scheduled"], 4, "{submitted}");
    let ended = wait_until_ended(&c, &base, &id, 300);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let board = ended["leaderboard"].as_array().unwrap();
    assert_eq!(board.len(), 12);
    let generated: Vec<&Value> = board.iter().filter(|e| e["origin"]["action"] == "generate").collect();
    assert!(!generated.is_empty(), "a tournament of 4 rounds generated no member: {board:?}");
    for entry in generated {
        // Generated from the board's best at the time: a round evaluated before it.
        let from = &entry["origin"]["from"];
        assert!(board.iter().any(|d| d["member"] == from["member"] && d["round"] == from["round"]), "{entry}");
    }

    let mut long = request("pbt", 9);
    long["total_steps"] = json!(400_000);
    long["interval_steps"] = json!(100_000);
    let submitted: Value = c.post(format!("{base}/v1/populations")).json(&long).send().unwrap().json().unwrap();
    let id = submitted["id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(c.delete(format!("{base}/v1/populations/{id}")).send().unwrap().status(), 202);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let p = population(&c, &base, &id);
        assert_eq!(p["state"], "cancelled");
        let jobs = &p["jobs"]["member"];
        if jobs["running"].is_null() && jobs["queued"].is_null() {
            assert_eq!(jobs["cancelled"], 4, "{p}");
            break;
        }
        assert!(Instant::now() < deadline, "{p}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(c.delete(format!("{base}/v1/populations/{id}")).send().unwrap().status(), 409);
    let bad: Value = c
        .post(format!("{base}/v1/populations"))
        .json(&json!({"algorithm": "dqn", "env": "CartPole-v1", "scheme": "pbt", "size": 4, "total_steps": 8000,
            "interval_steps": 1000, "explore": {"hidden": {"min": 8, "max": 64}}}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!((bad["status"].as_u64(), bad["field"].as_str()), (Some(422), Some("explore.hidden")), "{bad}");
}
