//! `/v1/problems`: the registry and the solve endpoint.

use super::error::{ApiError, ProblemDetails};
use super::params::{ApiPath, ApiQuery};
use super::state::AppState;
use crate::problems::{self, ProblemInput, SolveOptions, SolveReport};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::{PartialSchema, ToSchema};

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/problems", get(list)).route("/v1/problems/{name}/solve", post(solve))
}

/// A registered problem and what it accepts.
#[derive(Serialize, ToSchema)]
pub struct ProblemInfo {
    pub name: String,
    pub summary: String,
    /// Input formats: `json` (application/json) and the native text format (text/plain).
    pub formats: Vec<String>,
    /// Classical baselines, usable as the `method` option.
    pub baselines: Vec<String>,
    /// JSON schema of the `instance` object.
    #[schema(value_type = Object)]
    pub instance_schema: serde_json::Value,
    /// JSON schema of `options` (also accepted as query parameters).
    #[schema(value_type = Object)]
    pub options_schema: serde_json::Value,
}

/// A JSON solve request. Options may also come as query parameters; body options win.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SolveRequest {
    /// The instance in the problem's JSON format (see `GET /v1/problems`).
    #[schema(value_type = Object)]
    pub instance: serde_json::Value,
    #[serde(default)]
    pub options: Option<SolveOptions>,
}

/// Every registered problem with its instance and option schemas.
#[utoipa::path(get, path = "/v1/problems", tag = "problems", operation_id = "list_problems", responses((status = 200, body = Vec<ProblemInfo>)))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<ProblemInfo>> {
    let options_schema = serde_json::to_value(SolveOptions::schema()).unwrap_or_default();
    Json(
        state
            .solve
            .problems
            .iter()
            .map(|p| ProblemInfo {
                name: p.name().into(),
                summary: p.summary().into(),
                formats: p.formats().iter().map(|f| f.to_string()).collect(),
                baselines: p.baselines().iter().map(|b| b.to_string()).collect(),
                instance_schema: p.instance_schema(),
                options_schema: options_schema.clone(),
            })
            .collect(),
    )
}

/// Solve an instance: JSON `{instance, options}` or the native text format (`text/plain`, e.g.
/// Gset for Max-Cut) with options as query parameters.
#[utoipa::path(
    post,
    path = "/v1/problems/{name}/solve",
    tag = "problems",
    operation_id = "solve",
    params(("name" = String, Path, description = "problem name, e.g. maxcut"), SolveOptions),
    request_body(content(
        (SolveRequest = "application/json"),
        (String = "text/plain")
    )),
    responses(
        (status = 200, body = SolveReport),
        (status = 400, description = "malformed body or query", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "unknown problem", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "body or instance over the limits", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 415, description = "unsupported content type", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "invalid instance or option", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "missing or wrong API key (when keys are configured)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "every solver slot busy (Retry-After)", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn solve(
    State(state): State<AppState>,
    caller: super::auth::Caller,
    ApiPath(name): ApiPath<String>,
    query: Result<ApiQuery<SolveOptions>, ApiError>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<SolveReport>, ApiError> {
    let problem = state.solve.problems.find(&name)?;
    let ApiQuery(query_options) = query?;
    let body = body.map_err(|e| super::body::rejection(e, state.config.max_body_bytes))?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let request = match mime.as_str() {
        "application/json" => {
            let request: SolveRequest = super::body::from_json(&body)?;
            let options = query_options.merged_with(request.options.unwrap_or_default());
            (ParsedBody::Json(request.instance), options)
        }
        "text/plain" | "" => {
            let text = String::from_utf8(body.to_vec())
                .map_err(|_| ApiError::bad_request("body", "text instance is not valid UTF-8"))?;
            (ParsedBody::Text(text), query_options)
        }
        other => return Err(ApiError::UnsupportedMediaType(other.to_string())),
    };
    super::models::check_visible(&state, &caller, request.1.model.as_deref(), "model")?;
    let permit = state
        .solve_slots
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::Busy(state.config.max_concurrent_solves))?;
    let context = state.solve.clone();
    // The search is CPU-bound: keep it off the async workers so /health answers meanwhile.
    let report = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let (body, options) = request;
        let input = match &body {
            ParsedBody::Json(value) => ProblemInput::Json(value),
            ParsedBody::Text(text) => ProblemInput::Text(text),
        };
        problems::solve(problem, input, &options, &context.limits, &context.models)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("solver task failed: {e}")))??;
    state.metrics.observe_solve(&name, report.elapsed_ms / 1e3);
    tracing::info!(problem = %name, objective = report.objective, status = ?report.status, elapsed_ms = report.elapsed_ms, "solved");
    Ok(Json(report))
}

enum ParsedBody {
    Json(serde_json::Value),
    Text(String),
}
