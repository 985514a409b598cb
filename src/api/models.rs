//! `GET /v1/models` and `GET /v1/models/{name}`: the verified model registry.

use super::body::JsonBody;
use super::error::{ApiError, ProblemDetails};
use super::state::AppState;
use crate::jobs::TRAINING;
use crate::models::{Manifest, PromoteError};
use crate::problems::ProblemError;
use crate::store::JobState;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
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
    Router::new().route("/v1/models", get(list).post(promote)).route("/v1/models/{name}", get(one))
}

/// `POST /v1/models`: which job's policy, under which name.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromoteRequest {
    /// A succeeded (or cancelled, checkpointed) training job, single- or multi-agent.
    pub job_id: String,
    /// The model's name: 1-64 letters, digits, '.', '_' or '-'.
    pub name: String,
}

/// Promote a training job's policy into the registry (problem `drl`): its checkpoint is copied
/// into `<data dir>/models/<name>` with a manifest hashing every file, verified by loading, and
/// listed from now on (and after restarts).
#[utoipa::path(
    post,
    path = "/v1/models",
    tag = "models",
    operation_id = "promote_model",
    request_body = PromoteRequest,
    responses(
        (status = 201, body = Manifest, headers(("Location" = String, description = "the model's URL"))),
        (status = 400, description = "malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "missing or wrong API key", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "no such training job", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "the name is taken, or the job has not finished", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "invalid name, or no loadable policy in the job", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn promote(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<PromoteRequest>,
) -> Result<Response, ApiError> {
    let job = state
        .jobs
        .store()
        .job(&request.job_id)
        .await?
        .filter(|j| j.kind == TRAINING)
        .ok_or_else(|| ApiError::not_found("job_id", format!("no training job '{}'", request.job_id)))?;
    if !matches!(job.state, JobState::Succeeded | JobState::Cancelled) {
        return Err(ApiError::Conflict {
            field: "job_id".into(),
            message: format!("job '{}' is {}; promote a finished job", job.id, job.state.as_str()),
        });
    }
    let run_dir = state.jobs.run_dir(&job.id);
    let training = serde_json::json!({"job_id": job.id, "request": job.request});
    let metrics = serde_json::json!({"latest_evaluation": job.latest, "result": job.result});
    let (name, models_dir) = (request.name.clone(), state.config.data_dir.join("models"));
    let registry = state.solve.models.clone();
    let promoted = tokio::task::spawn_blocking(move || {
        registry.promote(&run_dir, &models_dir, &name, training, metrics, crate::drl::run::is_policy_file)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("promotion task failed: {e}")))?;
    match promoted {
        Ok(manifest) => {
            Ok((StatusCode::CREATED, [(header::LOCATION, format!("/v1/models/{}", manifest.name))], Json(manifest))
                .into_response())
        }
        Err(PromoteError::Exists(name)) => {
            Err(ApiError::Conflict { field: "name".into(), message: format!("a model named '{name}' exists") })
        }
        Err(PromoteError::Invalid { field, message }) => Err(ApiError::Problem(ProblemError::invalid(field, message))),
        Err(PromoteError::Io(error)) => Err(ApiError::Internal(error)),
    }
}

#[utoipa::path(get, path = "/v1/models", tag = "models", operation_id = "list_models", responses((status = 200, description = "Every loaded model", body = ModelList)))]
pub async fn list(State(state): State<AppState>) -> Json<ModelList> {
    let r = &state.solve.models;
    Json(ModelList {
        models: r.manifests(),
        rejected: r
            .rejected
            .iter()
            .map(|(folder, reason)| RejectedModel { folder: folder.clone(), reason: reason.clone() })
            .collect(),
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
pub async fn one(State(state): State<AppState>, Path(name): Path<String>) -> Result<Json<Manifest>, ApiError> {
    state
        .solve
        .models
        .get(&name)
        .map(|m| Json(m.manifest.clone()))
        .ok_or_else(|| ApiError::not_found("name", format!("no model named '{name}'")))
}
