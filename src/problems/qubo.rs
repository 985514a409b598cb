//! Any binary quadratic model, in the formats the quantum-annealing ecosystem speaks:
//! - dimod's serializable BQM (`dimod.BinaryQuadraticModel.to_serializable()`, bqm_schema 3.x,
//!   `use_bytes=False`): labels ints or strings, vartype BINARY or SPIN;
//! - plain JSON `{linear, quadratic, offset?, vartype?}`: `linear` a list of biases (labels
//!   0..n-1) or an object {label: bias}; `quadratic` a list of [u, v, bias] over labels of
//!   `linear` (a repeated pair sums, as dimod's `add_quadratic`); vartype default BINARY for
//!   `qubo`, SPIN for `ising`;
//! - MQLib's QUBO text (`n m`, then m lines `i j q`, 1-indexed): MQLib maximises x'Qx with Q
//!   symmetric, so an entry i != j weighs 2q x_i x_j and i = i weighs q x_i; the model solved is
//!   its negation, energy = -x'Qx (labels 1..n).
//!
//! The answer's `solution` is a dimod `SampleSet.to_serializable()` (unpacked samples) holding
//! the distinct lowest-energy states the chains reached after polishing, lowest first (at most
//! `MAX_SAMPLES`), each with its energy recomputed from the input's biases and one occurrence.

use super::binary::Qubo;
use super::ising::IsingModel;
use super::{device_name, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport};
use crate::problems::Solved;
use crate::search::{SearchOutcome, SearchParams};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The most samples an answer carries.
pub const MAX_SAMPLES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vartype {
    Binary,
    Spin,
}

impl Vartype {
    fn parse(value: &Value, field: &str) -> Result<Self, ProblemError> {
        match value.as_str() {
            Some("BINARY") => Ok(Vartype::Binary),
            Some("SPIN") => Ok(Vartype::Spin),
            _ => Err(ProblemError::invalid(field, "must be \"BINARY\" or \"SPIN\"")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Vartype::Binary => "BINARY",
            Vartype::Spin => "SPIN",
        }
    }

    /// The value of a variable at spin `s` (+1: x = 1).
    fn value(self, spin: i8) -> i8 {
        match self {
            Vartype::Binary => i8::from(spin > 0),
            Vartype::Spin => spin,
        }
    }
}

/// A validated model: E(v) = offset + sum_i linear_i v_i + sum (i, j, b) b v_i v_j over v in
/// {0,1}^n (BINARY) or {-1,+1}^n (SPIN), each pair once with i < j.
#[derive(Debug, Clone)]
pub struct Bqm {
    pub labels: Vec<Value>,
    pub vartype: Vartype,
    pub linear: Vec<f64>,
    pub quadratic: Vec<(u32, u32, f64)>,
    pub offset: f64,
}

impl Bqm {
    /// E at the spins (+1 is x = 1 for BINARY), term by term in the input's variables.
    pub fn energy(&self, spins: &[i8]) -> f64 {
        let v = |i: usize| f64::from(self.vartype.value(spins[i]));
        let linear: f64 = self.linear.iter().enumerate().map(|(i, a)| a * v(i)).sum();
        let quadratic: f64 = self.quadratic.iter().map(|&(i, j, b)| b * v(i as usize) * v(j as usize)).sum();
        self.offset + linear + quadratic
    }

    /// H and c with E = H(s) + c.
    fn to_ising(&self) -> (IsingModel, f64) {
        match self.vartype {
            Vartype::Spin => {
                (IsingModel::new(self.linear.len(), self.quadratic.clone(), self.linear.clone()), self.offset)
            }
            Vartype::Binary => {
                let mut qubo = Qubo::new(self.linear.len());
                qubo.offset = self.offset;
                for (i, &a) in self.linear.iter().enumerate() {
                    qubo.add_linear(i, a);
                }
                for &(i, j, b) in &self.quadratic {
                    qubo.add_quadratic(i as usize, j as usize, b);
                }
                qubo.to_ising()
            }
        }
    }
}

/// Collects variables and interactions with the checks every format shares.
struct Builder<'a> {
    index: HashMap<String, u32>,
    labels: Vec<Value>,
    linear: Vec<f64>,
    quadratic: HashMap<(u32, u32), f64>,
    limits: &'a Limits,
}

