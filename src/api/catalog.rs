//! `/v1/algorithms` and `/v1/envs`: what the training endpoints accept.

use super::state::AppState;
use crate::jobs::training::{self, AlgorithmInfo, EnvInfo};
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/algorithms", get(algorithms)).route("/v1/envs", get(envs))
}

/// Every deep-RL algorithm: action spaces, hyperparameters with defaults and the ranges the
/// server checks.
#[utoipa::path(get, path = "/v1/algorithms", tag = "training", operation_id = "list_algorithms", responses((status = 200, body = Vec<AlgorithmInfo>)))]
pub async fn algorithms() -> Json<Vec<AlgorithmInfo>> {
    Json(training::algorithms())
}

/// Every environment with its observation and action spaces.
#[utoipa::path(get, path = "/v1/envs", tag = "training", operation_id = "list_envs", responses((status = 200, body = Vec<EnvInfo>)))]
pub async fn envs() -> Json<Vec<EnvInfo>> {
    Json(training::envs())
}
