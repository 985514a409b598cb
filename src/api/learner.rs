//! `/v1/learner` (the learner role): rollout processes post binary transition batches
//! and fetch the published weights; anyone reads the learner's status.

use super::error::{ApiError, ProblemDetails};
use super::state::AppState;
use crate::drl::apex::learner::{LearnerStatus, Refused, Shared};
use crate::drl::apex::wire::Transitions;
use crate::problems::ProblemError;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::sync::Arc;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/learner", get(status))
        .route("/v1/learner/weights", get(weights))
        .route("/v1/learner/transitions", post(transitions))
}

fn learner(state: &AppState) -> Result<&Arc<Shared>, ApiError> {
    state.learner.as_ref().ok_or_else(|| ApiError::not_found("learner", "this replica is not a learner"))
}

/// The learner's configuration, counters (updates and transitions per second, by rollout), the
/// published weights' version and, once done, the final return.
#[utoipa::path(get, path = "/v1/learner", tag = "learner", operation_id = "get_learner", responses(
    (status = 200, body = LearnerStatus),
    (status = 404, description = "not a learner replica", body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn status(State(state): State<AppState>) -> Result<Json<LearnerStatus>, ApiError> {
    Ok(Json(learner(&state)?.status()))
}

/// The latest published weights (every store of the agent; see `drl::apex::wire`), with their
/// version in `x-weights-version`.
#[utoipa::path(get, path = "/v1/learner/weights", tag = "learner", operation_id = "get_learner_weights", responses(
    (status = 200, description = "the weights", content_type = "application/octet-stream", body = Vec<u8>),
    (status = 404, description = "not a learner replica", body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn weights(State(state): State<AppState>) -> Result<Response, ApiError> {
    let (version, bytes) = learner(&state)?.weights();
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream".to_string()),
        (header::HeaderName::from_static("x-weights-version"), version.to_string()),
    ];
    Ok((headers, bytes.as_ref().clone()).into_response())
}

/// A batch of transitions (`application/octet-stream`, the `RLTX` format of
/// `drl::apex::wire`), from the rollout named in `x-rollout`. Answers the learner's status (the
/// weights version to fetch, `done` to stop); 503 with `Retry-After` while the learner has
/// `MAX_PENDING_BATCHES` batches waiting.
#[utoipa::path(post, path = "/v1/learner/transitions", tag = "learner", operation_id = "post_learner_transitions",
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses(
        (status = 200, body = LearnerStatus),
        (status = 404, description = "not a learner replica", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "a malformed batch, or another env's widths", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "the learner is behind (Retry-After)", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn transitions(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<LearnerStatus>, ApiError> {
    let shared = learner(&state)?.clone();
    let rollout = headers.get("x-rollout").and_then(|v| v.to_str().ok()).unwrap_or("anonymous");
    let rollout = rollout.chars().take(64).collect::<String>();
    let batch =
        Transitions::decode(&body).map_err(|e| ApiError::Problem(ProblemError::invalid("body", format!("{e:#}"))))?;
    match shared.offer(&rollout, batch) {
        Ok(status) => Ok(Json(status)),
        Err(Refused::Invalid(message)) => Err(ApiError::Problem(ProblemError::invalid("body", message))),
        Err(busy @ Refused::Busy(_)) => Err(ApiError::Unavailable(busy.to_string())),
    }
}
