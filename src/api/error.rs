//! The one error type of the HTTP layer, rendered as RFC 9457 problem+json.

use crate::problems::ProblemError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// RFC 9457 problem details; `field` names the offending input when there is one.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemDetails {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Problem(#[from] ProblemError),
    #[error("{field}: {message}")]
    BadRequest { field: String, message: String },
    #[error("{field}: {message}")]
    NotFound { field: String, message: String },
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("unsupported content type '{0}': send application/json or text/plain")]
    UnsupportedMediaType(String),
    #[error("all {0} solver slots are busy; retry shortly")]
    Busy(usize),
    #[error("{0}")]
    Unauthorized(String),
    /// A valid key without the scope the request needs.
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    TooManyRequests(String),
    /// Back-pressure of a busy component: 503 with `Retry-After: 1`.
    #[error("{0}")]
    Unavailable(String),
    #[error("{field}: {message}")]
    Conflict { field: String, message: String },
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn bad_request(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::BadRequest { field: field.into(), message: message.into() }
    }

    pub fn not_found(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::NotFound { field: field.into(), message: message.into() }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::Problem(ProblemError::Invalid { .. }) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Problem(ProblemError::TooLarge { .. }) | ApiError::PayloadTooLarge(_) => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            ApiError::Problem(ProblemError::UnknownProblem(_)) => StatusCode::NOT_FOUND,
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::NotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Busy(_) | ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn field(&self) -> Option<String> {
        match self {
            ApiError::Problem(e) => e.field().map(str::to_string),
            ApiError::BadRequest { field, .. }
            | ApiError::NotFound { field, .. }
            | ApiError::Conflict { field, .. } => Some(field.clone()),
            ApiError::Unauthorized(_) | ApiError::Forbidden(_) => Some("authorization".into()),
            ApiError::PayloadTooLarge(_) => Some("body".into()),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match &self {
            ApiError::Internal(cause) => {
                // The cause goes to the log, never to the client.
                tracing::error!(error = ?cause, "internal error");
                "internal error".to_string()
            }
            other => other.to_string(),
        };
        let body = ProblemDetails {
            kind: "about:blank".into(),
            title: status.canonical_reason().unwrap_or("error").into(),
            status: status.as_u16(),
            detail,
            field: self.field(),
        };
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        match self {
            ApiError::Busy(_) | ApiError::Unavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::TooManyRequests(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
            }
            ApiError::Unauthorized(_) => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            _ => {}
        }
        response
    }
}
