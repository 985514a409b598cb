//! The OpenAPI document and a vendored Swagger UI (no network at build or run time).

use super::contract::FlagLimits;
use super::openapi::openapi_json_for;
use super::state::AppState;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;

const SWAGGER_JS: &str = include_str!("../../openapi/swagger-ui/swagger-ui-bundle.js");
const SWAGGER_CSS: &str = include_str!("../../openapi/swagger-ui/swagger-ui.css");
const INDEX: &str = r##"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>rlsolver API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });</script>
</body></html>"##;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi))
        .route("/docs", get(|| async { Html(INDEX) }))
        .route("/docs/", get(|| async { Html(INDEX) }))
        .route(
            "/docs/swagger-ui-bundle.js",
            get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], SWAGGER_JS) }),
        )
        .route("/docs/swagger-ui.css", get(|| async { ([(header::CONTENT_TYPE, "text/css")], SWAGGER_CSS) }))
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "health", operation_id = "openapi_document", responses((status = 200, description = "the OpenAPI 3.1 document", content_type = "application/json")))]
pub async fn openapi(axum::extract::State(state): axum::extract::State<AppState>) -> impl IntoResponse {
    let document = state.openapi.get_or_init(|| {
        openapi_json_for(&FlagLimits {
            max_time_limit_s: state.config.limits.max_time_limit_s,
            max_chains: state.config.limits.max_chains,
            max_training_steps: state.config.training_limits.max_total_steps,
        })
    });
    ([(header::CONTENT_TYPE, "application/json")], document.clone())
}
