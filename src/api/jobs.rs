//! What training and solve jobs share over HTTP: the job view, lookup, listing, the event stream,
//! cancel. `training` and `solve_jobs` route to these.

use super::auth::Caller;
use super::error::ApiError;
use super::params::ApiQuery;
use super::state::AppState;
use crate::jobs::{JobEvent, SubmitError};
use crate::store::{JobRecord, JobState};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::stream::{self, Stream, StreamExt};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;
use utoipa::{IntoParams, ToSchema};

/// A job: its row plus the files it has written so far.
#[derive(Serialize, ToSchema)]
pub struct Job {
    #[serde(flatten)]
    pub job: JobRecord,
    /// Names under `artifacts/{name}` (training jobs): config.json, metrics.jsonl,
    /// <net>.safetensors, ...
    pub artifacts: Vec<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only jobs in this state (queued, running, succeeded, failed, cancelled, interrupted).
    #[param(pattern = "^(queued|running|succeeded|failed|cancelled|interrupted)$")]
    pub state: Option<String>,
    /// At most this many, newest first (default 100, at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// The job `id` of `kind`, when the caller may see it (another owner's job is not found).
pub async fn found(state: &AppState, caller: &Caller, id: &str, kind: &str) -> Result<Job, ApiError> {
    let job = state
        .jobs
        .store()
        .job(id)
        .await?
        .filter(|j| j.kind == kind && caller.sees(j.owner.as_deref()))
        .ok_or_else(|| ApiError::not_found("id", format!("no {kind} job '{id}'")))?;
    Ok(Job { artifacts: state.jobs.artifacts(&job.id), job })
}

/// Queues the request as a job of `kind`: 202 with `Location: {base}/{id}`.
pub async fn accept(
    state: &AppState,
    caller: &Caller,
    kind: &str,
    base: &str,
    request: &impl Serialize,
) -> Result<Response, ApiError> {
    let job = state.jobs.submit(kind, request, caller.owner()).await.map_err(submit_error)?;
    let location = format!("{base}/{}", job.id);
    Ok((StatusCode::ACCEPTED, [(header::LOCATION, location)], Json(Job { artifacts: Vec::new(), job })).into_response())
}

pub fn submit_error(error: SubmitError) -> ApiError {
    match error {
        SubmitError::QueueFull(_) => ApiError::TooManyRequests(error.to_string()),
        SubmitError::Store(e) => ApiError::Internal(e),
    }
}

pub async fn list(
    state: &AppState,
    caller: &Caller,
    kind: &str,
    query: Result<ApiQuery<ListQuery>, ApiError>,
) -> Result<Json<Vec<Job>>, ApiError> {
    let ApiQuery(query) = query?;
    let filter = match &query.state {
        None => None,
        Some(s) => {
            Some(JobState::parse(s).ok_or_else(|| ApiError::bad_request("state", format!("unknown state '{s}'")))?)
        }
    };
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request("limit", "expected 1..=1000"));
    }
    let jobs = state.jobs.store().jobs(kind, filter, caller.only_own(), limit).await?;
    Ok(Json(jobs.into_iter().map(|job| Job { artifacts: state.jobs.artifacts(&job.id), job }).collect()))
}

/// The job's curve: evaluations (training) or incumbents (solve), in order.
pub async fn curve(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kind: &str,
) -> Result<Json<Vec<serde_json::Value>>, ApiError> {
    found(state, caller, id, kind).await?;
    Ok(Json(state.jobs.store().metrics(id).await?))
}

/// One server-sent event of a job's stream, as the document describes it (a client, and
/// schemathesis, read the stream as a sequence of these).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct StreamEvent {
    /// `state` (the job's row; the first event and every change), `progress`, `evaluation`
    /// (training) or `incumbent` (solve).
    #[schema(pattern = "^(state|progress|evaluation|incumbent)$")]
    event: String,
    /// The event's JSON, as text.
    data: String,
}

/// First `state` (the job now), then the job's events until it ends.
pub async fn events(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kind: &str,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Subscribe before reading the row and the curve, so no change after either is lost.
    let receiver = state.jobs.subscribe(id);
    let job = found(state, caller, id, kind).await?;
    let first = Event::default().event("state").json_data(&job.job).unwrap_or_default();
    // The curve so far comes first: a stream opened after the first points (or after the end)
    // still carries all of them, each once.
    let point_event = point_event(&job.job);
    let stored = state.jobs.store().metrics(id).await?;
    let sent = stored.len() as i64;
    let replay = stream::iter(stored.into_iter().map(move |data| JobEvent { event: point_event, data, seq: None }));
    // The stream ends when the job does: its channel closes after the final `state` event.
    let updates = match receiver {
        _ if job.job.state.is_terminal() => stream::empty().boxed(),
        // Replicas share the store: the job may run on another one, so the store tells.
        _ if state.jobs.store().backend() == "postgres" => store_events(state, &job.job, sent as usize).boxed(),
        Some(receiver) => after_replay(receiver, sent).boxed(),
        None => stream::empty().boxed(),
    };
    let stream = stream::once(async move { first })
        .chain(replay.chain(updates).map(|e| Event::default().event(e.event).json_data(&e.data).unwrap_or_default()))
        .map(Ok);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// The job's live events past the `sent` stored points: a point stored between the subscription
/// and the read of the curve reaches both, and goes out once.
fn after_replay(receiver: broadcast::Receiver<JobEvent>, sent: i64) -> impl Stream<Item = JobEvent> {
    BroadcastStream::new(receiver)
        .filter_map(move |item| async move { item.ok().filter(|e| e.seq.is_none_or(|seq| seq >= sent)) })
}

/// What a point of the job's curve is called in its stream.
fn point_event(job: &JobRecord) -> &'static str {
    if job.kind == crate::jobs::SOLVE {
        "incumbent"
    } else {
        "evaluation"
    }
}

