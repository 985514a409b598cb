//! Hyperparameter declarations: every agent config lists each field's allowed range next to the
//! struct (`Hyperparameters::RANGES`), the service checks overrides against it and lists it in
//! `GET /v1/algorithms`; a test checks that every field has exactly one declaration.

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{json, Value};

/// What values a hyperparameter accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A number > 0 (rates, widths, counts, intervals).
    Positive,
    /// A number >= 0 (coefficients that may switch a term off).
    NonNegative,
    /// A number in [0, 1] (discounts, probabilities, Polyak coefficients).
    Unit,
    /// Any finite number (log-scale initial values).
    Finite,
    /// true or false.
    Flag,
    /// A non-empty list of positive integers (hidden-layer widths).
    Widths,
    /// One of the names.
    OneOf(&'static [&'static str]),
    /// null, or a number > 0 / in [0, 1] / >= 0.
    OptionalPositive,
    OptionalUnit,
    OptionalNonNegative,
}

impl Range {
    /// The JSON-schema fragment `GET /v1/algorithms` shows.
    pub fn schema(&self) -> Value {
        let nullable = |inner: Value| json!({"anyOf": [inner, {"type": "null"}]});
        match self {
            Range::Positive => json!({"type": "number", "exclusiveMinimum": 0}),
            Range::NonNegative => json!({"type": "number", "minimum": 0}),
            Range::Unit => json!({"type": "number", "minimum": 0, "maximum": 1}),
            Range::Finite => json!({"type": "number"}),
            Range::Flag => json!({"type": "boolean"}),
            Range::Widths => {
                json!({"type": "array", "minItems": 1, "items": {"type": "integer", "exclusiveMinimum": 0}})
            }
            Range::OneOf(names) => json!({"enum": names}),
            Range::OptionalPositive => nullable(Range::Positive.schema()),
            Range::OptionalUnit => nullable(Range::Unit.schema()),
            Range::OptionalNonNegative => nullable(Range::NonNegative.schema()),
        }
    }

    /// Whether `value` is allowed; the message says what is expected.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let number = |ok: &dyn Fn(f64) -> bool, what: &str| match value.as_f64() {
            Some(v) if v.is_finite() && ok(v) => Ok(()),
            _ => Err(format!("expected {what}")),
        };
        match self {
            Range::Positive => number(&|v| v > 0.0, "a number > 0"),
            Range::NonNegative => number(&|v| v >= 0.0, "a number >= 0"),
            Range::Unit => number(&|v| (0.0..=1.0).contains(&v), "a number in [0, 1]"),
            Range::Finite => number(&|_| true, "a finite number"),
            Range::Flag => value.as_bool().map(drop).ok_or_else(|| "expected true or false".to_string()),
            Range::Widths => match value.as_array() {
                Some(items) if !items.is_empty() && items.iter().all(|i| i.as_u64().is_some_and(|w| w > 0)) => Ok(()),
                _ => Err("expected a non-empty list of positive integers".into()),
            },
            Range::OneOf(names) => match value.as_str() {
                Some(name) if names.contains(&name) => Ok(()),
                _ => Err(format!("expected one of {}", names.join(", "))),
            },
            Range::OptionalPositive if value.is_null() => Ok(()),
            Range::OptionalUnit if value.is_null() => Ok(()),
            Range::OptionalNonNegative if value.is_null() => Ok(()),
            Range::OptionalPositive => Range::Positive.check(value).map_err(|e| format!("{e} or null")),
            Range::OptionalUnit => Range::Unit.check(value).map_err(|e| format!("{e} or null")),
            Range::OptionalNonNegative => Range::NonNegative.check(value).map_err(|e| format!("{e} or null")),
        }
    }
}

/// An agent's configuration: serializable (the JSON that `--hyper` and `hyperparameters` patch
/// field by field) with each field's range declared beside it.
pub trait Hyperparameters: Serialize + DeserializeOwned + Clone {
    /// (field, range) for every field, nested sections flattened.
    fn ranges() -> Vec<(&'static str, Range)>;
}

/// The ranges of `T` as a JSON object (field -> schema fragment).
pub fn ranges_schema(ranges: &[(&'static str, Range)]) -> Value {
    Value::Object(ranges.iter().map(|(k, r)| (k.to_string(), r.schema())).collect())
}
