//! The HTTP service: one router module per resource, merged here.

pub mod docs;
pub mod error;
pub mod health;
pub mod models;
pub mod openapi;
pub mod problems;
pub mod state;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, Request};
use axum::Router;
use state::{AppState, ServerConfig};
use std::net::SocketAddr;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

pub fn app(state: AppState) -> Router {
    let max_body = state.config.max_body_bytes;
    Router::new()
        .merge(health::router())
        .merge(problems::router())
        .merge(models::router())
        .merge(docs::router())
        .layer(DefaultBodyLimit::max(max_body))
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
                let id = request.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
                tracing::info_span!("request", method = %request.method(), uri = %request.uri(), request_id = %id)
            }),
        )
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .with_state(state)
}

/// Serves until SIGINT/SIGTERM, then stops accepting, marks itself not ready and lets running
/// requests finish.
pub async fn serve(listener: tokio::net::TcpListener, config: ServerConfig) -> std::io::Result<()> {
    let state = AppState::new(config);
    let addr: SocketAddr = listener.local_addr()?;
    tracing::info!(%addr, "rlsolver listening");
    let draining = state.clone();
    axum::serve(listener, app(state))
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            draining.set_draining();
            tracing::info!("shutdown requested; finishing running requests");
        })
        .await
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