/// How often a stream read from the store looks at the job.
const STORE_EVENTS_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// A job's events read from the store (for jobs running on any replica): `state` when it
/// changes, `progress` when its steps do, each new point of its curve (`evaluation` or
/// `incumbent`) after the first `seen`, until the `state` event that ends it, or until this
/// replica has stopped: after the read that follows its jobs' hand-back, whose `state` event says
/// where the job is then (`interrupted`, or `running` with another `runner`). An open stream
/// would otherwise hold the graceful shutdown for as long as the job runs on elsewhere; the
/// client reads on through another replica.
fn store_events(state: &AppState, job: &JobRecord, seen: usize) -> impl Stream<Item = JobEvent> {
    let point_event = point_event(job);
    let start = (state.clone(), job.id.clone(), job.state, job.steps, seen, false);
    stream::unfold(start, move |(state, id, last_state, last_steps, seen, ended)| async move {
        if ended {
            return None;
        }
        loop {
            tokio::time::sleep(STORE_EVENTS_EVERY).await;
            let stopped = state.jobs.stopped();
            let store = state.jobs.store();
            // Only the points not sent yet: the curve grows, each poll reads its tail.
            let (Ok(Some(job)), Ok(curve)) = (store.job(&id).await, store.metrics_from(&id, seen as i64).await) else {
                if stopped {
                    return None;
                }
                continue;
            };
            let mut events: Vec<JobEvent> =
                curve.into_iter().map(|point| JobEvent { event: point_event, data: point, seq: None }).collect();
            let seen = seen + events.len();
            if job.steps != last_steps {
                events.push(JobEvent { event: "progress", data: serde_json::json!({"steps": job.steps}), seq: None });
            }
            // The last read of a stopped replica tells where the job is now: back in the queue, or
            // already taken by another replica (its runner).
            if job.state != last_state || stopped {
                let data = serde_json::json!({"state": job.state.as_str(), "result": job.result, "error": job.error,
                                              "runner": job.runner});
                events.push(JobEvent { event: "state", data, seq: None });
            }
            if !events.is_empty() || stopped {
                let ended = job.state.is_terminal() || stopped;
                let next = (state, id, job.state, job.steps, seen, ended);
                return Some((stream::iter(events), next));
            }
        }
    })
    .flatten()
}

pub async fn cancel(
    state: &AppState,
    caller: &Caller,
    id: &str,
    kind: &str,
) -> Result<(StatusCode, Json<Job>), ApiError> {
    let found = found(state, caller, id, kind).await?;
    match state.jobs.cancel(&found.job).await? {
        Err(ended) => Err(ApiError::Conflict {
            field: "id".into(),
            message: format!("job '{id}' has already ended ({})", ended.as_str()),
        }),
        Ok(job) => Ok((StatusCode::ACCEPTED, Json(Job { artifacts: state.jobs.artifacts(&job.id), job }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn points_both_stored_and_sent_after_the_subscription_go_out_once() {
        let (sender, receiver) = broadcast::channel(16);
        let point = |seq| JobEvent { event: "incumbent", data: serde_json::json!({"objective": seq}), seq: Some(seq) };
        // Points 0 and 1 were stored after the subscription and before the curve was read (sent
        // = 2); 2 came later; a progress event carries no place; a point the store refused is sent.
        for event in
            [point(0), point(1), JobEvent { event: "progress", data: serde_json::json!({}), seq: None }, point(2)]
        {
            sender.send(event).unwrap();
        }
        sender.send(JobEvent { event: "incumbent", data: serde_json::json!({"objective": -1}), seq: None }).unwrap();
        drop(sender);
        let out: Vec<(&str, serde_json::Value)> =
            after_replay(receiver, 2).map(|e| (e.event, e.data["objective"].clone())).collect().await;
        let expected = vec![
            ("progress", serde_json::Value::Null),
            ("incumbent", serde_json::json!(2)),
            ("incumbent", serde_json::json!(-1)),
        ];
        assert_eq!(out, expected);
    }
}
