//! `GET /metrics`: Prometheus text exposition. Requests by route template and status, request
//! latency and solver time histograms, jobs by kind and state (from the store, at scrape time).

use super::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Instant;

/// Upper bounds (seconds) of the latency buckets.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0];

#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (bound, c) in BUCKETS.iter().zip(self.counts.iter_mut()) {
            if seconds <= *bound {
                *c += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str) {
        for (bound, c) in BUCKETS.iter().zip(&self.counts) {
            let _ = writeln!(out, "{name}_bucket{{{labels}le=\"{bound}\"}} {c}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum{{{}}} {}", labels.trim_end_matches(','), self.sum);
        let _ = writeln!(out, "{name}_count{{{}}} {}", labels.trim_end_matches(','), self.count);
    }
}

#[derive(Default)]
struct Counters {
    /// (method, route, status) -> count
    requests: BTreeMap<(String, String, u16), u64>,
    /// route -> latency
    latency: BTreeMap<String, Histogram>,
    /// problem -> solver seconds
    solver: BTreeMap<String, Histogram>,
}

#[derive(Default)]
pub struct HttpMetrics {
    counters: Mutex<Counters>,
}

impl HttpMetrics {
    pub fn observe_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut c = self.counters.lock().expect("metrics");
        *c.requests.entry((method.to_string(), route.to_string(), status)).or_default() += 1;
        c.latency.entry(route.to_string()).or_default().observe(seconds);
    }

    pub fn observe_solve(&self, problem: &str, seconds: f64) {
        self.counters.lock().expect("metrics").solver.entry(problem.to_string()).or_default().observe(seconds);
    }

    fn render(&self, jobs: &[(String, String, i64)]) -> String {
        let c = self.counters.lock().expect("metrics");
        let mut out = String::new();
        out.push_str("# HELP rlsolver_http_requests_total HTTP requests by method, route template and status.\n# TYPE rlsolver_http_requests_total counter\n");
        for ((method, route, status), n) in &c.requests {
            let _ = writeln!(
                out,
                "rlsolver_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        out.push_str("# HELP rlsolver_http_request_duration_seconds Request latency by route template.\n# TYPE rlsolver_http_request_duration_seconds histogram\n");
        for (route, h) in &c.latency {
            h.write(&mut out, "rlsolver_http_request_duration_seconds", &format!("route=\"{route}\","));
        }
        out.push_str(
            "# HELP rlsolver_solver_seconds Solver wall time by problem.\n# TYPE rlsolver_solver_seconds histogram\n",
        );
        for (problem, h) in &c.solver {
            h.write(&mut out, "rlsolver_solver_seconds", &format!("problem=\"{problem}\","));
        }
        out.push_str("# HELP rlsolver_jobs Jobs by kind and state.\n# TYPE rlsolver_jobs gauge\n");
        for (kind, state, n) in jobs {
            let _ = writeln!(out, "rlsolver_jobs{{kind=\"{kind}\",state=\"{state}\"}} {n}");
        }
        out
    }
}

pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

/// Prometheus text format (version 0.0.4).
#[utoipa::path(get, path = "/metrics", tag = "health", operation_id = "prometheus_metrics", responses((status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let jobs = state.jobs.store().count_by_state().await.unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render(&jobs)).into_response()
}

/// Middleware: counts every request under its route template (unmatched: `other`).
pub async fn record(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route =
        request.extensions().get::<MatchedPath>().map_or_else(|| "other".to_string(), |p| p.as_str().to_string());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics.observe_request(&method, &route, response.status().as_u16(), started.elapsed().as_secs_f64());
    response
}
