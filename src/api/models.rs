//! `GET /v1/models` and `GET /v1/models/{name}`: the verified model registry.

use super::error::ApiError;
use super::state::AppState;
use crate::models::{registry, Manifest};
use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use utoipa::ToSchema;

/// The registry: loaded models and the folders refused at start (with why).
#[derive(Serialize, ToSchema)]
pub struct ModelList {
    pub models: Vec<Manifest>,
    pub rejected: Vec<RejectedModel>,
}

#[derive(Serialize, ToSchema)]
pub struct RejectedModel {
    pub folder: String,
    pub reason: String,
}

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/models", get(list)).route("/v1/models/{name}", get(one))
}

#[utoipa::path(get, path = "/v1/models", tag = "models", operation_id = "list_models", responses((status = 200, description = "Every loaded model", body = ModelList)))]
pub async fn list() -> Json<ModelList> {
    let r = registry();
    Json(ModelList {
        models: r.models.iter().map(|m| m.manifest.clone()).collect(),
        rejected: r.rejected.iter().map(|(folder, reason)| RejectedModel { folder: folder.clone(), reason: reason.clone() }).collect(),
    })
}

#[utoipa::path(
    get,
    path = "/v1/models/{name}",
    tag = "models",
    operation_id = "get_model",
    params(("name" = String, Path, description = "Model name")),
    responses((status = 200, description = "The model's manifest", body = Manifest), (status = 404, description = "No such model"))
)]
pub async fn one(Path(name): Path<String>) -> Result<Json<Manifest>, ApiError> {
    registry().get(&name).map(|m| Json(m.manifest.clone())).ok_or_else(|| ApiError::not_found("name", format!("no model named '{name}'")))
}
