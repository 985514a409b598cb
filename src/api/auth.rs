//! API keys and tenancy. Keys come from `--api-keys-file` (one entry a line, `#`
//! comments) or `RLSOLVER_API_KEYS` (entries separated by commas); an entry is
//! `KEY [SCOPES [NAME]]`: SCOPES joins `read`, `submit` and `admin` with `+` (default
//! `read+submit`; `admin` implies both), NAME is who owns what the key creates (default `key-`
//! and the first 8 hex digits of the key's SHA-256). Once keys are configured, every `/v1`
//! request needs one (`Authorization: Bearer <key>`): reads need `read`, anything else
//! `submit`; a key sees and acts on only what it created (jobs, populations, promoted models)
//! unless it has `admin`. Probes, metrics, the OpenAPI document and the docs stay open. Keys are
//! compared in constant time against their SHA-256 digests, and never logged.

use super::error::ApiError;
use super::state::AppState;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::Response;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scopes {
    pub read: bool,
    pub submit: bool,
    pub admin: bool,
}

impl Scopes {
    pub const ALL: Scopes = Scopes { read: true, submit: true, admin: true };

    /// `read+submit`, `admin`, ...; None for an unknown scope.
    pub fn parse(text: &str) -> Option<Scopes> {
        let mut scopes = Scopes::default();
        for name in text.split(['+', ',']).map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "read" => scopes.read = true,
                "submit" => scopes.submit = true,
                "admin" => scopes = Scopes::ALL,
                _ => return None,
            }
        }
        Some(scopes)
    }
}

/// One configured key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEntry {
    pub key: String,
    pub scopes: Scopes,
    pub name: String,
}

impl KeyEntry {
    /// `KEY [SCOPES [NAME]]`.
    pub fn parse(line: &str) -> anyhow::Result<KeyEntry> {
        let mut parts = line.split_whitespace();
        let key = parts.next().ok_or_else(|| anyhow::anyhow!("an empty API key entry"))?.to_string();
        let scopes = match parts.next() {
            Some(text) => Scopes::parse(text).ok_or_else(|| {
                anyhow::anyhow!("API key scopes '{text}': expected read, submit or admin joined by '+'")
            })?,
            None => Scopes { read: true, submit: true, admin: false },
        };
        let name = match parts.next() {
            Some(name) => name.to_string(),
            None => {
                let digest = Sha256::digest(key.as_bytes());
                format!("key-{}", digest.iter().take(4).map(|b| format!("{b:02x}")).collect::<String>())
            }
        };
        if parts.next().is_some() {
            anyhow::bail!("an API key entry is KEY [SCOPES [NAME]]; found more after the name '{name}'");
        }
        Ok(KeyEntry { key, scopes, name })
    }
}

/// Who is calling: the key's name and scopes (every scope and no name when keys are off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub name: Option<String>,
    pub scopes: Scopes,
}

impl Caller {
    /// Keys are not configured: anyone may do anything and owns nothing.
    pub fn open() -> Caller {
        Caller { name: None, scopes: Scopes::ALL }
    }

    /// The owner to record on what this caller creates.
    pub fn owner(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The owner to filter listings by: None when the caller sees everything.
    pub fn only_own(&self) -> Option<&str> {
        if self.scopes.admin {
            None
        } else {
            self.name.as_deref()
        }
    }

    /// Whether the caller may see something owned by `owner`.
    pub fn sees(&self, owner: Option<&str>) -> bool {
        self.only_own().is_none_or(|me| owner == Some(me))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("the key middleware did not run")))
    }
}

#[derive(Default)]
pub struct ApiKeys {
    /// SHA-256 of each accepted key: every comparison is 32 bytes long whatever the key length.
    digests: Vec<([u8; 32], Caller)>,
}

impl ApiKeys {
    pub fn new(keys: &[KeyEntry]) -> Self {
        ApiKeys {
            digests: keys
                .iter()
                .filter(|k| !k.key.trim().is_empty())
                .map(|k| {
                    let caller = Caller { name: Some(k.name.clone()), scopes: k.scopes };
                    (Sha256::digest(k.key.trim().as_bytes()).into(), caller)
                })
                .collect(),
        }
    }

    pub fn enabled(&self) -> bool {
        !self.digests.is_empty()
    }

    /// The key's caller; constant-time over the candidate and every stored digest (no early exit).
    pub fn find(&self, candidate: &str) -> Option<&Caller> {
        let digest: [u8; 32] = Sha256::digest(candidate.as_bytes()).into();
        let mut found = None;
        for (d, caller) in &self.digests {
            if d.ct_eq(&digest).unwrap_u8() == 1 {
                found = Some(caller);
            }
        }
        found
    }
}

