//! `/v1/solve/jobs`: long solves in the background, incumbents streamed as events.

use super::auth::Caller;
use super::body::JsonBody;
use super::error::{ApiError, ProblemDetails};
use super::jobs::{self, Job, ListQuery};
use super::params::{ApiPath, ApiQuery};
use super::state::AppState;
use crate::jobs::solve::SolveJobRequest;
use crate::jobs::SOLVE;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use futures_util::stream::Stream;
use std::convert::Infallible;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/solve/jobs", get(list).post(submit))
        .route("/v1/solve/jobs/{id}", get(one).delete(cancel))
        .route("/v1/solve/jobs/{id}/incumbents", get(incumbents))
        .route("/v1/solve/jobs/{id}/events", get(events))
}

/// Queue a solve (JSON instance). 202 with `Location`; the result is the job's `result` (the
/// same report as `POST /v1/problems/{name}/solve`).
#[utoipa::path(
    post,
    path = "/v1/solve/jobs",
    tag = "solve",
    operation_id = "submit_solve_job",
    request_body = SolveJobRequest,
    responses(
        (status = 202, body = Job, headers(("Location" = String, description = "the job's URL"))),
        (status = 400, description = "malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "missing or wrong API key", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "instance over the limits", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "invalid field", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "queue full (Retry-After)", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<SolveJobRequest>,
) -> Result<Response, ApiError> {
    let model = request.options.as_ref().and_then(|o| o.model.as_deref());
    super::models::check_visible(&state, &caller, model, "options.model")?;
    let (checked, context) = (request.clone(), state.solve.clone());
    // Parsing a large instance is CPU work: off the async workers.
    tokio::task::spawn_blocking(move || checked.prepare(&context).map(drop))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("validation task failed: {e}")))??;
    jobs::accept(&state, &caller, SOLVE, "/v1/solve/jobs", &request).await
}

/// Solve jobs, newest first.
#[utoipa::path(get, path = "/v1/solve/jobs", tag = "solve", operation_id = "list_solve_jobs", params(ListQuery), responses(
    (status = 200, body = Vec<Job>),
    (status = 400, description = "bad filter", body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<ApiQuery<ListQuery>, ApiError>,
) -> Result<Json<Vec<Job>>, ApiError> {
    jobs::list(&state, &caller, SOLVE, query).await
}

/// One solve job: state, latest incumbent, and the report once it has ended.
#[utoipa::path(get, path = "/v1/solve/jobs/{id}", tag = "solve", operation_id = "get_solve_job", params(("id" = String, Path)), responses(
    (status = 200, body = Job),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Job>, ApiError> {
    Ok(Json(jobs::found(&state, &caller, &id, SOLVE).await?))
}

/// Every incumbent so far: `{elapsed_ms, objective}` in order.
#[utoipa::path(get, path = "/v1/solve/jobs/{id}/incumbents", tag = "solve", operation_id = "get_solve_incumbents", params(("id" = String, Path)), responses(
    (status = 200, body = Vec<Object>),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn incumbents(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Vec<serde_json::Value>>, ApiError> {
    jobs::curve(&state, &caller, &id, SOLVE).await
}

/// Server-sent events: first `state`, then every `incumbent` ({elapsed_ms, objective}) recorded
/// so far, then each new one and `state` until the job ends (the last `state` carries the report
/// as `result`).
#[utoipa::path(get, path = "/v1/solve/jobs/{id}/events", tag = "solve", operation_id = "stream_solve_events", params(("id" = String, Path)), responses(
    (status = 200, description = "text/event-stream: a sequence of events", content_type = "text/event-stream", body = super::jobs::StreamEvent),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    jobs::events(&state, &caller, &id, SOLVE).await
}

/// Cancel: the search stops at its next round and the job ends `cancelled` with its best so far.
#[utoipa::path(delete, path = "/v1/solve/jobs/{id}", tag = "solve", operation_id = "cancel_solve_job", params(("id" = String, Path)), responses(
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
    jobs::cancel(&state, &caller, &id, SOLVE).await
}
