//! `GET /ui`: the dashboard. A page of plain JavaScript over the JSON API and its
//! server-sent events, with uPlot 1.6.32 (MIT, from npm; `src/api/ui/vendor/LICENSE`) for the
//! curves. Every file is compiled into the binary: nothing is fetched at build or run time. The
//! page calls the API with the key a user types in (kept in the tab's session storage), so the
//! page itself needs none.

use super::state::AppState;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

const INDEX: &str = include_str!("ui/index.html");
const APP_JS: &str = include_str!("ui/app.js");
const STYLE_CSS: &str = include_str!("ui/style.css");
const UPLOT_JS: &str = include_str!("ui/vendor/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("ui/vendor/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("ui/vendor/LICENSE");

/// Scripts, styles and requests from this origin only; uPlot sets inline styles on its canvas.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/ui", get(|| async { page(INDEX, "text/html; charset=utf-8") }))
        .route("/ui/", get(|| async { Redirect::permanent("/ui") }))
        .route("/ui/app.js", get(|| async { page(APP_JS, "text/javascript; charset=utf-8") }))
        .route("/ui/style.css", get(|| async { page(STYLE_CSS, "text/css; charset=utf-8") }))
        .route("/ui/vendor/uPlot.iife.min.js", get(|| async { page(UPLOT_JS, "text/javascript; charset=utf-8") }))
        .route("/ui/vendor/uPlot.min.css", get(|| async { page(UPLOT_CSS, "text/css; charset=utf-8") }))
        .route("/ui/vendor/LICENSE", get(|| async { page(UPLOT_LICENSE, "text/plain; charset=utf-8") }))
}

fn page(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
