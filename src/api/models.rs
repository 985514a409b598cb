//! `GET /v1/models` and `GET /v1/models/{name}`: the verified model registry.

use super::auth::Caller;
use super::body::JsonBody;
use super::error::{ApiError, ProblemDetails};
use super::params::ApiPath;
use super::state::AppState;
use crate::jobs::TRAINING;
use crate::models::{Manifest, PromoteError};
use crate::problems::ProblemError;
use crate::store::JobState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
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
    Router::new()
        .route("/v1/models", get(list).post(promote))
        .route("/v1/models/{name}", get(one))
        .route("/v1/models/{name}/actions", post(actions))
}

/// Observation rows one `POST /v1/models/{name}/actions` takes at most.
pub const MAX_OBSERVATIONS: usize = 4_096;

/// `POST /v1/models/{name}/actions`: observations to act on.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionsRequest {
    /// One row per observation, each as wide as the policy's env observations; at most 4,096 rows.
    pub observations: Vec<Vec<f32>>,
}

/// The policy's deterministic actions, one row per observation (a discrete action is its index).
#[derive(Serialize, ToSchema)]
pub struct ActionsResponse {
    pub actions: Vec<Vec<f32>>,
    /// The env the policy was trained on.
    pub env: String,
}

/// `POST /v1/models`: which job's policy, under which name.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromoteRequest {
    /// A succeeded (or cancelled, checkpointed) training job, single- or multi-agent.
    pub job_id: String,
    /// The model's name: 1-64 letters, digits, '.', '_' or '-', not starting with '.'.
    #[schema(pattern = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$")]
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
    caller: Caller,
    JsonBody(request): JsonBody<PromoteRequest>,
) -> Result<Response, ApiError> {
    let job = state
        .jobs
        .store()
        .job(&request.job_id)
        .await?
        .filter(|j| j.kind == TRAINING && caller.sees(j.owner.as_deref()))
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
    let name = request.name.clone();
    promoted(&state, &caller, run_dir, name, training, metrics).await
}

/// Promotes the policy in `run_dir` as `name`, owned by the caller: 201 with `Location`.
pub async fn promoted(
    state: &AppState,
    caller: &Caller,
    run_dir: std::path::PathBuf,
    name: String,
    training: serde_json::Value,
    metrics: serde_json::Value,
) -> Result<Response, ApiError> {
    let models_dir = state.config.data_dir.join("models");
    let registry = state.solve.models.clone();
    let owner = caller.owner().map(str::to_string);
    let promoted = tokio::task::spawn_blocking(move || {
        let is_policy_file = crate::drl::run::is_policy_file;
        let provenance = crate::models::Provenance { training, metrics, owner };
        registry.promote(&run_dir, &models_dir, &name, provenance, is_policy_file)
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
pub async fn list(State(state): State<AppState>, caller: Caller) -> Json<ModelList> {
    let r = &state.solve.models;
    Json(ModelList {
        models: r.manifests().into_iter().filter(|m| m.owner.is_none() || caller.sees(m.owner.as_deref())).collect(),
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
pub async fn one(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<Manifest>, ApiError> {
    visible_model(&state, &caller, &name).map(|m| Json(m.manifest.clone()))
}

/// The model `name` when the caller sees it (shipped ones, its own promotions, any for an
/// admin); a 404 on `name` otherwise, as for a missing one.
fn visible_model<'a>(
    state: &'a AppState,
    caller: &Caller,
    name: &str,
) -> Result<&'a crate::models::RegisteredModel, ApiError> {
    state
        .solve
        .models
        .get(name)
        .filter(|m| m.manifest.owner.is_none() || caller.sees(m.manifest.owner.as_deref()))
        .ok_or_else(|| ApiError::not_found("name", format!("no model named '{name}'")))
}

/// The deterministic actions of a promoted single-agent deep-RL policy (problem `drl`) for a
/// batch of observations, on the CPU: what a client's `predict(obs)` calls.
#[utoipa::path(
    post,
    path = "/v1/models/{name}/actions",
    tag = "models",
    operation_id = "model_actions",
    params(("name" = String, Path, description = "Model name")),
    request_body = ActionsRequest,
    responses(
        (status = 200, body = ActionsResponse),
        (status = 400, description = "malformed JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 401, description = "missing or wrong API key", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "no such model", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "more than 4,096 observations", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "not a deep-RL policy, a multi-agent one, or rows of the wrong width", body = ProblemDetails, content_type = "application/problem+json")
    ),
    security((), ("bearer" = []))
)]
pub async fn actions(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
    JsonBody(request): JsonBody<ActionsRequest>,
) -> Result<Json<ActionsResponse>, ApiError> {
    let model = visible_model(&state, &caller, &name)?;
    let policy = model.policy::<crate::drl::run::DrlPolicy>().ok_or_else(|| {
        ApiError::Problem(ProblemError::invalid(
            "name",
            format!("model '{name}' serves {}; actions are for deep-RL policies (problem drl)", model.manifest.problem),
        ))
    })?;
    let rows = request.observations.len();
    if rows > MAX_OBSERVATIONS {
        return Err(ApiError::Problem(ProblemError::too_large(
            "observations",
            format!("{rows} rows exceed the limit of {MAX_OBSERVATIONS}"),
        )));
    }
    if let Some((i, _)) = request.observations.iter().enumerate().find(|(_, row)| row.iter().any(|v| !v.is_finite())) {
        return Err(ApiError::Problem(ProblemError::invalid(
            format!("observations[{i}]"),
            "holds a value that is not a finite number",
        )));
    }
    let (dir, env, envs) = (policy.dir.clone(), policy.env.clone(), state.config.jobs.envs.clone());
    let permit = state
        .solve_slots
        .clone()
        .try_acquire_owned()
        .map_err(|_| ApiError::Busy(state.config.max_concurrent_solves))?;
    let acted = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        crate::drl::run::policy_actions(&dir, &request.observations, &envs)
    })
    .await
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("policy task failed: {e}")))?
    .map_err(|e| ApiError::Internal(anyhow::anyhow!("model '{name}': {e:#}")))?;
    match acted {
        Ok(actions) => Ok(Json(ActionsResponse { actions, env })),
        Err(why) => Err(ApiError::Problem(ProblemError::invalid("observations", why))),
    }
}

/// A solve may name only a model the caller sees (shipped ones, its own promotions, any for an
/// admin); another owner's is as unknown as a missing one (a 422 on `field`).
pub fn check_visible(state: &AppState, caller: &Caller, name: Option<&str>, field: &str) -> Result<(), ApiError> {
    let hidden = name
        .and_then(|name| state.solve.models.get(name))
        .is_some_and(|m| m.manifest.owner.is_some() && !caller.sees(m.manifest.owner.as_deref()));
    match name {
        Some(name) if hidden => {
            Err(ApiError::Problem(ProblemError::invalid(field, format!("no model named '{name}'"))))
        }
        _ => Ok(()),
    }
}
