//! `/v1/training/jobs`: submit, list, inspect, stream, cancel, download artifacts.

use super::error::{ApiError, ProblemDetails};
use super::state::AppState;
use crate::jobs::training::TrainingRequest;
use crate::jobs::{SubmitError, TRAINING};
use crate::store::{JobRecord, JobState};
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::stream::{self, Stream, StreamExt};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use tokio_stream::wrappers::BroadcastStream;
use utoipa::{IntoParams, ToSchema};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/training/jobs", get(list).post(submit))
        .route("/v1/training/jobs/{id}", get(one).delete(cancel))
        .route("/v1/training/jobs/{id}/metrics", get(metrics))
        .route("/v1/training/jobs/{id}/events", get(events))
        .route("/v1/training/jobs/{id}/artifacts/{name}", get(artifact))
}

/// A training job: its row plus the files it has written so far.
#[derive(Serialize, ToSchema)]
pub struct TrainingJob {
    #[serde(flatten)]
    pub job: JobRecord,
    /// Names under `artifacts/{name}`: config.json, metrics.jsonl, <net>.safetensors, ...
    pub artifacts: Vec<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only jobs in this state (queued, running, succeeded, failed, cancelled, interrupted).
    pub state: Option<String>,
    /// At most this many, newest first (default 100, at most 1000).
    pub limit: Option<i64>,
}

async fn found(state: &AppState, id: &str) -> Result<TrainingJob, ApiError> {
    let job = state.jobs.store().job(id).await?.filter(|j| j.kind == TRAINING).ok_or_else(|| ApiError::not_found("id", format!("no training job '{id}'")))?;
    Ok(TrainingJob { artifacts: state.jobs.artifacts(&job.id), job })
}

/// Queue a training job. 202 with `Location`; 429 with `Retry-After` when the queue is full.
#[utoipa::path(
    post,
    path = "/v1/training/jobs",
    tag = "training",
    operation_id = "submit_training_job",
    request_body = TrainingRequest,
    responses(
        (status = 202, body = TrainingJob, headers(("Location" = String, description = "the job's URL"))),
        (status = 400, description = "malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "missing or wrong API key", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "invalid field", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "queue full (Retry-After)", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn submit(State(state): State<AppState>, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let body = body.map_err(|e| ApiError::bad_request("body", e.body_text()))?;
    let request: TrainingRequest = serde_json::from_slice(&body).map_err(|e| {
        let message = e.to_string();
        // serde names a missing or unknown field in its message; pass it on as the field.
        let field = message.split('`').nth(1).filter(|_| message.contains("field")).unwrap_or("body").to_string();
        ApiError::bad_request(field, format!("invalid training request: {message}"))
    })?;
    request.validate(&state.config.training_limits)?;
    let job = state.jobs.submit_training(&request).await.map_err(|e| match e {
        SubmitError::QueueFull(_) => ApiError::TooManyRequests(e.to_string()),
        SubmitError::Store(e) => ApiError::Internal(e),
    })?;
    let location = format!("/v1/training/jobs/{}", job.id);
    let body = TrainingJob { artifacts: Vec::new(), job };
    Ok((StatusCode::ACCEPTED, [(header::LOCATION, location)], Json(body)).into_response())
}

/// Training jobs, newest first.
#[utoipa::path(get, path = "/v1/training/jobs", tag = "training", operation_id = "list_training_jobs", params(ListQuery), responses(
    (status = 200, body = Vec<TrainingJob>),
    (status = 400, description = "bad filter", body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn list(State(state): State<AppState>, query: Result<Query<ListQuery>, QueryRejection>) -> Result<Json<Vec<TrainingJob>>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request("query", e.body_text()))?;
    let filter = match &query.state {
        None => None,
        Some(s) => Some(JobState::parse(s).ok_or_else(|| ApiError::bad_request("state", format!("unknown state '{s}'")))?),
    };
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request("limit", "expected 1..=1000"));
    }
    let jobs = state.jobs.store().jobs(TRAINING, filter, limit).await?;
    Ok(Json(jobs.into_iter().map(|job| TrainingJob { artifacts: state.jobs.artifacts(&job.id), job }).collect()))
}

