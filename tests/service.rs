//! The service's jobs over HTTP: a training job runs to completion with its event stream, its
//! artifacts download and load; cancel, API keys, a full queue; a crashed server (SIGKILL) keeps
//! finished jobs and resumes the interrupted one from its checkpoint, and a stopped one (SIGTERM)
//! hands its running job back to the queue.

mod common;

use common::start_server;
use reqwest::blocking::Client;
use rlsolver::api::state::ServerConfig;
use rlsolver::jobs::JobsConfig;
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(120)).build().unwrap()
}

/// A client that sends `Authorization: Bearer <key>` with every request.
fn keyed_client(key: &str) -> Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {key}").parse().unwrap());
    Client::builder().timeout(Duration::from_secs(120)).default_headers(headers).build().unwrap()
}

fn submit(c: &Client, base: &str, key: Option<&str>, body: Value) -> reqwest::blocking::Response {
    let mut request = c.post(format!("{base}/v1/training/jobs")).json(&body);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    request.send().unwrap()
}

fn job(c: &Client, base: &str, id: &str) -> Value {
    c.get(format!("{base}/v1/training/jobs/{id}")).send().unwrap().json().unwrap()
}

/// Polls the job until `done(job)` or the deadline.
fn wait_for(c: &Client, base: &str, id: &str, seconds: u64, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let j = job(c, base, id);
        if done(&j) {
            return j;
        }
        assert!(Instant::now() < deadline, "job {id} did not get there in {seconds} s: {j}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn download(c: &Client, base: &str, id: &str, name: &str, dir: &Path) {
    let response = c.get(format!("{base}/v1/training/jobs/{id}/artifacts/{name}")).send().unwrap();
    assert_eq!(response.status(), 200, "{name}");
    std::fs::write(dir.join(name), response.bytes().unwrap()).unwrap();
}

#[test]
fn a_training_job_streams_its_progress_and_its_artifacts_download_and_load() {
    let base = start_server(ServerConfig::default());
    let c = client();
    let response = submit(
        &c,
        &base,
        None,
        json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 12_000, "eval_every": 3_000, "seed": 1}),
    );
    assert_eq!(response.status(), 202);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let id = response.json::<Value>().unwrap()["id"].as_str().unwrap().to_string();
    assert_eq!(location, format!("/v1/training/jobs/{id}"));
    // The stream ends when the job does.
    let mut stream = String::new();
    c.get(format!("{base}{location}/events")).send().unwrap().read_to_string(&mut stream).unwrap();
    assert!(stream.starts_with("event: state"), "{stream}");
    assert!(stream.contains("event: evaluation"), "{stream}");
    assert!(
        stream.trim_end().lines().rev().find(|l| l.starts_with("data:")).unwrap().contains("\"succeeded\""),
        "{stream}"
    );
    let finished = job(&c, &base, &id);
    assert_eq!(finished["state"], "succeeded", "{finished}");
    assert!(finished["steps"].as_i64().unwrap() >= 12_000);
    let curve: Vec<Value> = c.get(format!("{base}{location}/metrics")).send().unwrap().json().unwrap();
    assert_eq!(curve.len(), 4, "{curve:?}");
    assert_eq!(finished["latest"], curve[3]);
    // Download the checkpoint and load it as a policy.
    let dir = std::env::temp_dir().join(format!("rlsolver-artifacts-{id}"));
    std::fs::create_dir_all(&dir).unwrap();
    let artifacts: Vec<String> = serde_json::from_value(finished["artifacts"].clone()).unwrap();
    assert!(artifacts.contains(&"actor_critic.safetensors".to_string()), "{artifacts:?}");
    for name in &artifacts {
        download(&c, &base, &id, name, &dir);
    }
    let (mut learner, env) =
        rlsolver::drl::run::load_checkpoint(&dir, tch::Device::Cpu, &rlsolver::problems::envs(Default::default()))
            .unwrap();
    let (mean, _) = rlsolver::drl::run::evaluate_learner(
        &mut learner,
        &env,
        &serde_json::Value::Null,
        5,
        7,
        tch::Device::Cpu,
        &rlsolver::problems::envs(Default::default()),
    )
    .unwrap();
    assert!(mean > 50.0, "the downloaded policy scores {mean} on CartPole (random: ~22)");
    assert_eq!(c.get(format!("{base}{location}/artifacts/..%2Fconfig.json")).send().unwrap().status(), 404);
    let _ = std::fs::remove_dir_all(&dir);
    // Promote the policy into the model registry.
    let name = format!("cartpole-ppo-{}", std::process::id());
    let promote = |body: Value| c.post(format!("{base}/v1/models")).json(&body).send().unwrap();
    let created = promote(json!({"job_id": id, "name": name}));
    assert_eq!(created.status(), 201);
    assert_eq!(created.headers()["location"], format!("/v1/models/{name}").as_str());
    let manifest: Value = c.get(format!("{base}/v1/models/{name}")).send().unwrap().json().unwrap();
    assert_eq!(
        (manifest["problem"].as_str(), manifest["architecture"]["env"].as_str()),
        (Some("drl"), Some("CartPole-v1")),
        "{manifest}"
    );
    assert!(manifest["files"]["actor_critic.safetensors"].is_string(), "{manifest}");
    let listed: Value = c.get(format!("{base}/v1/models")).send().unwrap().json().unwrap();
    assert!(listed["models"].as_array().unwrap().iter().any(|m| m["name"] == name.as_str()));
    assert_eq!(promote(json!({"job_id": id, "name": name})).status(), 409);
    let bad_name: Value = promote(json!({"job_id": id, "name": "../x"})).json().unwrap();
    assert_eq!((bad_name["status"].as_u64(), bad_name["field"].as_str()), (Some(422), Some("name")), "{bad_name}");
    assert_eq!(promote(json!({"job_id": "nope", "name": "other"})).status(), 404);
}

