//! Liveness and readiness.

use super::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Serialize, ToSchema)]
pub struct HealthStatus {
    pub status: &'static str,
}

pub fn router() -> Router<AppState> {
    Router::new().route("/health", get(health)).route("/ready", get(ready))
}

/// Liveness: the process answers, even while solves run.
#[utoipa::path(get, path = "/health", tag = "health", operation_id = "health", responses((status = 200, body = HealthStatus)))]
pub async fn health() -> Json<HealthStatus> {
    Json(HealthStatus { status: "ok" })
}

/// Readiness: 200 when the model registry is loaded and the store answers; 503 otherwise and
/// once shutdown has begun.
#[utoipa::path(get, path = "/ready", tag = "health", operation_id = "ready", responses((status = 200, body = HealthStatus), (status = 503, body = HealthStatus)))]
pub async fn ready(State(state): State<AppState>) -> (StatusCode, Json<HealthStatus>) {
    if state.is_ready().await {
        (StatusCode::OK, Json(HealthStatus { status: "ready" }))
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, Json(HealthStatus { status: "not_ready" }))
    }
}
