//! The one JSON-body reader of every handler: an oversized body answers 413, malformed JSON 400
//! naming `body`, and a body that does not fit the request type 400 naming the field it fails
//! at. Field names come from serde itself, never from its messages: unknown top-level fields from
//! the type's declared field list, the path of a bad value from `serde_path_to_error`, a missing
//! field as the absent declared field whose `de::Error::missing_field` is the failure.

use super::error::ApiError;
use super::state::AppState;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::Value;

/// A request body parsed as `T` (see the module doc).
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(request, state).await.map_err(|e| rejection(e, state.config.max_body_bytes))?;
        Ok(JsonBody(from_json(&bytes)?))
    }
}

/// A body that could not be read: 413 past the limit, 400 otherwise.
pub fn rejection(error: BytesRejection, max_body_bytes: usize) -> ApiError {
    match error.status() {
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::PayloadTooLarge(format!("request body exceeds this server's limit of {max_body_bytes} bytes"))
        }
        _ => ApiError::bad_request("body", error.body_text()),
    }
}

/// `bytes` as `T`; errors name the field (see the module doc).
pub fn from_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut value: Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request("body", format!("invalid JSON: {e}")))?;
    integral(&mut value);
    let fields = struct_fields::<T>();
    if fields.is_some() && !value.is_object() {
        return Err(ApiError::bad_request("body", "expected a JSON object"));
    }
    if let (Some(fields), Some(object)) = (fields, value.as_object()) {
        if let Some(unknown) = object.keys().find(|k| !fields.contains(&k.as_str())) {
            return Err(ApiError::bad_request(
                unknown.clone(),
                format!("unknown field; expected one of {}", fields.join(", ")),
            ));
        }
    }
    let error = match deserialize::<T>(&value) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    let message = error.inner().to_string();
    if !error.path().to_string().eq(".") {
        return Err(ApiError::bad_request(error.path().to_string(), message));
    }
    let field = fields.zip(value.as_object()).and_then(|(fields, object)| missing_field(fields, object, error.inner()));
    Err(ApiError::bad_request(field.unwrap_or("body"), message))
}

/// Numbers with a zero fraction (`2.0`) as integers: JSON Schema's `integer` (and so the OpenAPI
/// document's) includes them, serde's integer fields do not.
fn integral(value: &mut Value) {
    match value {
        Value::Number(number) if !number.is_i64() && !number.is_u64() => {
            if let Some(x) = number.as_f64().filter(|x| x.fract() == 0.0) {
                if x >= i64::MIN as f64 && x < i64::MAX as f64 {
                    *value = Value::from(x as i64);
                } else if x >= 0.0 && x < u64::MAX as f64 {
                    *value = Value::from(x as u64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral),
        Value::Object(fields) => fields.values_mut().for_each(integral),
        _ => {}
    }
}

fn deserialize<T: DeserializeOwned>(value: &Value) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(value)
}

/// The declared field absent from `object` that the root-level error is serde's
/// `missing_field` error for.
fn missing_field(
    fields: &'static [&'static str],
    object: &serde_json::Map<String, Value>,
    error: &serde_json::Error,
) -> Option<&'static str> {
    let message = error.to_string();
    fields
        .iter()
        .copied()
        .filter(|f| !object.contains_key(*f))
        .find(|f| <serde_json::Error as de::Error>::missing_field(f).to_string() == message)
}

/// The field names a struct type declares to serde (None for other types and for structs that
/// serde reads as maps, such as those with flattened fields).
fn struct_fields<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut probe = FieldProbe(None);
    let _ = T::deserialize(&mut probe);
    probe.0
}

struct FieldProbe(Option<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for &mut FieldProbe {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = Some(fields);
        Err(de::Error::custom("fields probed"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        gamma: f64,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Request {
        algorithm: String,
        #[serde(default)]
        seed: u64,
        total_steps: usize,
        inner: Option<Inner>,
        list: Option<Vec<u32>>,
    }

    fn field(body: &str) -> String {
        match from_json::<Request>(body.as_bytes()) {
            Err(ApiError::BadRequest { field, .. }) => field,
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn every_kind_of_bad_body_names_its_field() {
        assert_eq!(field("{"), "body");
        assert_eq!(field("[1]"), "body");
        assert_eq!(field(r#"{"algorithm": "x", "total_steps": 1, "bogus": 2}"#), "bogus");
        assert_eq!(field(r#"{"algorithm": "x"}"#), "total_steps");
        assert_eq!(field(r#"{"total_steps": 1}"#), "algorithm");
        assert_eq!(field(r#"{"algorithm": 3, "total_steps": 1}"#), "algorithm");
        assert_eq!(field(r#"{"algorithm": "x", "total_steps": -1}"#), "total_steps");
        assert_eq!(field(r#"{"algorithm": "x", "total_steps": 1, "inner": {"gamma": "y"}}"#), "inner.gamma");
        assert_eq!(field(r#"{"algorithm": "x", "total_steps": 1, "list": [1, "a"]}"#), "list[1]");
        let ok: Request = from_json(br#"{"algorithm": "x", "total_steps": 2}"#).unwrap();
        assert_eq!((ok.seed, ok.total_steps), (0, 2));
    }

    #[test]
    fn integers_written_with_a_zero_fraction_are_integers() {
        let ok: Request =
            from_json(br#"{"algorithm": "x", "total_steps": 2.0, "seed": 9.0e18, "list": [3.0]}"#).unwrap();
        assert_eq!((ok.seed, ok.total_steps, ok.list), (9_000_000_000_000_000_000, 2, Some(vec![3])));
        assert_eq!(field(r#"{"algorithm": "x", "total_steps": 2.5}"#), "total_steps");
    }
}