#[test]
fn a_multi_agent_job_is_promoted_with_its_policy_and_without_its_run_state() {
    let base = start_server(ServerConfig::default());
    let c = client();
    let body = json!({"algorithm": "vdn", "env": "two_step", "total_steps": 800, "eval_every": 400, "seed": 2});
    let response = submit(&c, &base, None, body);
    assert_eq!(response.status(), 202);
    let id = response.json::<Value>().unwrap()["id"].as_str().unwrap().to_string();
    let finished = wait_for(&c, &base, &id, 120, |j| j["state"] != "queued" && j["state"] != "running");
    assert_eq!(finished["state"], "succeeded", "{finished}");
    let name = format!("two-step-vdn-{}", std::process::id());
    let created = c.post(format!("{base}/v1/models")).json(&json!({"job_id": id, "name": name})).send().unwrap();
    assert_eq!(created.status(), 201);
    let manifest: Value = created.json().unwrap();
    let files = manifest["files"].as_object().unwrap();
    assert!(files.contains_key("online.safetensors") && files.contains_key("config.json"), "{manifest}");
    assert!(!files.contains_key("state.safetensors"), "the replay and moments stay with the job: {manifest}");
}

#[test]
fn keys_guard_mutations_a_full_queue_answers_429_and_cancel_ends_queued_and_running_jobs() {
    let config = ServerConfig {
        api_keys: vec![rlsolver::api::auth::KeyEntry::parse("secret").unwrap()],
        jobs: JobsConfig { workers: 1, max_queued: 1, ..JobsConfig::default() },
        ..ServerConfig::default()
    };
    let base = start_server(config);
    let c = client();
    let long = json!({"algorithm": "dqn", "env": "CartPole-v1", "total_steps": 5_000_000});
    assert_eq!(submit(&c, &base, None, long.clone()).status(), 401);
    let wrong = submit(&c, &base, Some("guess"), long.clone());
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.headers()["content-type"], "application/problem+json");
    // RFC 6750 section 3: a 401 names the scheme the client must use.
    assert_eq!(wrong.headers().get("www-authenticate").map(|v| v.to_str().unwrap()), Some("Bearer"));
    // Reads need a key too; the keyed client reads.
    assert_eq!(c.get(format!("{base}/v1/training/jobs")).send().unwrap().status(), 401);
    let keyed = keyed_client("secret");
    assert_eq!(keyed.get(format!("{base}/v1/training/jobs")).send().unwrap().status(), 200);
    let invalid: Value =
        submit(&c, &base, Some("secret"), json!({"algorithm": "dqn", "env": "Pendulum-v1", "total_steps": 10}))
            .json()
            .unwrap();
    assert_eq!((invalid["status"].as_u64(), invalid["field"].as_str()), (Some(422), Some("env")), "{invalid}");
    // Networks that would need tens of gigabytes are refused before anything is allocated.
    let huge = json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 1000,
        "hyperparameters": {"hidden": [100000, 100000]}});
    let huge: Value = submit(&c, &base, Some("secret"), huge).json().unwrap();
    assert_eq!(
        (huge["status"].as_u64(), huge["field"].as_str()),
        (Some(422), Some("hyperparameters.hidden")),
        "{huge}"
    );
    assert!(huge["detail"].as_str().unwrap().contains("--max-training-parameters"), "{huge}");
    let running: Value = submit(&c, &base, Some("secret"), long.clone()).json().unwrap();
    let running_id = running["id"].as_str().unwrap().to_string();
    wait_for(&keyed, &base, &running_id, 30, |j| j["state"] == "running");
    let queued: Value = submit(&c, &base, Some("secret"), long.clone()).json().unwrap();
    let full = submit(&c, &base, Some("secret"), long.clone());
    assert_eq!(full.status(), 429);
    assert!(full.headers().contains_key("retry-after"));
    let queued_id = queued["id"].as_str().unwrap();
    let cancel =
        |id: &str, key: &str| c.delete(format!("{base}/v1/training/jobs/{id}")).bearer_auth(key).send().unwrap();
    assert_eq!(cancel(queued_id, "guess").status(), 401);
    assert_eq!(cancel(queued_id, "secret").status(), 202);
    assert_eq!(job(&keyed, &base, queued_id)["state"], "cancelled");
    // The cancelled job frees its place in the queue at once, while the worker is still busy.
    let replacement = submit(&c, &base, Some("secret"), long.clone());
    assert_eq!(replacement.status(), 202);
    let replacement: Value = replacement.json().unwrap();
    assert_eq!(cancel(replacement["id"].as_str().unwrap(), "secret").status(), 202);
    assert_eq!(cancel(&running_id, "secret").status(), 202);
    let ended = wait_for(&keyed, &base, &running_id, 30, |j| j["state"] == "cancelled");
    assert!(ended["steps"].as_i64().unwrap() < 5_000_000);
    assert_eq!(cancel(&running_id, "secret").status(), 409);
    let metrics = c.get(format!("{base}/metrics")).send().unwrap().text().unwrap();
    assert!(
        metrics.contains("rlsolver_http_requests_total{method=\"POST\",route=\"/v1/training/jobs\",status=\"401\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("rlsolver_jobs{kind=\"training\",state=\"cancelled\"} 3"), "{metrics}");
}