/// A label's identity: ints and strings never collide (dimod tells 0 and "0" apart).
fn label_key(label: &Value) -> Option<String> {
    match label {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(format!("i{n}")),
        Value::String(s) => Some(format!("s{s}")),
        _ => None,
    }
}

fn finite(value: &Value, field: &str) -> Result<f64, ProblemError> {
    value.as_f64().filter(|x| x.is_finite()).ok_or_else(|| ProblemError::invalid(field, "must be a finite number"))
}

impl<'a> Builder<'a> {
    fn new(limits: &'a Limits) -> Self {
        Builder { index: HashMap::new(), labels: Vec::new(), linear: Vec::new(), quadratic: HashMap::new(), limits }
    }

    fn add_variable(&mut self, label: Value, bias: f64, field: &str) -> Result<(), ProblemError> {
        let key =
            label_key(&label).ok_or_else(|| ProblemError::invalid(field, "a label must be an integer or a string"))?;
        if self.index.contains_key(&key) {
            return Err(ProblemError::invalid(field, format!("variable {label} is listed twice")));
        }
        if self.labels.len() >= self.limits.max_nodes {
            return Err(ProblemError::too_large(
                field,
                format!("more than this server's limit of {} variables", self.limits.max_nodes),
            ));
        }
        self.index.insert(key, self.labels.len() as u32);
        self.labels.push(label);
        self.linear.push(bias);
        Ok(())
    }

    fn variable(&self, label: &Value, field: &str) -> Result<u32, ProblemError> {
        label_key(label)
            .and_then(|key| self.index.get(&key).copied())
            .ok_or_else(|| ProblemError::invalid(field, format!("{label} is not a variable of `linear`")))
    }

    fn add_interaction(&mut self, u: u32, v: u32, bias: f64, field: &str) -> Result<(), ProblemError> {
        if u == v {
            return Err(ProblemError::invalid(field, "a variable cannot interact with itself"));
        }
        let key = (u.min(v), u.max(v));
        if !self.quadratic.contains_key(&key) && self.quadratic.len() >= self.limits.max_edges {
            return Err(ProblemError::too_large(
                field,
                format!("more than this server's limit of {} interactions", self.limits.max_edges),
            ));
        }
        *self.quadratic.entry(key).or_insert(0.0) += bias;
        Ok(())
    }

    /// The sum of |bias| must be finite, or energies overflow.
    fn finish(self, vartype: Vartype, offset: f64) -> Result<Bqm, ProblemError> {
        if self.labels.is_empty() {
            return Err(ProblemError::invalid("linear", "the model needs at least one variable"));
        }
        let mut quadratic: Vec<(u32, u32, f64)> = self.quadratic.into_iter().map(|((i, j), b)| (i, j, b)).collect();
        quadratic.sort_unstable_by_key(|&(i, j, _)| (i, j));
        let scale: f64 =
            self.linear.iter().chain(quadratic.iter().map(|q| &q.2)).map(|b| b.abs()).sum::<f64>() + offset.abs();
        if !scale.is_finite() {
            return Err(ProblemError::invalid("instance", "the biases sum past a 64-bit float: scale them down"));
        }
        Ok(Bqm { labels: self.labels, vartype, linear: self.linear, quadratic, offset })
    }
}

fn array<'v>(object: &'v Map<String, Value>, field: &str) -> Result<&'v Vec<Value>, ProblemError> {
    object
        .get(field)
        .ok_or_else(|| ProblemError::invalid(field, "missing"))?
        .as_array()
        .ok_or_else(|| ProblemError::invalid(field, "must be an array"))
}

