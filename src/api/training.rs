//! `/v1/training/jobs`: submit, list, inspect, stream, cancel, download artifacts.

use super::auth::Caller;
use super::body::JsonBody;
use super::error::{ApiError, ProblemDetails};
use super::jobs::{self, Job, ListQuery};
use super::params::{ApiPath, ApiQuery};
use super::state::AppState;
use crate::jobs::training::TrainingRequest;
use crate::jobs::TRAINING;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::stream::Stream;
use std::convert::Infallible;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/training/jobs", get(list).post(submit))
        .route("/v1/training/jobs/{id}", get(one).delete(cancel))
        .route("/v1/training/jobs/{id}/metrics", get(metrics))
        .route("/v1/training/jobs/{id}/events", get(events))
        .route("/v1/training/jobs/{id}/artifacts/{name}", get(artifact))
}

/// Queue a training job. 202 with `Location`; 429 with `Retry-After` when the queue is full.
#[utoipa::path(
    post,
    path = "/v1/training/jobs",
    tag = "training",
    operation_id = "submit_training_job",
    request_body = TrainingRequest,
    responses(
        (status = 202, body = Job, headers(("Location" = String, description = "the job's URL"))),
        (status = 400, description = "malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "missing or wrong API key", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "invalid field", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "queue full (Retry-After)", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<TrainingRequest>,
) -> Result<Response, ApiError> {
    // Blocking: a `gymnasium:` env is started in Python once to read its spaces.
    let (limits, checked, envs) =
        (state.config.training_limits.clone(), request.clone(), state.config.jobs.envs.clone());
    tokio::task::spawn_blocking(move || checked.validate(&limits, &envs))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("validation task failed: {e}")))??;
    jobs::accept(&state, &caller, TRAINING, "/v1/training/jobs", &request).await
}

/// Training jobs, newest first.
#[utoipa::path(get, path = "/v1/training/jobs", tag = "training", operation_id = "list_training_jobs", params(ListQuery), responses(
    (status = 200, body = Vec<Job>),
    (status = 400, description = "bad filter", body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<ApiQuery<ListQuery>, ApiError>,
) -> Result<Json<Vec<Job>>, ApiError> {
    jobs::list(&state, &caller, TRAINING, query).await
}

/// One job: state, steps done, latest evaluation, outcome.
#[utoipa::path(get, path = "/v1/training/jobs/{id}", tag = "training", operation_id = "get_training_job", params(("id" = String, Path)), responses(
    (status = 200, body = Job),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Job>, ApiError> {
    Ok(Json(jobs::found(&state, &caller, &id, TRAINING).await?))
}

/// The evaluation curve (one object per evaluation, as in metrics.jsonl).
#[utoipa::path(get, path = "/v1/training/jobs/{id}/metrics", tag = "training", operation_id = "get_training_metrics", params(("id" = String, Path)), responses(
    (status = 200, body = Vec<Object>),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn metrics(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Vec<serde_json::Value>>, ApiError> {
    jobs::curve(&state, &caller, &id, TRAINING).await
}

/// Server-sent events: first `state` (the job now), then every `evaluation` recorded so far,
/// then `progress` ({steps}), each new `evaluation` and `state` (changes) until the job ends.
#[utoipa::path(get, path = "/v1/training/jobs/{id}/events", tag = "training", operation_id = "stream_training_events", params(("id" = String, Path)), responses(
    (status = 200, description = "text/event-stream: a sequence of events", content_type = "text/event-stream", body = super::jobs::StreamEvent),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    jobs::events(&state, &caller, &id, TRAINING).await
}

/// Cancel a queued or running job (it checkpoints and ends as `cancelled`); 409 when it has
/// already ended.
#[utoipa::path(delete, path = "/v1/training/jobs/{id}", tag = "training", operation_id = "cancel_training_job", params(("id" = String, Path)), responses(
    (status = 202, body = Job),
    (status = 401, body = ProblemDetails, content_type = "application/problem+json"),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
    (status = 409, body = ProblemDetails, content_type = "application/problem+json")
), security((), ("bearer" = [])))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<(StatusCode, Json<Job>), ApiError> {
    jobs::cancel(&state, &caller, &id, TRAINING).await
}

/// A file of the job's folder: weights (`<store>.safetensors`), `config.json`, `metrics.jsonl`,
/// `observation_norm.json`, and the whole-run checkpoint (`state.safetensors`, `state.json`).
#[utoipa::path(get, path = "/v1/training/jobs/{id}/artifacts/{name}", tag = "training", operation_id = "get_training_artifact", params(("id" = String, Path), ("name" = String, Path)), responses(
    (status = 200, description = "the file", content_type = "application/octet-stream", body = Vec<u8>),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn artifact(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, name)): ApiPath<(String, String)>,
) -> Result<Response, ApiError> {
    jobs::found(&state, &caller, &id, TRAINING).await?;
    // Only names the folder lists: no paths, no traversal.
    if !state.jobs.artifacts(&id).contains(&name) {
        return Err(ApiError::not_found("name", format!("job '{id}' has no artifact '{name}'")));
    }
    let bytes = tokio::fs::read(state.jobs.run_dir(&id).join(&name)).await.map_err(|e| ApiError::Internal(e.into()))?;
    let content_type = if name.ends_with(".json") {
        "application/json"
    } else if name.ends_with(".jsonl") {
        "application/jsonl"
    } else {
        "application/octet-stream"
    };
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}
