//! Test helpers: an in-process server on an ephemeral port, and instance generators.

#![allow(dead_code)]

use rlsolver::api::state::ServerConfig;
use std::path::PathBuf;

/// Starts the service on 127.0.0.1:0 in a background runtime; returns its base URL.
pub fn start_server(config: ServerConfig) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send addr");
            rlsolver::api::serve(listener, config).await.expect("serve");
        });
    });
    let addr = rx.recv().expect("server address");
    format!("http://{addr}")
}

/// Asserts a 422 problem+json whose `field` is `field` and whose detail contains `detail`.
pub fn expect_422(response: reqwest::blocking::Response, field: &str, detail: &str) {
    assert_eq!(response.status().as_u16(), 422);
    assert_eq!(response.headers()["content-type"], "application/problem+json");
    let body: serde_json::Value = response.json().unwrap();
    assert_eq!(body["field"], field, "{body}");
    assert!(body["detail"].as_str().unwrap().contains(detail), "{body}");
}

/// The `objective` of every `incumbent` event of a server-sent event stream, in order.
pub fn streamed_objectives(stream: &str) -> Vec<f64> {
    stream
        .split("\n\n")
        .filter(|event| event.starts_with("event: incumbent"))
        .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data:")))
        .map(|data| serde_json::from_str::<serde_json::Value>(data.trim()).unwrap()["objective"].as_f64().unwrap())
        .collect()
}

/// A random unit-weight graph in Gset text form, reproducible from `seed`.
pub fn random_gset(n: usize, m: usize, seed: u64) -> String {
    rlsolver::problems::maxcut::generate::random_gset(n, m, &[1], seed)
}

/// `../shared/data/gset`, or None with a printed reason; under CI=true a missing folder fails.
pub fn shared_gset() -> Option<PathBuf> {
    shared_data("gset", "G14.txt")
}

/// `../shared/data/<folder>` when it holds `file`, or None with a printed reason; under CI=true a
/// missing file fails.
pub fn shared_data(folder: &str, file: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(folder);
    if dir.join(file).exists() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {} is missing", dir.display());
    }
    eprintln!("skipping: {} is missing (tests on shared data need ../shared)", dir.join(file).display());
    None
}

/// Hooks that stop a training run once it reaches `step` (as a cancel, or a crash right after
/// the checkpoint there, would).
pub fn stop_at(step: usize) -> rlsolver::drl::hooks::RunHooks {
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    rlsolver::drl::hooks::RunHooks {
        on_progress: Some(std::sync::Arc::new(move |s| {
            if s >= step {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        })),
        cancel: Some(cancel),
        ..Default::default()
    }
}

/// Every variable of a run folder's policy files (`<store>.safetensors`, not the whole-run
/// state), as (file/variable, tensor) in name order.
pub fn policy_weights(dir: &std::path::Path) -> Vec<(String, tch::Tensor)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".safetensors") && f != "state.safetensors")
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            let mut tensors = tch::Tensor::read_safetensors(dir.join(f)).unwrap();
            tensors.sort_by(|a, b| a.0.cmp(&b.0));
            tensors.into_iter().map(move |(name, t)| (format!("{f}/{name}"), t))
        })
        .collect()
}

/// The test PostgreSQL server: `RLSOLVER_TEST_DATABASE_URL`, default the one `.ci/postgres.sh`
/// starts.
pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres:postgres@127.0.0.1:5432/postgres";

/// A fresh, empty database named after `test` on the test PostgreSQL server (earlier runs' ones of
/// this test dropped first), as a URL; None (with a printed reason) when no server answers,
/// which fails under CI=true.
pub async fn fresh_postgres(test: &str) -> Option<String> {
    use sqlx::postgres::PgPoolOptions;
    let url = std::env::var("RLSOLVER_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
    let connected =
        PgPoolOptions::new().max_connections(1).acquire_timeout(std::time::Duration::from_secs(5)).connect(&url).await;
    let admin = match connected {
        Ok(pool) => pool,
        Err(error) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but no PostgreSQL answers at {url}: {error}")
        }
        Err(error) => {
            eprintln!("skipping: no PostgreSQL at {url} ({error}); .ci/postgres.sh starts one");
            return None;
        }
    };
    let stale: Vec<(String,)> = sqlx::query_as("SELECT datname FROM pg_database WHERE datname LIKE $1")
        .bind(format!("rlsolver_test_{test}_%"))
        .fetch_all(&admin)
        .await
        .unwrap();
    for (old,) in stale {
        sqlx::query(&format!("DROP DATABASE IF EXISTS {old} WITH (FORCE)")).execute(&admin).await.unwrap();
    }
    let name = format!("rlsolver_test_{test}_{}", std::process::id());
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&admin).await.unwrap();
    let (server, _) = url.rsplit_once('/').expect("a database URL ends in /name");
    Some(format!("{server}/{name}"))
}

/// `rlsolver serve` as a process on a free port, with `args` after `--port` and `--data-dir`,
/// stdout dropped and stderr to `stderr`, returned once `/ready` answers 200; killed (SIGKILL)
/// on drop.
pub struct ServeProcess {
    pub child: std::process::Child,
    pub base: String,
}

