//! The OpenAPI document, generated from the handlers; checked in at `openapi/openapi.json`.

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(title = "rlsolver", description = "Optimization solver service: learned policies plus parallel Hamiltonian-regularized search."),
    paths(super::health::health, super::health::ready, super::problems::list, super::problems::solve, super::models::list, super::models::one, super::docs::openapi),
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
    ))
)]
pub struct ApiDoc;

pub fn openapi_json() -> String {
    ApiDoc::openapi().to_pretty_json().expect("the OpenAPI document serializes") + "\n"
}
