//! `/v1/populations`: population training (PBT, tournament) over the job queue, its
//! leaderboard, cancel, and promotion of the leader or an ensemble into `/v1/models`.

use super::auth::Caller;
use super::body::JsonBody;
use super::error::{ApiError, ProblemDetails};
use super::jobs::submit_error;
use super::params::{ApiPath, ApiQuery};
use super::state::AppState;
use crate::jobs::population::{latest_per_member, PopulationRequest};
use crate::store::{Entry, PopulationRecord};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/populations", get(list).post(submit))
        .route("/v1/populations/{id}", get(one).delete(cancel))
        .route("/v1/populations/{id}/models", post(promote))
}

/// A population with its leaderboard.
#[derive(Serialize, ToSchema)]
pub struct Population {
    #[serde(flatten)]
    pub population: PopulationRecord,
    /// Every evaluated member round, best score first.
    pub leaderboard: Vec<Entry>,
    /// Each member's latest evaluated round, best first.
    pub members: Vec<Entry>,
    /// Member rounds and evaluations by state.
    #[schema(value_type = Object)]
    pub jobs: serde_json::Value,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PopulationListQuery {
    /// At most this many, newest first (default 100, at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

async fn view(state: &AppState, population: PopulationRecord) -> Result<Population, ApiError> {
    let store = state.jobs.store();
    let leaderboard = store.entries(&population.id).await?;
    let members = latest_per_member(&leaderboard).into_iter().cloned().collect();
    let mut jobs = serde_json::Map::new();
    for job in store.population_jobs(&population.id).await? {
        let counts = jobs.entry(job.kind.clone()).or_insert_with(|| serde_json::json!({}));
        let n = counts[job.state.as_str()].as_i64().unwrap_or(0);
        counts[job.state.as_str()] = serde_json::json!(n + 1);
    }
    Ok(Population { population, leaderboard, members, jobs: serde_json::Value::Object(jobs) })
}

async fn found(state: &AppState, caller: &Caller, id: &str) -> Result<PopulationRecord, ApiError> {
    state
        .jobs
        .store()
        .population(id)
        .await?
        .filter(|p| caller.sees(p.owner.as_deref()))
        .ok_or_else(|| ApiError::not_found("id", format!("no population '{id}'")))
}

/// Start a population: its members' first rounds are queued at once. 202 with `Location`;
/// 429 with `Retry-After` when the queue cannot take them.
#[utoipa::path(
    post,
    path = "/v1/populations",
    tag = "populations",
    operation_id = "submit_population",
    request_body = PopulationRequest,
    responses(
        (status = 202, body = Population, headers(("Location" = String, description = "the population's URL"))),
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
    JsonBody(request): JsonBody<PopulationRequest>,
) -> Result<Response, ApiError> {
    let limits = (state.config.training_limits.clone(), state.config.population_limits.clone());
    let (checked, envs) = (request.clone(), state.config.jobs.envs.clone());
    // Validation builds each explored value's learner once: off the async runtime.
    tokio::task::spawn_blocking(move || checked.validate(&limits.0, &limits.1, &envs))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("validation task failed: {e}")))??;
    let population = state.jobs.submit_population(&request, caller.owner()).await.map_err(submit_error)?;
    let location = format!("/v1/populations/{}", population.id);
    let body = view(&state, population).await?;
    Ok((StatusCode::ACCEPTED, [(header::LOCATION, location)], Json(body)).into_response())
}

/// Populations, newest first (a key without `admin` sees its own).
#[utoipa::path(get, path = "/v1/populations", tag = "populations", operation_id = "list_populations", params(PopulationListQuery), responses(
    (status = 200, body = Vec<PopulationRecord>),
    (status = 400, description = "bad limit", body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<PopulationListQuery>,
) -> Result<Json<Vec<PopulationRecord>>, ApiError> {
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request("limit", "expected 1..=1000"));
    }
    Ok(Json(state.jobs.store().populations(caller.only_own(), limit).await?))
}

/// One population: state, rounds, the leaderboard (ranked on the evaluator's scores) and each
/// member's latest round with the hyperparameters and origin (start, continue, exploit, generate).
#[utoipa::path(get, path = "/v1/populations/{id}", tag = "populations", operation_id = "get_population", params(("id" = String, Path)), responses(
    (status = 200, body = Population),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json")
))]
pub async fn one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Population>, ApiError> {
    let population = found(&state, &caller, &id).await?;
    Ok(Json(view(&state, population).await?))
}

/// Cancel a running population: its waiting rounds are dropped, running ones stop at their next
/// lease renewal. 409 when it has already ended.
#[utoipa::path(delete, path = "/v1/populations/{id}", tag = "populations", operation_id = "cancel_population", params(("id" = String, Path)), responses(
    (status = 202, body = Population),
    (status = 401, body = ProblemDetails, content_type = "application/problem+json"),
    (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
    (status = 409, body = ProblemDetails, content_type = "application/problem+json")
), security((), ("bearer" = [])))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
) -> Result<(StatusCode, Json<Population>), ApiError> {
    let population = found(&state, &caller, &id).await?;
    if !state.jobs.cancel_population(&population.id).await? {
        return Err(ApiError::Conflict {
            field: "id".into(),
            message: format!("population '{id}' has already ended ({})", population.state),
        });
    }
    let population = found(&state, &caller, &id).await?;
    Ok((StatusCode::ACCEPTED, Json(view(&state, population).await?)))
}