/// dimod's `to_serializable()` of a BinaryQuadraticModel.
fn parse_dimod(object: &Map<String, Value>, limits: &Limits) -> Result<Bqm, ProblemError> {
    let schema = object.get("version").and_then(|v| v.get("bqm_schema")).and_then(Value::as_str).unwrap_or("");
    if !schema.starts_with("3.") {
        return Err(ProblemError::invalid("version.bqm_schema", "expected a 3.x BQM (dimod 0.10 or later)"));
    }
    if object.get("use_bytes").and_then(Value::as_bool) != Some(false) {
        return Err(ProblemError::invalid("use_bytes", "must be false: call to_serializable(use_bytes=False)"));
    }
    let vartype = Vartype::parse(object.get("variable_type").unwrap_or(&Value::Null), "variable_type")?;
    let offset = finite(object.get("offset").unwrap_or(&json!(0.0)), "offset")?;
    let labels = array(object, "variable_labels")?;
    let linear = array(object, "linear_biases")?;
    if linear.len() != labels.len() {
        return Err(ProblemError::invalid(
            "linear_biases",
            format!("{} biases for {} variable_labels", linear.len(), labels.len()),
        ));
    }
    if let Some(declared) = object.get("num_variables").and_then(Value::as_u64) {
        if declared as usize != labels.len() {
            return Err(ProblemError::invalid("num_variables", format!("{declared}, but {} labels", labels.len())));
        }
    }
    let mut builder = Builder::new(limits);
    for (k, (label, bias)) in labels.iter().zip(linear).enumerate() {
        builder.add_variable(
            label.clone(),
            finite(bias, &format!("linear_biases[{k}]"))?,
            &format!("variable_labels[{k}]"),
        )?;
    }
    let (biases, heads, tails) =
        (array(object, "quadratic_biases")?, array(object, "quadratic_head")?, array(object, "quadratic_tail")?);
    if heads.len() != biases.len() || tails.len() != biases.len() {
        return Err(ProblemError::invalid(
            "quadratic_biases",
            format!("{} biases, {} heads and {} tails must be equal in number", biases.len(), heads.len(), tails.len()),
        ));
    }
    if let Some(declared) = object.get("num_interactions").and_then(Value::as_u64) {
        if declared as usize != biases.len() {
            return Err(ProblemError::invalid(
                "num_interactions",
                format!("{declared}, but {} quadratic_biases", biases.len()),
            ));
        }
    }
    let n = labels.len() as u64;
    for k in 0..biases.len() {
        let index = |list: &Vec<Value>, name: &str| {
            let field = format!("{name}[{k}]");
            list[k]
                .as_u64()
                .filter(|&i| i < n)
                .map(|i| i as u32)
                .ok_or_else(|| ProblemError::invalid(&field, format!("must be a variable index in 0..{n}")))
        };
        let (u, v) = (index(heads, "quadratic_head")?, index(tails, "quadratic_tail")?);
        let field = format!("quadratic_biases[{k}]");
        builder.add_interaction(u, v, finite(&biases[k], &field)?, &field)?;
    }
    builder.finish(vartype, offset)
}

/// `{linear, quadratic, offset?, vartype?}`.
fn parse_plain(object: &Map<String, Value>, default: Vartype, limits: &Limits) -> Result<Bqm, ProblemError> {
    if let Some(unknown) = object.keys().find(|k| !["linear", "quadratic", "offset", "vartype"].contains(&k.as_str())) {
        return Err(ProblemError::invalid(
            unknown.as_str(),
            "unknown field; expected linear, quadratic, offset, vartype (or a dimod BQM's to_serializable())",
        ));
    }
    let vartype = match object.get("vartype") {
        None | Some(Value::Null) => default,
        Some(v) => Vartype::parse(v, "vartype")?,
    };
    let offset = match object.get("offset") {
        None | Some(Value::Null) => 0.0,
        Some(v) => finite(v, "offset")?,
    };
    let mut builder = Builder::new(limits);
    match object.get("linear") {
        Some(Value::Array(biases)) => {
            for (i, bias) in biases.iter().enumerate() {
                builder.add_variable(json!(i), finite(bias, &format!("linear[{i}]"))?, "linear")?;
            }
        }
        Some(Value::Object(biases)) => {
            for (label, bias) in biases {
                builder.add_variable(json!(label), finite(bias, &format!("linear.{label}"))?, "linear")?;
            }
        }
        _ => return Err(ProblemError::invalid("linear", "must be a list of biases or an object {label: bias}")),
    }
    let quadratic = match object.get("quadratic") {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(terms)) => terms,
        Some(_) => return Err(ProblemError::invalid("quadratic", "must be a list of [u, v, bias]")),
    };
    if quadratic.len() > limits.max_edges {
        return Err(ProblemError::too_large(
            "quadratic",
            format!("{} interactions exceed this server's limit of {}", quadratic.len(), limits.max_edges),
        ));
    }
    for (k, term) in quadratic.iter().enumerate() {
        let field = format!("quadratic[{k}]");
        let triple = term
            .as_array()
            .filter(|t| t.len() == 3)
            .ok_or_else(|| ProblemError::invalid(&field, "must be [u, v, bias]"))?;
        let (u, v) = (builder.variable(&triple[0], &field)?, builder.variable(&triple[1], &field)?);
        builder.add_interaction(u, v, finite(&triple[2], &field)?, &field)?;
    }
    builder.finish(vartype, offset)
}