/// The binary serving on a free port with `data_dir`; killed (SIGKILL) on drop.
struct Server;

impl Server {
    fn start(data_dir: &Path) -> common::ServeProcess {
        common::ServeProcess::start(&[], data_dir, Stdio::null())
    }
}

#[test]
fn a_crash_keeps_finished_jobs_and_the_interrupted_job_resumes_from_its_checkpoint() {
    let data = std::env::temp_dir().join(format!("rlsolver-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let c = client();
    let (finished_id, interrupted_id, checkpoint_step) = {
        let server = Server::start(&data);
        let base = &server.base;
        let short: Value = submit(
            &c,
            base,
            None,
            json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 4_000, "eval_every": 2_000}),
        )
        .json()
        .unwrap();
        let short_id = short["id"].as_str().unwrap().to_string();
        wait_for(&c, base, &short_id, 60, |j| j["state"] == "succeeded");
        let promoted = c
            .post(format!("{base}/v1/models"))
            .json(&json!({"job_id": short_id, "name": "restart-ppo"}))
            .send()
            .unwrap();
        assert_eq!(promoted.status(), 201);
        let long: Value = submit(
            &c,
            base,
            None,
            json!({"algorithm": "dqn", "env": "CartPole-v1", "total_steps": 2_000_000, "eval_every": 3_000}),
        )
        .json()
        .unwrap();
        let long_id = long["id"].as_str().unwrap().to_string();
        let running = wait_for(&c, base, &long_id, 60, |j| j["latest"]["step"].as_i64().is_some());
        (short_id, long_id, running["latest"]["step"].as_i64().unwrap())
        // SIGKILL here: no shutdown path runs.
    };
    let server = Server::start(&data);
    let base = &server.base;
    let finished = job(&c, base, &finished_id);
    assert_eq!(finished["state"], "succeeded", "{finished}");
    let weights =
        c.get(format!("{base}/v1/training/jobs/{finished_id}/artifacts/actor_critic.safetensors")).send().unwrap();
    assert_eq!(weights.status(), 200);
    assert!(weights.bytes().unwrap().len() > 1000);
    let promoted: Value = c.get(format!("{base}/v1/models/restart-ppo")).send().unwrap().json().unwrap();
    assert_eq!(promoted["problem"], "drl", "the promoted model survives the restart: {promoted}");
    let resumed = wait_for(&c, base, &interrupted_id, 60, |j| {
        j["state"] == "running" && j["steps"].as_i64().unwrap_or(0) > checkpoint_step
    });
    assert_eq!(resumed["restarts"], 1, "{resumed}");
    // The curve kept the evaluations from before the crash and continues after the checkpoint.
    let next = wait_for(&c, base, &interrupted_id, 60, |j| j["latest"]["step"].as_i64().unwrap_or(0) > checkpoint_step);
    let curve: Vec<Value> =
        c.get(format!("{base}/v1/training/jobs/{interrupted_id}/metrics")).send().unwrap().json().unwrap();
    assert!(curve.iter().any(|e| e["step"].as_i64() == Some(checkpoint_step)), "{curve:?}");
    assert_eq!(curve.last().unwrap()["step"], next["latest"]["step"]);
    assert_eq!(c.delete(format!("{base}/v1/training/jobs/{interrupted_id}")).send().unwrap().status(), 202);
    wait_for(&c, base, &interrupted_id, 30, |j| j["state"] == "cancelled");
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}

