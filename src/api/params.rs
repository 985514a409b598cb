//! The query-string and path readers of every handler, shaped like `body::JsonBody`: a value
//! that does not parse is a 400 problem+json naming the parameter it fails at (the path comes
//! from `serde_path_to_error`, never from a message), instead of axum's plain-text rejection.

use super::error::ApiError;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// The query string parsed as `T`; `?limit=9223372036854775808` is a 400 naming `limit`.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        query(parts.uri.query().unwrap_or_default()).map(ApiQuery)
    }
}

/// `text` (a URL's query string) as `T`; errors name the parameter.
pub fn query<T: DeserializeOwned>(text: &str) -> Result<T, ApiError> {
    let deserializer = serde_urlencoded::Deserializer::new(form_urlencoded::parse(text.as_bytes()));
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let field = error.path().to_string();
        let field = if field == "." { "query".to_string() } else { field };
        ApiError::bad_request(field, format!("query string: {}", error.inner()))
    })
}

/// The path's parameters as `T`; a segment that is not valid percent-encoded UTF-8 (or does not
/// parse) is a 400 naming `path`.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ApiPath(value)),
            Err(rejection) => Err(ApiError::bad_request("path", rejection.body_text())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Listing {
        #[allow(dead_code)]
        limit: Option<u32>,
        #[allow(dead_code)]
        state: Option<String>,
    }

    #[test]
    fn a_bad_query_value_names_its_parameter() {
        assert!(query::<Listing>("limit=10&state=running").is_ok());
        for (text, field) in [("limit=9223372036854775808", "limit"), ("state=x&limit=-1", "limit")] {
            let Err(ApiError::BadRequest { field: named, message }) = query::<Listing>(text) else {
                panic!("{text} parsed")
            };
            assert_eq!(named, field, "{message}");
        }
    }
}