/// MQLib's QUBO text, negated (see the module doc).
pub fn parse_mqlib(text: &str, limits: &Limits) -> Result<Bqm, ProblemError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty());
    let (_, header) = lines.next().ok_or_else(|| ProblemError::invalid("line 1", "expected the header `n m`"))?;
    let counts: Vec<usize> = header.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| {
        ProblemError::invalid("line 1", format!("expected `n m` (non-negative integers), found '{header}'"))
    })?;
    let [n, m] = counts[..] else {
        return Err(ProblemError::invalid("line 1", format!("expected `n m`, found '{header}'")));
    };
    if n > limits.max_nodes {
        return Err(ProblemError::too_large(
            "line 1",
            format!("{n} variables exceed this server's limit of {}", limits.max_nodes),
        ));
    }
    if m > limits.max_edges.saturating_add(limits.max_nodes) {
        return Err(ProblemError::too_large(
            "line 1",
            format!("{m} entries exceed this server's limit of {}", limits.max_edges),
        ));
    }
    let mut builder = Builder::new(limits);
    for i in 1..=n {
        builder.add_variable(json!(i), 0.0, "line 1")?;
    }
    let mut diagonal_seen = vec![false; n];
    let mut pairs_seen = std::collections::HashSet::new();
    let mut read = 0usize;
    for (number, line) in lines {
        let field = format!("line {number}");
        if read == m {
            return Err(ProblemError::invalid(&field, format!("more entries than the {m} the header declares")));
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() != 3 {
            return Err(ProblemError::invalid(&field, format!("expected `i j q`, found '{line}'")));
        }
        let index = |token: &str| {
            token
                .parse::<usize>()
                .ok()
                .filter(|&i| (1..=n).contains(&i))
                .ok_or_else(|| ProblemError::invalid(&field, format!("variable '{token}' is not in 1..={n}")))
        };
        let (i, j) = (index(tokens[0])?, index(tokens[1])?);
        let q =
            tokens[2].parse::<f64>().ok().filter(|q| q.is_finite()).ok_or_else(|| {
                ProblemError::invalid(&field, format!("entry '{}' is not a finite number", tokens[2]))
            })?;
        if i == j {
            if std::mem::replace(&mut diagonal_seen[i - 1], true) {
                return Err(ProblemError::invalid(&field, format!("entry ({i}, {i}) is listed twice")));
            }
            builder.linear[i - 1] = -q;
        } else {
            if !pairs_seen.insert((i.min(j), i.max(j))) {
                return Err(ProblemError::invalid(&field, format!("entry ({i}, {j}) is listed twice")));
            }
            builder.add_interaction(i as u32 - 1, j as u32 - 1, -2.0 * q, &field)?;
        }
        read += 1;
    }
    if read != m {
        return Err(ProblemError::invalid(
            "line 1",
            format!("the header declares {m} entries but the file has {read}"),
        ));
    }
    builder.finish(Vartype::Binary, 0.0)
}