impl ServeProcess {
    pub fn start(args: &[&str], data_dir: &std::path::Path, stderr: std::process::Stdio) -> ServeProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_rlsolver"))
            .args(["serve", "--port", &port.to_string(), "--data-dir"])
            .arg(data_dir)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::blocking::Client::builder().timeout(std::time::Duration::from_secs(5)).build().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while client.get(format!("{base}/ready")).send().map(|r| r.status() != 200).unwrap_or(true) {
            assert!(std::time::Instant::now() < deadline, "serve {args:?} did not get ready");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        ServeProcess { child, base }
    }

    /// Sends SIGTERM (the shutdown path: drain, hand the jobs back, close).
    pub fn terminate(&self) {
        let sent = std::process::Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(sent.success());
    }

    /// Waits up to 30 s for the process to exit, and asserts that it exited with success.
    pub fn exits_by_itself(&mut self, still_running: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let exit = loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                break exit;
            }
            assert!(std::time::Instant::now() < deadline, "{still_running}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        assert!(exit.success(), "{exit:?}");
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Cancels the training job `id` and waits until it has stopped: a test must not exit while a
/// job still runs libtorch on a server thread (its static destructors would run under it).
pub fn cancel_training_job(base: &str, id: &str) {
    let client = reqwest::blocking::Client::new();
    client.delete(format!("{base}/v1/training/jobs/{id}")).send().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let job: serde_json::Value =
            client.get(format!("{base}/v1/training/jobs/{id}")).send().unwrap().json().unwrap();
        if ["cancelled", "succeeded", "failed"].contains(&job["state"].as_str().unwrap_or_default()) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "job {id} did not stop: {job}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The cut of `sides` over weighted edges `(u, v, w)`, summed here (independent of the service).
pub fn cut_of(edges: &[(usize, usize, f64)], sides: &[u8]) -> f64 {
    edges.iter().filter(|(u, v, _)| sides[*u] != sides[*v]).map(|e| e.2).sum()
}

/// A Max-Cut answer's `solution` (one side, 0 or 1, per node) as sides for `cut_of`.
pub fn sides(solution: &serde_json::Value) -> Vec<u8> {
    solution.as_array().unwrap().iter().map(|x| u8::try_from(x.as_u64().unwrap()).unwrap()).collect()
}

/// The edges of a Gset text as 0-based `(u, v, w)`.
pub fn gset_edges(text: &str) -> (usize, Vec<(usize, usize, f64)>) {
    let mut lines = text.lines();
    let n = lines.next().and_then(|l| l.split_whitespace().next()).unwrap().parse().unwrap();
    let edges = lines
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() == 3).then(|| {
                (f[0].parse::<usize>().unwrap() - 1, f[1].parse::<usize>().unwrap() - 1, f[2].parse::<f64>().unwrap())
            })
        })
        .collect();
    (n, edges)
}

/// Best cut of `starts` steepest-ascent descents (single flips) from random sides, written out
/// here: the bar a search must clear to be worth more than a local optimum.
pub fn greedy_best_cut(n: usize, edges: &[(usize, usize, f64)], starts: usize, seed: u64) -> f64 {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut adjacency = vec![Vec::new(); n];
    for &(u, v, w) in edges {
        adjacency[u].push((v, w));
        adjacency[v].push((u, w));
    }
    let gain = |i: usize, sides: &[u8]| -> f64 {
        adjacency[i].iter().map(|&(j, w)| if sides[i] == sides[j] { w } else { -w }).sum()
    };
    (0..starts)
        .map(|_| {
            let mut sides: Vec<u8> = (0..n).map(|_| rng.gen_range(0..2)).collect();
            let mut gains: Vec<f64> = (0..n).map(|i| gain(i, &sides)).collect();
            loop {
                let (best, g) = gains.iter().copied().enumerate().max_by(|a, b| a.1.total_cmp(&b.1)).expect("nodes");
                if g <= 1e-9 {
                    break cut_of(edges, &sides);
                }
                sides[best] ^= 1;
                gains[best] = -gains[best];
                for &(j, w) in &adjacency[best] {
                    // j's gain changes by 2w: the edge to `best` switched between cut and uncut.
                    gains[j] += if sides[j] == sides[best] { 2.0 * w } else { -2.0 * w };
                }
            }
        })
        .fold(f64::MIN, f64::max)
}

/// Mean return of uniformly random actions on the training runs' evaluation episodes.
pub fn random_return(env_id: &str) -> f64 {
    use rand::{Rng, SeedableRng};
    use rlsolver::drl::env::ActionSpace;
    use serde_json::Value;
    use tch::{Device, Tensor};
    let env = rlsolver::drl::env::make(env_id, 1).unwrap();
    let space = env.action_space();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut act = |obs: &Tensor| {
        let b = obs.size()[0] as usize;
        let actions: Vec<f32> = match &space {
            ActionSpace::Discrete { n } => (0..b).map(|_| rng.gen_range(0..*n) as f32).collect(),
            ActionSpace::Continuous { low, high } => (0..b).map(|_| rng.gen_range(low[0]..=high[0])).collect(),
        };
        Tensor::from_slice(&actions).view([b as i64, -1])
    };
    rlsolver::drl::run::evaluate(
        env_id,
        &Value::Null,
        10,
        rlsolver::drl::run::evaluation_seed(0, 0),
        Device::Cpu,
        &rlsolver::problems::envs(Default::default()),
        &mut act,
    )
    .unwrap()
    .0
}