/// SIGTERM with a training job running and its event stream open: the job stops and goes back
/// to the queue as `interrupted` (its stream ends with that state), the process exits by itself
/// with success and without a panic, and the next server on the store resumes the job from its
/// checkpoint.
#[test]
fn sigterm_hands_a_running_training_job_back_to_the_queue_and_the_next_server_resumes_it() {
    let data = std::env::temp_dir().join(format!("rlsolver-sigterm-job-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    let log_path = data.join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut server = common::ServeProcess::start(&["--shutdown-drain-s", "1"], &data, Stdio::from(log));
    let (base, c) = (server.base.clone(), client());
    let long: Value = submit(
        &c,
        &base,
        None,
        json!({"algorithm": "dqn", "env": "CartPole-v1", "total_steps": 2_000_000, "eval_every": 3_000}),
    )
    .json()
    .unwrap();
    let id = long["id"].as_str().unwrap().to_string();
    let checkpoint_step =
        wait_for(&c, &base, &id, 60, |j| j["latest"]["step"].as_i64().is_some())["latest"]["step"].as_i64().unwrap();
    let stream = {
        let url = format!("{base}/v1/training/jobs/{id}/events");
        std::thread::spawn(move || client().get(url).send().unwrap().text().unwrap())
    };
    std::thread::sleep(Duration::from_millis(500));
    server.terminate();
    server.exits_by_itself("the server kept running with the job's stream open");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(!log.contains("panicked"), "{log}");
    let events = stream.join().unwrap();
    assert!(events.contains(r#"{"state":"interrupted"}"#), "{events}");
    let row = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = rlsolver::store::Store::open(&data).await.unwrap();
        store.job(&id).await.unwrap().unwrap()
    });
    assert_eq!((row.state, row.restarts, row.runner), (rlsolver::store::JobState::Interrupted, 1, None));
    drop(server);
    let server = Server::start(&data);
    let base = &server.base;
    let resumed =
        wait_for(&c, base, &id, 60, |j| j["state"] == "running" && j["steps"].as_i64().unwrap_or(0) > checkpoint_step);
    assert_eq!(resumed["restarts"], 1, "{resumed}");
    common::cancel_training_job(base, &id);
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn a_solve_job_streams_incumbents_and_ends_with_the_report_and_cancel_keeps_the_best_so_far() {
    let base = start_server(ServerConfig::default());
    let c = client();
    let instance_of = |nodes: usize, edges: usize| {
        let edges: Vec<Value> = common::random_gset(nodes, edges, 3)
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                json!([f[0] - 1, f[1] - 1, f[2]])
            })
            .collect();
        json!({"num_nodes": nodes, "edges": edges})
    };
    let instance = instance_of(120, 600);
    let post = |body: Value| c.post(format!("{base}/v1/solve/jobs")).json(&body).send().unwrap();
    let bad: Value =
        post(json!({"problem": "maxcut", "instance": {"num_nodes": 2, "edges": [[0, 5, 1]]}})).json().unwrap();
    assert_eq!((bad["status"].as_u64(), bad["field"].as_str()), (Some(422), Some("instance.edges[0]")), "{bad}");
    let unknown: Value = post(json!({"problem": "nope", "instance": {}})).json().unwrap();
    assert_eq!(unknown["field"], "problem", "{unknown}");
    // The native text format goes as `instance_text`: exactly one of the two, each error named.
    let neither: Value = post(json!({"problem": "maxcut"})).json().unwrap();
    assert_eq!((neither["status"].as_u64(), neither["field"].as_str()), (Some(422), Some("instance")), "{neither}");
    let both: Value =
        post(json!({"problem": "maxcut", "instance": instance_of(4, 3), "instance_text": "4 0\n"})).json().unwrap();
    assert_eq!((both["status"].as_u64(), both["field"].as_str()), (Some(422), Some("instance_text")), "{both}");
    let bad_text: Value = post(json!({"problem": "maxcut", "instance_text": "3 1\n1 7 1\n"})).json().unwrap();
    assert_eq!(bad_text["status"], 422, "{bad_text}");
    assert!(bad_text["field"].as_str().unwrap().starts_with("instance_text"), "{bad_text}");
    let gset = common::random_gset(40, 80, 9);
    let text = post(json!({"problem": "maxcut", "instance_text": gset, "options": {"time_limit_s": 0.5, "seed": 2}}));
    assert_eq!(text.status(), 202);
    let text_id = text.json::<Value>().unwrap()["id"].as_str().unwrap().to_string();
    let accepted = post(json!({"problem": "maxcut", "instance": instance, "options": {"time_limit_s": 2, "seed": 1}}));
    assert_eq!(accepted.status(), 202);
    let location = accepted.headers()["location"].to_str().unwrap().to_string();
    let mut stream = String::new();
    c.get(format!("{base}{location}/events")).send().unwrap().read_to_string(&mut stream).unwrap();
    assert!(stream.contains("event: incumbent"), "{stream}");
    let done: Value = c.get(format!("{base}{location}")).send().unwrap().json().unwrap();
    assert_eq!(done["state"], "succeeded", "{done}");
    let incumbents: Vec<Value> = c.get(format!("{base}{location}/incumbents")).send().unwrap().json().unwrap();
    let objectives: Vec<f64> = incumbents.iter().map(|p| p["objective"].as_f64().unwrap()).collect();
    assert!(objectives.windows(2).all(|w| w[1] > w[0]), "incumbents improve: {objectives:?}");
    assert_eq!(done["result"]["objective"].as_f64(), objectives.last().copied(), "{done}");
    // The stream, opened before the job ended, carried every recorded incumbent once, in order.
    assert_eq!(common::streamed_objectives(&stream), objectives, "{stream}");
    // The text job's answer, re-scored from the Gset text it was given.
    let mut text_stream = String::new();
    c.get(format!("{base}/v1/solve/jobs/{text_id}/events")).send().unwrap().read_to_string(&mut text_stream).unwrap();
    let text_done: Value = c.get(format!("{base}/v1/solve/jobs/{text_id}")).send().unwrap().json().unwrap();
    assert_eq!(text_done["state"], "succeeded", "{text_done}");
    let cut = common::cut_of(&common::gset_edges(&gset).1, &common::sides(&text_done["result"]["solution"]));
    assert_eq!(text_done["result"]["objective"].as_f64(), Some(cut), "{text_done}");
    // A long solve, cancelled: it ends at once with its best so far. 1,000 nodes, so that the
    // patience (1.5 n^2 sweeps, ~20 s here) does not end it first.
    let large = instance_of(1000, 4000);
    let long: Value =
        post(json!({"problem": "maxcut", "instance": large, "options": {"time_limit_s": 60}})).json().unwrap();
    let id = long["id"].as_str().unwrap();
    let started = Instant::now();
    loop {
        let current: Value = c.get(format!("{base}/v1/solve/jobs/{id}")).send().unwrap().json().unwrap();
        if current["latest"].is_object() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no incumbent: {current}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(c.delete(format!("{base}/v1/solve/jobs/{id}")).send().unwrap().status(), 202);
    let deadline = Instant::now() + Duration::from_secs(20);
    let cancelled = loop {
        let current: Value = c.get(format!("{base}/v1/solve/jobs/{id}")).send().unwrap().json().unwrap();
        if current["state"] == "cancelled" {
            break current;
        }
        assert!(Instant::now() < deadline, "{current}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(started.elapsed() < Duration::from_secs(30));
    // The kept answer is the last incumbent the job filed, and it re-scores from the edges.
    let objective = cancelled["result"]["objective"].as_f64().unwrap();
    let filed: Vec<Value> = c.get(format!("{base}/v1/solve/jobs/{id}/incumbents")).send().unwrap().json().unwrap();
    assert_eq!(filed.last().and_then(|p| p["objective"].as_f64()), Some(objective), "{cancelled}");
    let edges = common::gset_edges(&common::random_gset(1000, 4000, 3)).1;
    assert_eq!(objective, common::cut_of(&edges, &common::sides(&cancelled["result"]["solution"])), "{cancelled}");
}

/// SIGTERM during a long solve: `/ready` turns 503 at once while `/health` still answers (the
/// drain period), the running solve finishes with its whole answer after the listener closed,
/// and the process then exits by itself with success.
#[test]
fn sigterm_turns_ready_to_503_and_lets_a_running_solve_finish() {
    let data = std::env::temp_dir().join(format!("rlsolver-sigterm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut server = common::ServeProcess::start(&["--shutdown-drain-s", "2"], &data, Stdio::null());
    let base = server.base.clone();
    let gset = common::random_gset(2000, 8000, 7);
    let solving = {
        let (base, gset) = (base.clone(), gset.clone());
        std::thread::spawn(move || {
            let response = client()
                .post(format!("{base}/v1/problems/maxcut/solve?time_limit_s=4&seed=1"))
                .header("content-type", "text/plain")
                .body(gset)
                .send()
                .unwrap();
            (response.status().as_u16(), response.json::<Value>().unwrap())
        })
    };
    std::thread::sleep(Duration::from_millis(1000));
    assert!(!solving.is_finished(), "the solve ended before the signal");
    server.terminate();
    std::thread::sleep(Duration::from_millis(300));
    let c = client();
    assert_eq!(c.get(format!("{base}/ready")).send().unwrap().status(), 503);
    assert_eq!(c.get(format!("{base}/health")).send().unwrap().status(), 200);
    let (status, answer) = solving.join().unwrap();
    assert_eq!(status, 200, "{answer}");
    let (_, edges) = common::gset_edges(&gset);
    assert_eq!(
        answer["objective"].as_f64(),
        Some(common::cut_of(&edges, &common::sides(&answer["solution"]))),
        "{answer}"
    );
    server.exits_by_itself("the server kept running after its last request");
    assert!(c.get(format!("{base}/health")).send().is_err(), "the listener is closed");
    let _ = std::fs::remove_dir_all(&data);
}
