//! The OpenAPI document, generated from the handlers; checked in at `openapi/openapi.json`.

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(title = "rlsolver", description = "Optimization solver service: learned policies plus parallel Hamiltonian-regularized search."),
    paths(
        super::health::health, super::health::ready, super::metrics::metrics,
        super::problems::list, super::problems::solve, super::models::list, super::models::one, super::models::promote, super::models::actions,
        super::catalog::algorithms, super::catalog::envs,
        super::training::submit, super::training::list, super::training::one, super::training::metrics,
        super::training::events, super::training::cancel, super::training::artifact,
        super::solve_jobs::submit, super::solve_jobs::list, super::solve_jobs::one, super::solve_jobs::incumbents,
        super::solve_jobs::events, super::solve_jobs::cancel,
        super::populations::submit, super::populations::list, super::populations::one, super::populations::cancel,
        super::populations::promote,
        super::learner::status, super::learner::weights, super::learner::transitions,
        super::docs::openapi
    ),
    components(schemas(
        super::problems::ProblemInfo,
        super::problems::SolveRequest,
        super::error::ProblemDetails,
        crate::problems::SolveOptions,
        crate::problems::SolveReport,
        crate::problems::HistoryPoint,
        crate::search::StopReason,
        crate::models::Manifest,
        super::models::ModelList,
        super::models::RejectedModel,
        super::models::PromoteRequest,
        super::models::ActionsRequest,
        super::models::ActionsResponse,
        super::jobs::Job,
        crate::jobs::solve::SolveJobRequest,
        crate::jobs::training::TrainingRequest,
        crate::jobs::training::AlgorithmInfo,
        crate::jobs::training::EnvInfo,
        crate::store::JobRecord,
        crate::store::JobState,
        crate::jobs::population::PopulationRequest,
        crate::jobs::population::Scheme,
        crate::jobs::population::ExploreRange,
        crate::store::PopulationRecord,
        crate::store::Entry,
        super::populations::Population,
        super::populations::PopulationModelRequest,
        crate::drl::apex::learner::LearnerStatus,
    )),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

/// Declares the `bearer` scheme the mutating endpoints use when API keys are configured.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

/// The checked-in document: every limit a server flag sets at its default.
pub fn openapi_json() -> String {
    openapi_json_for(&super::contract::FlagLimits::default())
}

/// The document of a server whose flags set `limits` (what `GET /openapi.json` serves).
pub fn openapi_json_for(limits: &super::contract::FlagLimits) -> String {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI document serializes");
    super::contract::declare(&mut doc, limits);
    serde_json::to_string_pretty(&doc).expect("the OpenAPI document serializes") + "\n"
}