/// One job: state, steps done, latest evaluation, outcome.
#[utoipa::path(get, path = "/v1/training/jobs/{id}", tag = "training", operation_id = "get_training_job", params(("id" = String, Path)), responses(
    (status = 200, body = TrainingJob),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn one(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<TrainingJob>, ApiError> {
    Ok(Json(found(&state, &id).await?))
}

/// The evaluation curve (one object per evaluation, as in metrics.jsonl).
#[utoipa::path(get, path = "/v1/training/jobs/{id}/metrics", tag = "training", operation_id = "get_training_metrics", params(("id" = String, Path)), responses(
    (status = 200, body = Vec<Object>),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn metrics(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Vec<serde_json::Value>>, ApiError> {
    found(&state, &id).await?;
    Ok(Json(state.jobs.store().metrics(&id).await?))
}

/// Server-sent events: first `state` (the job now), then `progress` ({steps}), `evaluation`
/// (one evaluation) and `state` (changes) until the job ends.
#[utoipa::path(get, path = "/v1/training/jobs/{id}/events", tag = "training", operation_id = "stream_training_events", params(("id" = String, Path)), responses(
    (status = 200, description = "text/event-stream", content_type = "text/event-stream", body = String),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn events(State(state): State<AppState>, Path(id): Path<String>) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Subscribe before reading the row, so no change between the two is lost.
    let receiver = state.jobs.subscribe(&id);
    let job = found(&state, &id).await?;
    let first = Event::default().event("state").json_data(&job.job).unwrap_or_default();
    // The stream ends when the job does: its channel closes after the final `state` event.
    let updates = match receiver {
        Some(receiver) if !job.job.state.is_terminal() => BroadcastStream::new(receiver).filter_map(|item| async move { item.ok() }).boxed(),
        _ => stream::empty().boxed(),
    };
    let stream = stream::once(async move { first })
        .chain(updates.map(|e| Event::default().event(e.event).json_data(&e.data).unwrap_or_default()))
        .map(Ok);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Cancel a queued or running job (it checkpoints and ends as `cancelled`); 409 when it has
/// already ended.
#[utoipa::path(delete, path = "/v1/training/jobs/{id}", tag = "training", operation_id = "cancel_training_job", params(("id" = String, Path)), responses(
    (status = 202, body = TrainingJob),
    (status = 401, body = ProblemDetails, content_type = "application/problem+json"),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
    (status = 409, body = ProblemDetails, content_type = "application/problem+json")
), security((), ("bearer" = [])))]
pub async fn cancel(State(state): State<AppState>, Path(id): Path<String>) -> Result<(StatusCode, Json<TrainingJob>), ApiError> {
    match state.jobs.cancel(&id).await? {
        None => Err(ApiError::not_found("id", format!("no training job '{id}'"))),
        Some(Err(ended)) => Err(ApiError::Conflict { field: "id".into(), message: format!("job '{id}' has already ended ({})", ended.as_str()) }),
        Some(Ok(job)) => Ok((StatusCode::ACCEPTED, Json(TrainingJob { artifacts: state.jobs.artifacts(&job.id), job }))),
    }
}

/// A file of the job's folder: weights (`*.safetensors`), `config.json`, `metrics.jsonl`,
/// `observation_norm.json`, `progress.json`.
#[utoipa::path(get, path = "/v1/training/jobs/{id}/artifacts/{name}", tag = "training", operation_id = "get_training_artifact", params(("id" = String, Path), ("name" = String, Path)), responses(
    (status = 200, description = "the file", content_type = "application/octet-stream", body = Vec<u8>),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn artifact(State(state): State<AppState>, Path((id, name)): Path<(String, String)>) -> Result<Response, ApiError> {
    found(&state, &id).await?;
    // Only names the folder lists: no paths, no traversal.
    if !state.jobs.artifacts(&id).contains(&name) {
        return Err(ApiError::not_found("name", format!("job '{id}' has no artifact '{name}'")));
    }
    let bytes = tokio::fs::read(state.jobs.run_dir(&id).join(&name)).await.map_err(|e| ApiError::Internal(e.into()))?;
    let content_type = if name.ends_with(".json") { "application/json" } else if name.ends_with(".jsonl") { "application/jsonl" } else { "application/octet-stream" };
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}