/// A model ready to solve.
pub struct QuboInstance {
    name: &'static str,
    bqm: Arc<Bqm>,
    model: IsingModel,
    constant: f64,
}

impl QuboInstance {
    pub fn new(name: &'static str, bqm: Bqm) -> Self {
        let (model, constant) = bqm.to_ising();
        QuboInstance { name, bqm: Arc::new(bqm), model, constant }
    }

    /// `samples` (spins, lowest energy first) as dimod's serializable SampleSet.
    fn sample_set(&self, samples: &[Vec<i8>]) -> Value {
        let rows: Vec<Vec<i8>> =
            samples.iter().map(|s| s.iter().map(|&spin| self.bqm.vartype.value(spin)).collect()).collect();
        let energies: Vec<f64> = samples.iter().map(|s| self.bqm.energy(s)).collect();
        let array = |data: Value, data_type: &str, shape: Value| json!({"type": "array", "data": data, "data_type": data_type, "shape": shape, "use_bytes": false});
        json!({
            "type": "SampleSet",
            "version": {"sampleset_schema": "3.2.0"},
            "num_variables": self.bqm.labels.len(),
            "num_rows": rows.len(),
            "sample_data": array(json!(rows), "int8", json!([rows.len(), self.bqm.labels.len()])),
            "sample_type": "int8",
            "sample_packed": false,
            "vectors": {
                "energy": array(json!(energies), "float64", json!([rows.len()])),
                "num_occurrences": array(json!(vec![1; rows.len()]), "int64", json!([rows.len()])),
            },
            "variable_labels": self.bqm.labels,
            "variable_type": self.bqm.vartype.name(),
            "info": {},
        })
    }

    fn report(&self, outcome: SearchOutcome, samples: Vec<Vec<i8>>, seed: u64) -> SolveReport {
        let constant = self.constant;
        SolveReport {
            problem: self.name.to_string(),
            objective: self.bqm.energy(&outcome.spins),
            energy: self.bqm.energy(&outcome.spins),
            solution: self.sample_set(&samples),
            status: outcome.stop,
            bound: None,
            gap: None,
            elapsed_ms: outcome.elapsed.as_secs_f64() * 1e3,
            history: super::history_points(&outcome.history, |energy| energy + constant),
            chains: outcome.chains,
            rounds: outcome.rounds,
            device: device_name(outcome.device),
            seed,
        }
    }
}

impl Instance for QuboInstance {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        let constant = self.constant;
        let search = SearchParams {
            hooks: params.hooks.mapped(move |energy| energy + constant),
            target_energy: params.target_energy.map(|e| e - constant),
            keep_samples: MAX_SAMPLES,
            ..params.clone()
        };
        let mut outcome = crate::search::minimize(&self.model, &search);
        let mut samples: Vec<Vec<i8>> = std::mem::take(&mut outcome.samples).into_iter().map(|(s, _)| s).collect();
        if samples.is_empty() {
            samples.push(outcome.spins.clone());
        }
        self.report(outcome, samples, params.seed)
    }

    fn solve_baseline(&self, name: &str, _: &SearchParams, _: Models<'_>) -> Solved {
        Err(ProblemError::invalid(
            "method",
            format!("unknown baseline '{name}' (this problem has none; compare with MQLib through `bench nphard`)"),
        ))
    }

    fn size_summary(&self) -> String {
        format!("n={} interactions={}", self.bqm.labels.len(), self.bqm.quadratic.len())
    }
}

/// The `qubo` and `ising` rows: the same model, the vartype plain JSON defaults to.
pub struct QuboProblem {
    name: &'static str,
    default_vartype: Vartype,
}

pub const QUBO: QuboProblem = QuboProblem { name: "qubo", default_vartype: Vartype::Binary };
pub const ISING: QuboProblem = QuboProblem { name: "ising", default_vartype: Vartype::Spin };