/// `POST /v1/populations/{id}/models`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PopulationModelRequest {
    /// The model's name: 1-64 letters, digits, '.', '_' or '-', not starting with '.'.
    #[schema(pattern = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$")]
    pub name: String,
    /// `leader` (the leaderboard's best checkpoint), `fusion` (the parameter average of the
    /// best members that share the leader's ancestor, promoted only when it scores at least as
    /// well as the leader on fresh seeds) or `weighted` (the best members' actions averaged,
    /// or voted for discrete actions, weighted by their evaluation returns; single-agent).
    #[schema(pattern = "^(leader|fusion|weighted)$")]
    pub method: String,
    /// Fusion and weighted: at most this many members (default 4).
    #[serde(default)]
    #[schema(minimum = 2, maximum = 32)]
    pub members: Option<usize>,
}

/// Promote the population's leader, or an ensemble of its best members (fusion or weighted),
/// into `/v1/models`; the ensembles' metrics hold their score against the leader's.
#[utoipa::path(
    post,
    path = "/v1/populations/{id}/models",
    tag = "populations",
    operation_id = "promote_population_model",
    params(("id" = String, Path)),
    request_body = PopulationModelRequest,
    responses(
        (status = 201, body = crate::models::Manifest, headers(("Location" = String, description = "the model's URL"))),
        (status = 400, description = "malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "the name is taken, or nothing evaluated yet", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "invalid field, or a fusion that does not help", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn promote(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    JsonBody(request): JsonBody<PopulationModelRequest>,
) -> Result<Response, ApiError> {
    if request.members.is_some_and(|k| !(2..=32).contains(&k)) {
        return Err(ApiError::Problem(crate::problems::ProblemError::invalid("members", "expected 2..=32")));
    }
    let population = found(&state, &caller, &id).await?;
    let leaderboard = state.jobs.store().entries(&population.id).await?;
    let Some(leader) = leaderboard.first().cloned() else {
        return Err(ApiError::Conflict {
            field: "id".into(),
            message: "no member round has been evaluated yet".into(),
        });
    };
    let data_dir = state.config.data_dir.clone();
    let training = serde_json::json!({"population_id": population.id, "request": population.request});
    let (run_dir, metrics) = match request.method.as_str() {
        "leader" => {
            let metrics = serde_json::json!({"method": "leader", "leader": leader});
            (data_dir.join(crate::store::relative_folder(&leader.checkpoint)?), metrics)
        }
        "fusion" => {
            let k = request.members.unwrap_or(4);
            let request: PopulationRequest = serde_json::from_value(population.request.clone())
                .map_err(|e| ApiError::Internal(anyhow::anyhow!("the population's request: {e}")))?;
            let staging =
                data_dir.join("populations").join(&population.id).join(format!("fusion-{}", uuid::Uuid::new_v4()));
            let (board, envs) = (leaderboard.clone(), state.config.jobs.envs.clone());
            let fused = tokio::task::spawn_blocking(move || {
                crate::jobs::ensemble::fuse(&data_dir, &request, &board, k, &staging, &envs)
                    .map(|report| (staging, report))
            })
            .await
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("fusion task failed: {e}")))?;
            let (staging, report) = fused.map_err(ApiError::Internal)?;
            if report.members.len() < 2 {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(ApiError::Problem(crate::problems::ProblemError::invalid(
                    "method",
                    "fewer than two evaluated members share the leader's ancestor: nothing to fuse",
                )));
            }
            if !report.helps() {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(ApiError::Problem(crate::problems::ProblemError::invalid(
                    "method",
                    format!(
                        "the fusion of {} members scores {:.3} on fresh seeds, below the leader's {:.3}: promote the leader",
                        report.members.len(),
                        report.fused_score,
                        report.leader_score
                    ),
                )));
            }
            (staging, serde_json::json!({"method": "fusion", "fusion": report}))
        }
        "weighted" => {
            let k = request.members.unwrap_or(4);
            let request: PopulationRequest = serde_json::from_value(population.request.clone())
                .map_err(|e| ApiError::Internal(anyhow::anyhow!("the population's request: {e}")))?;
            if crate::drl::run::check_single_agent(&request.algorithm).is_err() {
                return Err(ApiError::Problem(crate::problems::ProblemError::invalid(
                    "method",
                    "a weighted ensemble serves single-agent policies; promote the leader or a fusion",
                )));
            }
            let staging =
                data_dir.join("populations").join(&population.id).join(format!("weighted-{}", uuid::Uuid::new_v4()));
            let (board, envs) = (leaderboard.clone(), state.config.jobs.envs.clone());
            let built = tokio::task::spawn_blocking(move || {
                crate::jobs::ensemble::weighted(&data_dir, &request, &board, k, &staging, &envs)
                    .map(|report| (staging, report))
            })
            .await
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("ensemble task failed: {e}")))?;
            let (staging, report) = built.map_err(ApiError::Internal)?;
            (staging, serde_json::json!({"method": "weighted", "weighted": report}))
        }
        other => {
            return Err(ApiError::Problem(crate::problems::ProblemError::invalid(
                "method",
                format!("'{other}': expected leader, fusion or weighted"),
            )))
        }
    };
    let staged = request.method != "leader";
    let promoted = super::models::promoted(&state, &caller, run_dir.clone(), request.name, training, metrics).await;
    if staged {
        // The model folder holds its own copy now.
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    promoted
}
