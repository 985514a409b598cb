//! Several `rlsolver serve` processes on one PostgreSQL store: a job whose replica is
//! killed (SIGKILL) is taken over by another once its lease lapses and resumes from its last
//! checkpoint; a cancel through one replica stops the job running on another; an API replica
//! (`--role api`) accepts jobs that worker replicas (`--role worker`) run; 50 jobs survive workers
//! killed every 2 s; a replica cut off from the database keeps its job; a stopped (SIGTERM)
//! replica hands its job to another and ends its event streams. Needs the test
//! PostgreSQL server (see tests/common: skipped without one, failing under CI=true).

mod common;

use reqwest::blocking::Client;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(30)).build().unwrap()
}

/// A replica serving on a free port; killed (SIGKILL) on drop.
struct Replica;

impl Replica {
    /// `role`: all, api or worker.
    fn start(name: &str, database_url: &str, data_dir: &Path, role: &str) -> common::ServeProcess {
        // A 4 s lease, renewed every 1.3 s: wide enough that a busy 2-core machine renews in time.
        // A stopped (SIGTERM) replica drains for 1 s.
        let args = [
            "--replica",
            name,
            "--job-lease-s",
            "4",
            "--max-queued-jobs",
            "64",
            "--role",
            role,
            "--shutdown-drain-s",
            "1",
        ];
        common::ServeProcess::start(&[&args[..], &["--database-url", database_url]].concat(), data_dir, Stdio::null())
    }
}

fn job(base: &str, id: &str) -> Value {
    client().get(format!("{base}/v1/training/jobs/{id}")).send().unwrap().json().unwrap()
}

