//! The HTTP service: one router module per resource, merged here.

pub mod auth;
pub mod body;
pub mod catalog;
pub mod contract;
pub mod docs;
pub mod error;
pub mod health;
pub mod jobs;
pub mod learner;
pub mod metrics;
pub mod models;
pub mod openapi;
pub mod params;
pub mod populations;
pub mod problems;
pub mod solve_jobs;
pub mod state;
pub mod training;
pub mod ui;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, Request};
use axum::Router;
use state::{AppState, ServerConfig};
use std::net::SocketAddr;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

pub fn app(state: AppState) -> Router {
    let max_body = state.config.max_body_bytes;
    let cors = cors(&state.config.cors_origins);
    let router = match state.config.role {
        state::Role::Worker | state::Role::Evaluator | state::Role::Rollout => {
            Router::new().merge(health::router()).merge(metrics::router())
        }
        state::Role::Learner => Router::new().merge(health::router()).merge(metrics::router()).merge(learner::router()),
        state::Role::All | state::Role::Api => Router::new()
            .merge(health::router())
            .merge(problems::router())
            .merge(models::router())
            .merge(catalog::router())
            .merge(training::router())
            .merge(populations::router())
            .merge(solve_jobs::router())
            .merge(metrics::router())
            .merge(docs::router())
            .merge(ui::router()),
    };
    let router = router
        .fallback(not_served)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_key))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::record));
    let router = match cors {
        Some(cors) => router.layer(cors),
        None => router,
    };
    router
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
            let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
            tracing::info_span!("request", method = %request.method(), uri = %request.uri(), request_id = %id)
        }))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .with_state(state)
}

/// A path this replica has no route for: a 404 problem+json, naming the role that serves it where
/// another role does (the learner's routes, or the API on a worker-like replica).
async fn not_served(
    axum::extract::State(state): axum::extract::State<AppState>,
    uri: axum::http::Uri,
) -> error::ApiError {
    let path = uri.path();
    let role = state.config.role;
    let learner_route = path == "/v1/learner" || path.starts_with("/v1/learner/");
    let api_route = !learner_route && (path.starts_with("/v1/") || ["/docs", "/openapi.json", "/ui"].contains(&path));
    let message = if learner_route && role != state::Role::Learner {
        format!("{path} is served by a `--role learner` replica; this one's role is `{}`", role.name())
    } else if api_route && !matches!(role, state::Role::All | state::Role::Api) {
        format!("{path} is served by `--role all` or `--role api` replicas; this one's role is `{}`", role.name())
    } else {
        format!("no route {path}")
    };
    error::ApiError::not_found("path", message)
}

/// CORS for the configured origins (`*` = any); None when none are configured.
fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
            .allow_headers([axum::http::header::CONTENT_TYPE, axum::http::header::AUTHORIZATION]),
    )
}

/// Serves until SIGINT/SIGTERM, then marks itself not ready (`/ready` 503) for the configured
/// drain period while still accepting, then stops this replica's jobs (`JobManager::stop`:
/// running ones go back to the queue), stops accepting and lets running requests finish.
pub async fn serve(listener: tokio::net::TcpListener, config: ServerConfig) -> anyhow::Result<()> {
    serve_until(listener, config, shutdown_signal()).await
}

/// Serves until `shutdown` completes (see `serve`).
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    config: ServerConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let rollout = rollout(&config)?;
    let state = AppState::open(config).await?;
    let addr: SocketAddr = listener.local_addr()?;
    tracing::info!(%addr, "rlsolver listening");
    let (draining, jobs) = (state.clone(), state.jobs.clone());
    let drain = state.config.shutdown_drain;
    axum::serve(listener, app(state))
        .with_graceful_shutdown(async move {
            // A rollout replica ends with its rollout (the learner is done).
            tokio::select! { _ = shutdown => {}, _ = rollout => {} }
            draining.set_draining();
            tracing::info!(
                drain_s = drain.as_secs_f64(),
                "shutdown requested; /ready is 503, finishing running requests"
            );
            tokio::time::sleep(drain).await;
            // Before the wait for open connections: a job's event stream ends with its job.
            jobs.stop(crate::jobs::STOP_GRACE).await;
        })
        .await?;
    Ok(())
}

/// The rollout role's loop on its own thread (a future that never ends for other roles).
fn rollout(config: &ServerConfig) -> anyhow::Result<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>> {
    if config.role != state::Role::Rollout {
        return Ok(Box::pin(std::future::pending()));
    }
    let url = config.learner_url.clone().ok_or_else(|| anyhow::anyhow!("--role rollout needs --learner-url"))?;
    let name = config.jobs.replica.clone().unwrap_or_else(|| format!("rollout-{}", uuid::Uuid::new_v4()));
    let (key, envs) = (std::env::var("RLSOLVER_LEARNER_KEY").ok(), config.jobs.envs.clone());
    let (done, finished) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new().name("rollout".into()).spawn(move || {
        match crate::drl::apex::rollout::run(&url, &name, key.as_deref(), &envs) {
            Ok(summary) => tracing::info!(rollout = %name, env_steps = summary.env_steps, batches = summary.batches, weight_loads = summary.weight_loads, "rollout done"),
            Err(error) => tracing::error!(rollout = %name, error = %format!("{error:#}"), "rollout failed"),
        }
        let _ = done.send(());
    })?;
    Ok(Box::pin(async move {
        let _ = finished.await;
    }))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
}
