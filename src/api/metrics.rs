//! `GET /metrics`: OpenMetrics text exposition (prometheus-client). Requests by route template and status, request
//! latency and solver time histograms, jobs by kind and state (from the store, at scrape time).

use super::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::sync::OnceLock;
use std::time::Instant;

/// The log writer's count of dropped lines (set once by the binary's `serve`).
static DROPPED_LOG_LINES: OnceLock<tracing_appender::non_blocking::ErrorCounter> = OnceLock::new();

/// Makes /metrics report `counter` as `rlsolver_log_lines_dropped`.
pub fn count_dropped_log_lines(counter: tracing_appender::non_blocking::ErrorCounter) {
    let _ = DROPPED_LOG_LINES.set(counter);
}

/// Upper bounds (seconds) of the latency buckets.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProblemLabels {
    problem: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    kind: String,
    state: String,
}

fn latency_histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The service's metrics, encoded by prometheus-client (the Prometheus project's Rust client), so
/// that names, label escaping and histogram series follow the exposition format.
pub struct HttpMetrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    solver: Family<ProblemLabels, Histogram, fn() -> Histogram>,
    jobs: Family<JobLabels, Gauge>,
    solves_in_flight: Gauge,
    log_lines_dropped: Gauge,
    gymnasium_restarts: Gauge,
}

impl Default for HttpMetrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("rlsolver");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests by method, route template and status", requests.clone());
        let latency = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency_histogram);
        registry.register_with_unit(
            "http_request_duration",
            "Request latency by route template",
            Unit::Seconds,
            latency.clone(),
        );
        let solver = Family::<ProblemLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency_histogram);
        registry.register_with_unit("solver", "Solver wall time by problem", Unit::Seconds, solver.clone());
        let jobs = Family::<JobLabels, Gauge>::default();
        registry.register("jobs", "Jobs by kind and state", jobs.clone());
        let solves_in_flight = Gauge::default();
        registry.register(
            "solves_in_flight",
            "Synchronous solves holding a solver slot (503 when all max_concurrent_solves are held)",
            solves_in_flight.clone(),
        );
        let log_lines_dropped = Gauge::default();
        registry.register(
            "log_lines_dropped",
            "Log lines dropped because the log reader fell behind (the requests went on)",
            log_lines_dropped.clone(),
        );
        let gymnasium_restarts = Gauge::default();
        registry.register(
            "gymnasium_worker_restarts",
            "Gymnasium bridge workers restarted after a crash or a step timeout since the process started",
            gymnasium_restarts.clone(),
        );
        HttpMetrics {
            registry,
            requests,
            latency,
            solver,
            jobs,
            solves_in_flight,
            log_lines_dropped,
            gymnasium_restarts,
        }
    }
}

impl HttpMetrics {
    pub fn observe_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let labels = RequestLabels { method: method.to_string(), route: route.to_string(), status };
        self.requests.get_or_create(&labels).inc();
        self.latency.get_or_create(&RouteLabels { route: route.to_string() }).observe(seconds);
    }

    pub fn observe_solve(&self, problem: &str, seconds: f64) {
        self.solver.get_or_create(&ProblemLabels { problem: problem.to_string() }).observe(seconds);
    }

    /// The exposition, with the job gauges set from the store's counts of this scrape and the
    /// solves in flight from the solver slots held now.
    fn render(&self, jobs: &[(String, String, i64)], solves_in_flight: i64, restarts: u64) -> String {
        self.solves_in_flight.set(solves_in_flight);
        self.log_lines_dropped.set(DROPPED_LOG_LINES.get().map_or(0, |c| c.dropped_lines() as i64));
        self.gymnasium_restarts.set(restarts as i64);
        // A state no job is in any more must not keep its last count.
        self.jobs.clear();
        for (kind, state, n) in jobs {
            self.jobs.get_or_create(&JobLabels { kind: kind.clone(), state: state.clone() }).set(*n);
        }
        let mut out = String::new();
        if let Err(error) = encode(&mut out, &self.registry) {
            tracing::error!(%error, "encoding metrics");
        }
        out
    }
}

pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

/// OpenMetrics text (what Prometheus scrapes natively).
#[utoipa::path(get, path = "/metrics", tag = "health", operation_id = "prometheus_metrics", responses((status = 200, description = "OpenMetrics text exposition", body = String, content_type = "application/openmetrics-text")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let jobs = state.jobs.store().count_by_state().await.unwrap_or_default();
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    let held = state.config.max_concurrent_solves.max(1).saturating_sub(state.solve_slots.available_permits());
    (
        [(header::CONTENT_TYPE, content_type)],
        state.metrics.render(&jobs, held as i64, state.config.jobs.envs.bridge.worker_restarts()),
    )
        .into_response()
}

/// Middleware: counts every request under its route template (unmatched: `other`).
pub async fn record(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route =
        request.extensions().get::<MatchedPath>().map_or_else(|| "other".to_string(), |p| p.as_str().to_string());
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let (status, seconds) = (response.status().as_u16(), started.elapsed().as_secs_f64());
    state.metrics.observe_request(&method, &route, status, seconds);
    tracing::info!(%method, %route, status, latency_ms = seconds * 1e3, "request");
    response
}