/// Key entries from a file (one a line, `#` comments) and a comma-separated list.
pub fn load_keys(file: Option<&std::path::Path>, list: Option<&str>) -> anyhow::Result<Vec<KeyEntry>> {
    let mut lines: Vec<String> = Vec::new();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading the API key file {}: {e}", path.display()))?;
        lines.extend(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string));
    }
    if let Some(list) = list {
        lines.extend(list.split(',').map(str::trim).filter(|k| !k.is_empty()).map(str::to_string));
    }
    let entries = lines.iter().map(|l| KeyEntry::parse(l)).collect::<anyhow::Result<Vec<_>>>()?;
    let mut names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        anyhow::bail!("two API keys share the name '{}'; each owner needs its own", w[0]);
    }
    Ok(entries)
}

/// Resolves the caller of every request; under `/v1` with keys configured, refuses a missing
/// or wrong key (401) and a key without the scope the method needs (403).
pub async fn require_key(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    if !state.keys.enabled() {
        request.extensions_mut().insert(Caller::open());
        return Ok(next.run(request).await);
    }
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim);
    let caller = token.and_then(|t| state.keys.find(t)).cloned();
    if !request.uri().path().starts_with("/v1/") {
        // Probes, metrics and documents: open, owning nothing.
        let anonymous = Caller { name: Some(String::new()), scopes: Scopes::default() };
        request.extensions_mut().insert(caller.unwrap_or(anonymous));
        return Ok(next.run(request).await);
    }
    let caller = match (token, caller) {
        (_, Some(caller)) => caller,
        (Some(_), None) => return Err(ApiError::Unauthorized("the bearer token is not a valid API key".into())),
        (None, None) => {
            return Err(ApiError::Unauthorized("this endpoint needs an API key: Authorization: Bearer <key>".into()))
        }
    };
    let reads = [Method::GET, Method::HEAD, Method::OPTIONS];
    let (needed, allowed) =
        if reads.contains(request.method()) { ("read", caller.scopes.read) } else { ("submit", caller.scopes.submit) };
    if !allowed {
        return Err(ApiError::Forbidden(format!("this API key lacks the '{needed}' scope")));
    }
    request.extensions_mut().insert(caller);
    Ok(next.run(request).await)
}

/// The host the server may listen on: without API keys, loopback only (a non-loopback request is
/// replaced by 127.0.0.1), since every mutating endpoint is then open. Logs what it decided.
pub fn serving_host(requested: &str, keys: usize) -> String {
    let loopback = requested == "localhost" || requested.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if keys == 0 && !loopback {
        tracing::warn!(requested, "no API keys configured: binding to 127.0.0.1 only (set RLSOLVER_API_KEYS or --api-keys-file to serve other hosts)");
        "127.0.0.1".into()
    } else if keys == 0 {
        tracing::warn!("no API keys configured: every endpoint is open, serving on loopback only");
        requested.into()
    } else {
        tracing::info!(keys, "API keys configured: every /v1 request needs a bearer token");
        requested.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &str) -> Vec<KeyEntry> {
        load_keys(None, Some(list)).unwrap()
    }

    #[test]
    fn only_configured_keys_are_accepted_with_their_scopes_and_names() {
        let keys = ApiKeys::new(&entries("alpha, beta read bob,gamma admin root"));
        assert!(keys.enabled());
        let alpha = keys.find("alpha").unwrap();
        assert_eq!(alpha.scopes, Scopes { read: true, submit: true, admin: false });
        assert!(alpha.name.as_deref().unwrap().starts_with("key-"));
        assert_eq!(keys.find("beta").unwrap().scopes, Scopes { read: true, submit: false, admin: false });
        assert_eq!(keys.find("beta").unwrap().name.as_deref(), Some("bob"));
        assert_eq!(keys.find("gamma").unwrap().scopes, Scopes::ALL);
        assert!(keys.find("alph").is_none() && keys.find("").is_none() && keys.find("alpha ").is_none());
        assert!(!ApiKeys::new(&[]).enabled());
    }

    #[test]
    fn bad_entries_are_refused_when_the_server_starts() {
        assert!(load_keys(None, Some("k1 write")).is_err(), "unknown scope");
        assert!(load_keys(None, Some("k1 read a,k2 read a")).is_err(), "two keys, one owner");
        assert!(load_keys(None, Some("k1 read a extra")).is_err());
    }

    #[test]
    fn a_caller_sees_its_own_unless_admin() {
        let bob = Caller { name: Some("bob".into()), scopes: Scopes { read: true, submit: true, admin: false } };
        assert!(bob.sees(Some("bob")) && !bob.sees(Some("eve")) && !bob.sees(None));
        let root = Caller { name: Some("root".into()), scopes: Scopes::ALL };
        assert!(root.sees(Some("bob")) && root.sees(None));
        assert!(Caller::open().sees(Some("bob")));
    }

    #[test]
    fn without_keys_the_server_stays_on_loopback() {
        assert_eq!(serving_host("0.0.0.0", 0), "127.0.0.1");
        assert_eq!(serving_host("::1", 0), "::1");
        assert_eq!(serving_host("localhost", 0), "localhost");
        assert_eq!(serving_host("0.0.0.0", 2), "0.0.0.0");
    }
}