fn wait_for(base: &str, id: &str, seconds: u64, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let j = job(base, id);
        if done(&j) {
            return j;
        }
        assert!(Instant::now() < deadline, "job {id} did not get there in {seconds} s: {j}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn submit(base: &str, body: Value) -> String {
    let response = client().post(format!("{base}/v1/training/jobs")).json(&body).send().unwrap();
    assert_eq!(response.status(), 202);
    response.json::<Value>().unwrap()["id"].as_str().unwrap().to_string()
}

fn database(test: &str) -> Option<String> {
    tokio::runtime::Runtime::new().unwrap().block_on(common::fresh_postgres(test))
}

#[test]
fn a_job_on_a_killed_replica_resumes_on_another_and_a_cancel_crosses_replicas() {
    let Some(url) = database("takeover") else { return };
    let data = std::env::temp_dir().join(format!("rlsolver-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut a = Some(Replica::start("a", &url, &data, "all"));
    let b = Replica::start("b", &url, &data, "all");
    let base_a = a.as_ref().unwrap().base.clone();
    let id = submit(
        &base_a,
        json!({"algorithm": "dqn", "env": "CartPole-v1", "total_steps": 2_000_000, "eval_every": 3_000}),
    );
    // Through B: the store is shared, so either replica answers for the job.
    let running = wait_for(&b.base, &id, 60, |j| j["latest"]["step"].as_i64().is_some());
    let checkpoint_step = running["latest"]["step"].as_i64().unwrap();
    let first_runner = running["runner"].as_str().unwrap().to_string();
    // Kill the replica running it: no shutdown path runs, the lease just stops being renewed.
    let (survivor, killed) = if first_runner == "a" { (b, a.take()) } else { (a.take().unwrap(), Some(b)) };
    drop(killed);
    let started = Instant::now();
    let resumed = wait_for(&survivor.base, &id, 60, |j| {
        j["state"] == "running"
            && j["runner"].as_str() != Some(first_runner.as_str())
            && j["steps"].as_i64().unwrap_or(0) > checkpoint_step
    });
    eprintln!("taken over {:.1} s after the kill (lease 4 s)", started.elapsed().as_secs_f64());
    assert_eq!(resumed["restarts"], 1, "{resumed}");
    let curve: Vec<Value> =
        client().get(format!("{}/v1/training/jobs/{id}/metrics", survivor.base)).send().unwrap().json().unwrap();
    assert!(curve.iter().any(|e| e["step"].as_i64() == Some(checkpoint_step)), "the curve kept the checkpoint's");
    // The curve continues after the checkpoint, not from scratch: no step appears twice.
    let next = wait_for(&survivor.base, &id, 60, |j| j["latest"]["step"].as_i64().unwrap_or(0) > checkpoint_step);
    let curve: Vec<Value> =
        client().get(format!("{}/v1/training/jobs/{id}/metrics", survivor.base)).send().unwrap().json().unwrap();
    let steps: Vec<i64> = curve.iter().map(|e| e["step"].as_i64().unwrap()).collect();
    assert!(steps.windows(2).all(|w| w[1] > w[0]), "{steps:?}");
    assert_eq!(curve.last().unwrap()["step"], next["latest"]["step"]);
    let cancelled = client().delete(format!("{}/v1/training/jobs/{id}", survivor.base)).send().unwrap();
    assert_eq!(cancelled.status(), 202);
    let ended = wait_for(&survivor.base, &id, 30, |j| j["state"] == "cancelled");
    assert!(ended["runner"].is_null(), "{ended}");
    drop(survivor);
    let _ = std::fs::remove_dir_all(&data);
}

/// SIGTERM to the replica running a job, with the job's event stream open on it: the job goes
/// back to the queue and the other replica takes it, the stream (read from the store) ends with
/// the job's state after the hand-back (`interrupted`, or `running` on the other replica) instead
/// of holding the shutdown while the job runs on elsewhere, and the stopped replica exits by
/// itself.
#[test]
fn a_stopped_replica_hands_its_job_to_another_and_its_event_streams_end() {
    let Some(url) = database("handback") else { return };
    let data = std::env::temp_dir().join(format!("rlsolver-handback-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut replicas = vec![Replica::start("a", &url, &data, "all"), Replica::start("b", &url, &data, "all")];
    let id = submit(
        &replicas[0].base,
        json!({"algorithm": "dqn", "env": "CartPole-v1", "total_steps": 2_000_000, "eval_every": 3_000}),
    );
    let running = wait_for(&replicas[0].base, &id, 60, |j| j["latest"]["step"].as_i64().is_some());
    let runner = running["runner"].as_str().unwrap().to_string();
    let mut stopped = replicas.remove(if runner == "a" { 0 } else { 1 });
    let survivor = replicas.pop().unwrap();
    let stream = {
        // Reads past the 30 s that the stopped replica has to exit in.
        let reader = Client::builder().timeout(Duration::from_secs(120)).build().unwrap();
        let url = format!("{}/v1/training/jobs/{id}/events", stopped.base);
        std::thread::spawn(move || reader.get(url).send().unwrap().text().unwrap())
    };
    std::thread::sleep(Duration::from_millis(1000));
    stopped.terminate();
    stopped.exits_by_itself("the stopped replica kept serving the job's event stream");
    // The stream's last event says where the job went: back to the queue, or already to the
    // other replica.
    let events = stream.join().unwrap();
    let last = events.trim_end().rsplit("\n\n").next().unwrap();
    let end: Value = serde_json::from_str(last.strip_prefix("event: state\ndata: ").expect(&events)).unwrap();
    assert!(
        end["state"] == "interrupted" || (end["state"] == "running" && end["runner"] != runner.as_str()),
        "{events}"
    );
    let taken = wait_for(&survivor.base, &id, 60, |j| {
        j["state"] == "running" && j["runner"].as_str().is_some_and(|r| r != runner)
    });
    assert_eq!(taken["restarts"], 1, "{taken}");
    common::cancel_training_job(&survivor.base, &id);
    drop(survivor);
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn an_api_replica_takes_jobs_that_a_worker_replica_runs() {
    let Some(url) = database("roles") else { return };
    let data = std::env::temp_dir().join(format!("rlsolver-roles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let api = Replica::start("api", &url, &data, "api");
    let worker = Replica::start("worker", &url, &data, "worker");
    // A worker replica serves only the probes and the metrics.
    let refused = client().post(format!("{}/v1/training/jobs", worker.base)).json(&json!({})).send().unwrap();
    assert_eq!(refused.status(), 404);
    assert_eq!(client().get(format!("{}/metrics", worker.base)).send().unwrap().status(), 200);
    let ids: Vec<String> = (0..3)
        .map(|seed| {
            submit(
                &api.base,
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 2_000, "eval_every": 1_000, "seed": seed}),
            )
        })
        .collect();
    // The API replica's event stream follows a job the worker runs, to its end, from the store.
    let mut stream = String::new();
    std::io::Read::read_to_string(
        &mut client().get(format!("{}/v1/training/jobs/{}/events", api.base, ids[0])).send().unwrap(),
        &mut stream,
    )
    .unwrap();
    assert!(stream.contains("event: evaluation"), "{stream}");
    let last = stream.rsplit("event: ").next().unwrap();
    assert!(last.starts_with("state") && last.contains("\"succeeded\""), "the stream ends with the end: {last}");
    for id in &ids {
        let done = wait_for(&api.base, id, 120, |j| j["state"] == "succeeded");
        assert_eq!(done["restarts"], 0, "{done}");
        assert!(done["result"]["steps"].as_i64().unwrap() >= 2_000, "{done}");
        // The artifacts live in the shared folder: the API replica serves what the worker wrote.
        let weights = client()
            .get(format!("{}/v1/training/jobs/{id}/artifacts/actor_critic.safetensors", api.base))
            .send()
            .unwrap();
        assert_eq!(weights.status(), 200);
    }
    drop(worker);
    drop(api);
    let _ = std::fs::remove_dir_all(&data);
}

/// 50 short jobs through an API replica onto 3 worker replicas, one of which is SIGKILLed and
/// replaced every 2 s: every job ends `succeeded` exactly once with its full result, none is lost.
#[test]
fn fifty_jobs_survive_workers_killed_every_few_seconds() {
    let Some(url) = database("chaos") else { return };
    let data = std::env::temp_dir().join(format!("rlsolver-chaos-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let api = Replica::start("api", &url, &data, "api");
    let mut workers: Vec<common::ServeProcess> =
        (0..3).map(|w| Replica::start(&format!("w{w}-0"), &url, &data, "worker")).collect();
    let ids: Vec<String> = (0..50)
        .map(|seed| {
            submit(
                &api.base,
                json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 2_048, "eval_every": 1_024, "seed": seed}),
            )
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(300);
    let (mut kills, mut next_kill) = (0usize, Instant::now() + Duration::from_secs(2));
    loop {
        let states: Vec<Value> = ids.iter().map(|id| job(&api.base, id)).collect();
        if states.iter().all(|j| j["state"] == "succeeded") {
            let restarts: i64 = states.iter().map(|j| j["restarts"].as_i64().unwrap()).sum();
            eprintln!("50 jobs done after {kills} kills, {restarts} takeovers");
            // Workers are killed while busy: some job must have been taken over and finished.
            assert!(restarts >= 1, "{kills} kills of busy workers and no job was taken over");
            for j in &states {
                assert!(j["result"]["steps"].as_i64().unwrap() >= 2_048, "{j}");
                assert!(j["runner"].is_null(), "{j}");
            }
            break;
        }
        for j in &states {
            assert!(!matches!(j["state"].as_str(), Some("failed" | "cancelled")), "{j}");
        }
        assert!(
            Instant::now() < deadline,
            "not all done: {:?}",
            states.iter().map(|j| &j["state"]).collect::<Vec<_>>()
        );
        if Instant::now() >= next_kill {
            let slot = kills % workers.len();
            kills += 1;
            // SIGKILL, then a replacement under a fresh name.
            let _ = workers[slot].child.kill();
            let _ = workers[slot].child.wait();
            workers[slot] = Replica::start(&format!("w{slot}-{kills}"), &url, &data, "worker");
            next_kill = Instant::now() + Duration::from_secs(2);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(kills >= 1, "the jobs outlasted no kill: make them longer");
    drop(workers);
    drop(api);
    let _ = std::fs::remove_dir_all(&data);
}

/// A TCP relay to the test PostgreSQL server that can cut every connection through it and refuse
/// new ones for a while: the replica's view of a database that went away and came back.
struct Relay {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn to(upstream: std::net::SocketAddr) -> Relay {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let relay = Relay { port, cut: Default::default(), open: Default::default() };
        let (cut, open) = (relay.cut.clone(), relay.open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if cut.load(Ordering::SeqCst) {
                    continue; // dropped: refused while cut
                }
                let Ok(server) = std::net::TcpStream::connect(upstream) else { continue };
                let mut streams = open.lock().unwrap();
                streams.push(client.try_clone().unwrap());
                streams.push(server.try_clone().unwrap());
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        relay
    }

    /// Closes every relayed connection and refuses new ones for `outage`.
    fn cut_for(&self, outage: Duration) {
        use std::sync::atomic::Ordering;
        self.cut.store(true, Ordering::SeqCst);
        let streams: Vec<std::net::TcpStream> = self.open.lock().unwrap().drain(..).collect();
        assert!(!streams.is_empty(), "the replica holds no connection to cut");
        for stream in streams {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        std::thread::sleep(outage);
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// A replica cut off from PostgreSQL for 4 s (shorter than its lease) keeps its running jobs:
/// the pool reconnects, a job that outlasts the outage and one that ends during it both end
/// `succeeded` on the same replica without a restart, and jobs submitted after the outage run too.
#[test]
fn a_replica_cut_off_from_the_database_reconnects_without_losing_its_job() {
    let Some(url) = database("outage") else { return };
    let rest = url.strip_prefix("postgres://").unwrap();
    let (credentials, rest) = rest.split_once('@').unwrap();
    let (host, database) = rest.split_once('/').unwrap();
    let upstream = std::net::ToSocketAddrs::to_socket_addrs(host).unwrap().next().unwrap();
    let relay = Relay::to(upstream);
    let relayed = format!("postgres://{credentials}@127.0.0.1:{}/{database}", relay.port);
    let data = std::env::temp_dir().join(format!("rlsolver-outage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let args = ["--replica", "solo", "--job-lease-s", "10", "--database-url", &relayed, "--training-workers", "2"];
    let replica = common::ServeProcess::start(&args, &data, Stdio::null());
    // One job outlasts the outage (its lease renewals fail, then recover); the other, ~1.5 s of
    // training, ends while the database is away (its end is written once it is back).
    let long = submit(
        &replica.base,
        json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 60_000, "eval_every": 5_000}),
    );
    let short = submit(
        &replica.base,
        json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 12_000, "eval_every": 5_000}),
    );
    for id in [&long, &short] {
        wait_for(&replica.base, id, 60, |j| j["latest"]["step"].as_i64().is_some());
    }
    let cut_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    relay.cut_for(Duration::from_secs(4));
    for id in [&long, &short] {
        let done = wait_for(&replica.base, id, 120, |j| j["state"] == "succeeded");
        assert_eq!((done["restarts"].as_i64(), done["runner"].is_null()), (Some(0), true), "{done}");
        assert!(done["result"]["steps"].as_i64().unwrap() > 0, "{done}");
        assert!(done["finished_at"].as_f64().unwrap() > cut_at, "the outage came while the job ran: {done}");
    }
    let after = submit(&replica.base, json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 1_024}));
    wait_for(&replica.base, &after, 60, |j| j["state"] == "succeeded");
    drop(replica);
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn a_population_spreads_over_worker_and_evaluator_replicas_and_survives_a_killed_worker() {
    let Some(url) = database("population") else { return };
    let data = std::env::temp_dir().join(format!("rlsolver-replicas-population-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let api = Replica::start("api", &url, &data, "api");
    let mut w1 = Some(Replica::start("w1", &url, &data, "worker"));
    let _w2 = Replica::start("w2", &url, &data, "worker");
    let _evaluator = Replica::start("e", &url, &data, "evaluator");
    let request = json!({
        "algorithm": "dqn", "env": "CartPole-v1", "scheme": "pbt", "size": 4, "seed": 11,
        "total_steps": 24_000, "interval_steps": 2_000, "eval_episodes": 5,
        "hyperparameters": {"learning_starts": 200},
        "explore": {"learning_rate": {"min": 1e-4, "max": 3e-3, "log": true}},
    });
    let submitted = client().post(format!("{}/v1/populations", api.base)).json(&request).send().unwrap();
    assert_eq!(submitted.status(), 202);
    let id = submitted.json::<Value>().unwrap()["id"].as_str().unwrap().to_string();
    let population =
        |base: &str| -> Value { client().get(format!("{base}/v1/populations/{id}")).send().unwrap().json().unwrap() };
    // Kill one worker once the population is under way, while it runs a member round: that
    // round's lease lapses and the other worker resumes it from its checkpoint.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pool = runtime.block_on(sqlx::PgPool::connect(&url)).unwrap();
    let running_on_w1 = || -> Option<String> {
        runtime
            .block_on(
                sqlx::query_scalar(
                    "SELECT id FROM jobs WHERE population_id = $1 AND kind = 'member' AND state = 'running' AND lease_owner = 'w1'",
                )
                .bind(&id)
                .fetch_optional(&pool),
            )
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    let killed_round = loop {
        if population(&api.base)["rounds_done"].as_i64().unwrap() >= 3 {
            if let Some(job) = running_on_w1() {
                break job;
            }
        }
        assert!(Instant::now() < deadline, "w1 never ran a round after round 3: {}", population(&api.base));
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(w1.take());
    let deadline = Instant::now() + Duration::from_secs(300);
    let ended = loop {
        let p = population(&api.base);
        if p["state"] != "running" {
            break p;
        }
        assert!(Instant::now() < deadline, "{p}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(ended["state"], "succeeded", "{ended}");
    // Every round ran and was filed exactly once.
    let board = ended["leaderboard"].as_array().unwrap();
    assert_eq!(board.len(), 12, "{ended}");
    for member in 0..4 {
        let mut rounds: Vec<u64> =
            board.iter().filter(|e| e["member"] == member).map(|e| e["round"].as_u64().unwrap()).collect();
        rounds.sort();
        assert_eq!(rounds, vec![0, 1, 2], "member {member}");
    }
    // The last evaluation job files the round that ends the population from inside its run, so
    // its own row turns `succeeded` a moment after the population does.
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = loop {
        let p = population(&api.base);
        if p["jobs"]["evaluation"]["running"].is_null() || Instant::now() > deadline {
            break p;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(ended["jobs"]["member"]["succeeded"], 12, "{}", ended["jobs"]);
    assert_eq!(ended["jobs"]["evaluation"]["succeeded"], 12, "{}", ended["jobs"]);
    // Evaluations ran only on the evaluator replica, member rounds only on the workers.
    let rows: Vec<(String, String, Option<String>, i64)> = runtime
        .block_on(
            sqlx::query_as(
                "SELECT id, kind, result, restarts FROM jobs WHERE population_id = $1 AND state = 'succeeded'",
            )
            .bind(&id)
            .fetch_all(&pool),
        )
        .unwrap();
    assert_eq!(rows.len(), 24, "12 member rounds and 12 evaluations");
    for (job, kind, result, restarts) in rows {
        let result: Value = serde_json::from_str(&result.unwrap()).unwrap();
        let replica = result["replica"].as_str().unwrap();
        match kind.as_str() {
            "evaluation" => assert_eq!(replica, "e"),
            _ => assert!(replica == "w1" || replica == "w2", "{kind} on {replica}"),
        }
        if job == killed_round {
            // The round w1 was running when it died was taken over and finished on w2.
            assert_eq!((kind.as_str(), replica, restarts), ("member", "w2", 1), "{result}");
        }
    }
    let _ = std::fs::remove_dir_all(&data);
}