impl ProblemCode for QuboProblem {
    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "description": "dimod's BinaryQuadraticModel.to_serializable() (use_bytes=False), or {linear, quadratic, offset, vartype}",
            "properties": {
                "linear": {"description": "list of biases (labels 0..n-1) or object {label: bias}",
                    "anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "object", "additionalProperties": {"type": "number"}}]},
                "quadratic": {"type": "array", "description": "[u, v, bias] over labels of linear", "items": {"type": "array", "minItems": 3, "maxItems": 3,
                    "items": {"anyOf": [{"type": "number"}, {"type": "string"}]}}},
                "offset": {"type": "number"},
                "vartype": {"type": "string", "enum": ["BINARY", "SPIN"]},
                "type": {"type": "string", "enum": ["BinaryQuadraticModel"]}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        let bqm = match input {
            ProblemInput::Text(text) => parse_mqlib(text, limits)?,
            ProblemInput::Json(value) => {
                let object =
                    value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
                match object.get("type").and_then(Value::as_str) {
                    Some("BinaryQuadraticModel") => parse_dimod(object, limits)?,
                    Some(other) => {
                        return Err(ProblemError::invalid("type", format!("'{other}' is not a BinaryQuadraticModel")))
                    }
                    None => parse_plain(object, self.default_vartype, limits)?,
                }
            }
        };
        Ok(Box::new(QuboInstance::new(self.name, bqm)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_states(n: usize) -> impl Iterator<Item = Vec<i8>> {
        (0..1u32 << n).map(move |mask| (0..n).map(|i| if mask >> i & 1 == 1 { 1 } else { -1 }).collect())
    }

    #[test]
    fn each_format_gives_the_energy_of_its_own_definition() {
        let limits = Limits::default();
        // MQLib: maximise x'Qx with Q = [[1, -2], [-2, 3]] and Q_33 = -1: entries (1,1)=1, (2,2)=3, (1,2)=-2, (3,3)=-1.
        let mqlib = parse_mqlib("3 4\n1 1 1\n2 2 3\n1 2 -2\n3 3 -1\n", &limits).unwrap();
        for s in all_states(3) {
            let x: Vec<f64> = s.iter().map(|&v| f64::from(u8::from(v > 0))).collect();
            let xqx = x[0] + 3.0 * x[1] - 4.0 * x[0] * x[1] - x[2];
            assert!((mqlib.energy(&s) + xqx).abs() < 1e-12);
        }
        let plain = json!({"linear": {"a": 1.0, "b": -1.0}, "quadratic": [["a", "b", 0.5], ["b", "a", 0.25]], "offset": 2.0, "vartype": "SPIN"});
        let bqm = parse_plain(plain.as_object().unwrap(), Vartype::Binary, &limits).unwrap();
        for s in all_states(2) {
            let (a, b) = (f64::from(s[0]), f64::from(s[1]));
            assert!((bqm.energy(&s) - (2.0 + a - b + 0.75 * a * b)).abs() < 1e-12);
            let (model, constant) = bqm.to_ising();
            assert!((model.energy(&s) + constant - bqm.energy(&s)).abs() < 1e-12);
        }
    }

    #[test]
    fn malformed_models_name_the_field_or_line() {
        let limits = Limits::default();
        let error = |text: &str| parse_mqlib(text, &limits).unwrap_err().to_string();
        assert!(error("2 2\n1 1 1\n").contains("declares 2 entries but the file has 1"));
        assert!(error("2 1\n1 3 1\n").starts_with("line 2: variable '3' is not in 1..=2"));
        assert!(error("2 1\n1 2 inf\n").starts_with("line 2: entry 'inf' is not a finite"));
        let plain =
            |value: Value| parse_plain(value.as_object().unwrap(), Vartype::Binary, &limits).unwrap_err().to_string();
        assert!(plain(json!({"linear": [1.0], "quadratic": [[0, 1, 1.0]]}))
            .starts_with("quadratic[0]: 1 is not a variable"));
        assert!(plain(json!({"linear": [1.0, 2.0], "quadratic": [[1, 1, 1.0]]}))
            .starts_with("quadratic[0]: a variable cannot"));
        assert!(plain(json!({"linear": [1.0, null]})).starts_with("linear[1]: must be a finite number"));
    }
}
