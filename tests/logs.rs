//! The server's logs: `--log-format json` writes one JSON object a line with the
//! request's route, status and latency; and a log reader that stalls (stderr into a pipe nobody
//! reads) costs dropped lines, counted in /metrics, never a stalled request. Before the lossy
//! writer, solves stopped answering after about 140 requests in that situation.

use reqwest::blocking::Client;
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn client() -> Client {
    Client::builder().timeout(Duration::from_secs(10)).build().unwrap()
}

mod common;

/// `serve` with `args`, its stderr going to `stderr`.
fn serve(args: &[&str], stderr: Stdio) -> common::ServeProcess {
    // A folder of its own: two servers migrating one SQLite store at once fail to start.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let data = std::env::temp_dir().join(format!("rlsolver-logs-{}-{k}", std::process::id()));
    common::ServeProcess::start(args, &data, stderr)
}

fn solve(base: &str) -> u16 {
    client()
        .post(format!("{base}/v1/problems/maxcut/solve"))
        .header("content-type", "text/plain")
        .body("3 3\n1 2 1\n2 3 1\n1 3 1")
        .send()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn solves_go_on_while_nobody_reads_the_log_and_the_dropped_lines_are_counted() {
    // A pipe whose reading end stays open and unread: once its buffer fills, writes block.
    let server = serve(&["--log-buffer-lines", "64"], Stdio::piped());
    let base = server.base.clone();
    let started = Instant::now();
    for k in 0..600 {
        assert_eq!(solve(&base), 200, "request {k}");
    }
    let seconds = started.elapsed().as_secs_f64();
    let metrics = client().get(format!("{base}/metrics")).send().unwrap().text().unwrap();
    let dropped: f64 = metrics
        .lines()
        .find(|l| l.starts_with("rlsolver_log_lines_dropped "))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect(&metrics);
    assert!(dropped > 0.0, "600 requests filled neither the pipe nor the queue? {metrics}");
    assert!(seconds < 60.0, "600 tiny solves took {seconds:.1} s");
    eprintln!("600 solves in {seconds:.1} s with the log unread; {dropped} lines dropped");
}

#[test]
fn json_logs_are_one_object_a_line_with_route_status_and_latency() {
    let mut server = serve(&["--log-format", "json"], Stdio::piped());
    let base = server.base.clone();
    // A solve that runs to its 0.5 s limit: the logged latency lies between that and what the
    // client measured around the request.
    let started = Instant::now();
    let timed = client()
        .post(format!("{base}/v1/problems/maxcut/solve?time_limit_s=0.5"))
        .header("content-type", "text/plain")
        .body(common::random_gset(2000, 8000, 5))
        .send()
        .unwrap();
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(timed.status(), 200);
    assert_eq!(client().get(format!("{base}/health")).send().unwrap().status(), 200);
    std::thread::sleep(Duration::from_millis(300));
    let _ = server.child.kill();
    let _ = server.child.wait();
    let mut text = String::new();
    server.child.stderr.take().unwrap().read_to_string(&mut text).unwrap();
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    let request = lines
        .iter()
        .find(|l| l["fields"]["route"] == "/v1/problems/{name}/solve")
        .unwrap_or_else(|| panic!("no request line: {text}"));
    assert_eq!(request["fields"]["status"], 200, "{request}");
    let latency = request["fields"]["latency_ms"].as_f64().unwrap();
    assert!((450.0..=elapsed_ms).contains(&latency), "{request}: the client saw {elapsed_ms:.0} ms");
    assert!(request["span"]["request_id"].as_str().is_some_and(|id| id.len() >= 32), "{request}");
    assert_eq!(request["level"], "INFO");
}
