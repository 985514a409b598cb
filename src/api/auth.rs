//! API keys: bearer tokens (from `--api-keys-file` or `RLSOLVER_API_KEYS`) required on every
//! mutating request (any method but GET, HEAD and OPTIONS) once keys are configured. Keys are
//! compared in constant time against their SHA-256 digests, and never logged.

use super::error::ApiError;
use super::state::AppState;
use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

#[derive(Default)]
pub struct ApiKeys {
    /// SHA-256 of each accepted key: every comparison is 32 bytes long whatever the key length.
    digests: Vec<[u8; 32]>,
}

impl ApiKeys {
    pub fn new(keys: &[String]) -> Self {
        ApiKeys {
            digests: keys
                .iter()
                .filter(|k| !k.trim().is_empty())
                .map(|k| Sha256::digest(k.trim().as_bytes()).into())
                .collect(),
        }
    }

    pub fn enabled(&self) -> bool {
        !self.digests.is_empty()
    }

    /// Constant-time over the candidate and every stored digest (no early exit).
    pub fn accepts(&self, candidate: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(candidate.as_bytes()).into();
        self.digests.iter().fold(0u8, |found, d| found | d.ct_eq(&digest).unwrap_u8()) == 1
    }
}

/// Keys from a file (one per line, `#` comments) and a comma-separated list.
pub fn load_keys(file: Option<&std::path::Path>, list: Option<&str>) -> anyhow::Result<Vec<String>> {
    let mut keys = Vec::new();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading the API key file {}: {e}", path.display()))?;
        keys.extend(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string));
    }
    if let Some(list) = list {
        keys.extend(list.split(',').map(str::trim).filter(|k| !k.is_empty()).map(str::to_string));
    }
    Ok(keys)
}

pub async fn require_key(State(state): State<AppState>, request: Request, next: Next) -> Result<Response, ApiError> {
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    if !state.keys.enabled() || reads.contains(request.method()) {
        return Ok(next.run(request).await);
    }
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim);
    match token {
        Some(token) if state.keys.accepts(token) => Ok(next.run(request).await),
        Some(_) => Err(ApiError::Unauthorized("the bearer token is not a valid API key".into())),
        None => Err(ApiError::Unauthorized("this endpoint needs an API key: Authorization: Bearer <key>".into())),
    }
}

/// The host the server may listen on: without API keys, loopback only (a non-loopback request is
/// replaced by 127.0.0.1), since every mutating endpoint is then open. Logs what it decided.
pub fn serving_host(requested: &str, keys: usize) -> String {
    let loopback = requested == "localhost" || requested.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if keys == 0 && !loopback {
        tracing::warn!(requested, "no API keys configured: binding to 127.0.0.1 only (set RLSOLVER_API_KEYS or --api-keys-file to serve other hosts)");
        "127.0.0.1".into()
    } else if keys == 0 {
        tracing::warn!("no API keys configured: mutating endpoints are open, serving on loopback only");
        requested.into()
    } else {
        tracing::info!(keys, "API keys configured: POST and DELETE need a bearer token");
        requested.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_configured_keys_are_accepted() {
        let keys = ApiKeys::new(&["alpha".into(), " beta ".into(), "".into()]);
        assert!(keys.enabled());
        assert!(keys.accepts("alpha") && keys.accepts("beta"));
        assert!(!keys.accepts("alph") && !keys.accepts("") && !keys.accepts("alpha "));
        assert!(!ApiKeys::new(&[]).enabled());
    }

    #[test]
    fn without_keys_the_server_stays_on_loopback() {
        assert_eq!(serving_host("0.0.0.0", 0), "127.0.0.1");
        assert_eq!(serving_host("::1", 0), "::1");
        assert_eq!(serving_host("localhost", 0), "localhost");
        assert_eq!(serving_host("0.0.0.0", 2), "0.0.0.0");
    }
}
