//! Solve jobs: a long solve run in the background, its incumbents streamed as events.

use crate::problems::{self, PreparedSolve, ProblemError, ProblemInput, SolveContext, SolveOptions};
use crate::search::hooks::SearchHooks;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /v1/solve/jobs`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SolveJobRequest {
    /// A problem name from `GET /v1/problems`.
    pub problem: String,
    /// The instance in the problem's JSON format; give this or `instance_text`.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    #[schema(value_type = Option<Object>)]
    pub instance: serde_json::Value,
    /// The instance in the problem's native text format (`formats` in `GET /v1/problems`: Gset
    /// or DIMACS for graphs, OR-Library, TSPLIB, ...); give this or `instance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_text: Option<String>,
    #[serde(default)]
    pub options: Option<SolveOptions>,
}

impl SolveJobRequest {
    /// Loads and checks everything a solve checks; the error names the field.
    pub fn prepare(&self, context: &SolveContext) -> Result<PreparedSolve, ProblemError> {
        let (limits, models) = (&context.limits, &context.models);
        let problem =
            context.problems.find(&self.problem).map_err(|e| ProblemError::invalid("problem", e.to_string()))?;
        let options = self.options.clone().unwrap_or_default();
        let settings =
            problems::prepare_options(problem, &options, limits, models, |_| {}).map_err(|e| e.within("options"))?;
        let (input, field) = match (&self.instance, &self.instance_text) {
            (serde_json::Value::Null, Some(text)) => (ProblemInput::Text(text), "instance_text"),
            (serde_json::Value::Null, None) => {
                return Err(ProblemError::invalid(
                    "instance",
                    "give the instance as `instance` (JSON) or `instance_text`",
                ))
            }
            (_, Some(_)) => {
                return Err(ProblemError::invalid("instance_text", "give `instance` or `instance_text`, not both"))
            }
            (json, None) => (ProblemInput::Json(json), "instance"),
        };
        problems::prepare_instance(problem, input, &options, limits, models, settings).map_err(|e| e.within(field))
    }

    /// Solves (blocking) with `hooks`; returns the report and whether it was cancelled.
    pub fn run(&self, context: &SolveContext, hooks: SearchHooks) -> anyhow::Result<(serde_json::Value, bool)> {
        let mut prepared = self.prepare(context)?;
        let cancelled = hooks.cancel.clone();
        prepared.params.hooks = hooks;
        let report = prepared.run()?;
        let cancelled = cancelled.is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst));
        Ok((serde_json::to_value(report)?, cancelled))
    }
}
