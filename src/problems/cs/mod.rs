//! Compressive sensing: recover a sparse x from y = A x + e. Baselines OMP, ISTA and FISTA (LASSO,
//! lambda rule in `recovery::lasso_lambda`) and the LISTA policy (`lista`, for shapes with a
//! registered model); the search is a parallel MCMC over supports seeded by OMP, FISTA and the
//! policy. The objective reported is the residual norm ||y - A x|| (lower is better).

pub mod lista;
pub mod recovery;

use super::{HistoryPoint, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport};
use crate::models::{ModelRegistry, RegisteredModel};
use crate::problems::Solved;
use crate::search::{SearchParams, StopReason};
use lista::ListaPolicy;
use recovery::{lasso, lasso_lambda, least_squares, norm, omp, support_search, top_k, Matrix};
use serde_json::json;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tch::Device;

/// `policy` = the LISTA model's estimate, refit by least squares on its k largest entries.
pub const BASELINES: &[&str] = &["omp", "ista", "fista", "policy"];
/// Iterations of ISTA and FISTA.
pub const LASSO_ITERATIONS: usize = 3000;
/// Support-search chains and steps when the request gives none.
pub const DEFAULT_CHAINS: usize = 16;
pub const DEFAULT_STEPS: usize = 3000;

#[derive(Debug, Clone)]
pub struct CsInstance {
    pub a: Matrix,
    pub y: Vec<f64>,
    pub sparsity: Option<usize>,
    pub noise: f64,
}

fn finite_array(value: Option<&serde_json::Value>, field: &str) -> Result<Vec<f64>, ProblemError> {
    let items =
        value.and_then(|v| v.as_array()).ok_or_else(|| ProblemError::invalid(field, "expected an array of numbers"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| ProblemError::invalid(format!("{field}[{i}]"), "expected a finite number"))
        })
        .collect()
}

/// `{"A": [[..]] (m x n), "y": [..] (m), "sparsity": k (optional), "noise": sigma (default 0)}`.
pub fn parse_json(value: &serde_json::Value, limits: &Limits) -> Result<CsInstance, ProblemError> {
    let rows = value
        .get("A")
        .and_then(|a| a.as_array())
        .ok_or_else(|| ProblemError::invalid("A", "expected an m x n array of rows"))?;
    let m = rows.len();
    if m == 0 {
        return Err(ProblemError::invalid("A", "needs at least one row"));
    }
    let mut data = Vec::new();
    let mut n = 0;
    for (i, row) in rows.iter().enumerate() {
        let r = finite_array(Some(row), &format!("A[{i}]"))?;
        if i == 0 {
            n = r.len();
            if n == 0 {
                return Err(ProblemError::invalid("A[0]", "needs at least one column"));
            }
            if m * n > limits.max_edges {
                return Err(ProblemError::too_large(
                    "A",
                    format!("{m} x {n} entries exceed the limit of {}", limits.max_edges),
                ));
            }
        } else if r.len() != n {
            return Err(ProblemError::invalid(format!("A[{i}]"), format!("has {} entries, row 0 has {n}", r.len())));
        }
        data.extend(r);
    }
    let y = finite_array(value.get("y"), "y")?;
    if y.len() != m {
        return Err(ProblemError::invalid("y", format!("has {} entries, A has {m} rows", y.len())));
    }
    let sparsity = match value.get("sparsity") {
        None | Some(serde_json::Value::Null) => None,
        Some(k) => Some(
            k.as_u64()
                .filter(|&k| k >= 1 && (k as usize) <= m.min(n))
                .ok_or_else(|| ProblemError::invalid("sparsity", format!("expected an integer in 1..={}", m.min(n))))?
                as usize,
        ),
    };
    let noise = match value.get("noise") {
        None | Some(serde_json::Value::Null) => 0.0,
        Some(s) => s
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| ProblemError::invalid("noise", "expected a finite number >= 0"))?,
    };
    let a = Matrix::from_shape_vec((m, n), data).map_err(|e| ProblemError::invalid("A", e.to_string()))?;
    Ok(CsInstance { a, y, sparsity, noise })
}

impl CsInstance {
    fn lambda(&self) -> f64 {
        lasso_lambda(&self.a, &self.y, self.noise)
    }

    /// The sparsity: given, or the FISTA estimate's count of entries above 1e-2 of its largest,
    /// capped at m / 2.
    fn sparsity_for(&self, fista: &[f64]) -> usize {
        self.sparsity.unwrap_or_else(|| {
            let max = fista.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            fista.iter().filter(|v| v.abs() > 1e-2 * max).count().clamp(1, (self.a.nrows() / 2).max(1))
        })
    }

    /// The named (or default) LISTA model's estimate; Ok(None) when no model fits this shape.
    fn policy_estimate(&self, models: Models<'_>) -> Result<Option<Vec<f64>>, ProblemError> {
        let default = || default_model(models.registry, self.a.nrows(), self.a.ncols());
        let Some((policy, chosen)) = models.chosen::<Mutex<ListaPolicy>>("compressive_sensing", default)? else {
            return Ok(None);
        };
        let config = policy.lock().expect("policy lock").config.clone();
        if config.measurements != self.a.nrows() || config.unknowns != self.a.ncols() {
            return Err(ProblemError::invalid(
                "model",
                format!(
                    "'{}' serves {} x {}, A is {} x {}",
                    chosen.manifest.name,
                    config.measurements,
                    config.unknowns,
                    self.a.nrows(),
                    self.a.ncols()
                ),
            ));
        }
        Ok(Some(policy.lock().expect("policy lock").estimate(&self.a, &self.y)))
    }

    /// The support of `x` filled up to `k` with the outside columns most correlated with the
    /// residual y - A x.
    fn grown(&self, x: &[f64], k: usize) -> Vec<usize> {
        let mut support: Vec<usize> = (0..x.len()).filter(|&i| x[i] != 0.0).collect();
        let residual: Vec<f64> = recovery::apply(&self.a, x).iter().zip(&self.y).map(|(ax, y)| y - ax).collect();
        let correlation = recovery::apply_t(&self.a, &residual);
        let mut outside: Vec<usize> = (0..self.a.ncols()).filter(|i| !support.contains(i)).collect();
        outside.sort_by(|&p, &q| correlation[q].abs().total_cmp(&correlation[p].abs()));
        support.extend(outside.into_iter().take(k.saturating_sub(support.len())));
        support
    }

    /// x with the least-squares values on `support` and zeros elsewhere.
    fn refit(&self, support: &[usize]) -> Vec<f64> {
        let (values, _) = least_squares(&self.a, &self.y, support);
        let mut x = vec![0.0; self.a.ncols()];
        for (i, v) in support.iter().zip(values) {
            x[*i] = v;
        }
        x
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        x: Vec<f64>,
        status: StopReason,
        start: Instant,
        history: Vec<HistoryPoint>,
        chains: usize,
        rounds: usize,
        seed: u64,
    ) -> SolveReport {
        let r: Vec<f64> = recovery::apply(&self.a, &x).iter().zip(&self.y).map(|(ax, y)| y - ax).collect();
        let residual = norm(&r);
        let support: Vec<usize> = (0..x.len()).filter(|&i| x[i] != 0.0).collect();
        SolveReport {
            problem: "compressive_sensing".into(),
            objective: residual,
            energy: residual * residual,
            solution: json!({"x": x, "support": support, "residual": residual}),
            status,
            bound: None,
            gap: None,
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
            history,
            chains,
            rounds,
            device: super::device_name(Device::Cpu),
            seed,
        }
    }
}

impl Instance for CsInstance {
    /// The support search at the given sparsity; with an estimated one, a residual above the
    /// noise level means the estimate was too small, so larger supports are tried in turn, up
    /// to min(m, n), until one reaches it or the budget runs out.
    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport {
        let start = Instant::now();
        let fista = lasso(&self.a, &self.y, self.lambda(), LASSO_ITERATIONS, true);
        let first_k = self.sparsity_for(&fista);
        let last_k = if self.sparsity.is_some() { first_k } else { self.a.nrows().min(self.a.ncols()).max(first_k) };
        // A named model that does not fit was rejected when the request was checked; here a
        // missing model only means one seed fewer.
        let policy_x = self.policy_estimate(models).ok().flatten();
        // Without noise a zero residual is the goal; with noise sigma, E ~ m sigma^2 is as good as it gets.
        let target = if self.noise == 0.0 {
            1e-20 * self.y.iter().map(|v| v * v).sum::<f64>()
        } else {
            self.a.nrows() as f64 * self.noise * self.noise
        };
        let steps = params.max_rounds.unwrap_or(DEFAULT_STEPS);
        let budget = Duration::from_secs_f64(params.time_limit_s);
        let hooks = params.hooks.mapped(f64::sqrt);
        let (mut best_x, mut best_energy, mut chains, mut iterations) =
            (vec![0.0; self.a.ncols()], f64::INFINITY, 0, 0);
        let mut history = Vec::new();
        for k in first_k..=last_k {
            // A grown support starts from the best one so far plus the column most correlated
            // with its residual (one OMP step, O(mn)), rather than a fresh OMP run of k steps.
            let greedy = if k == first_k { top_k(&omp(&self.a, &self.y, k, 0.0), k) } else { self.grown(&best_x, k) };
            let mut seeds = vec![greedy, top_k(&fista, k)];
            if let Some(x) = &policy_x {
                seeds.push(top_k(x, k));
            }
            let offset = start.elapsed();
            let found = support_search(
                &self.a,
                &self.y,
                k,
                &seeds,
                params.chains.unwrap_or(DEFAULT_CHAINS),
                steps,
                params.seed,
                budget.saturating_sub(offset),
                target,
                &hooks,
            );
            for (t, e) in &found.history {
                if *e < best_energy {
                    best_energy = *e;
                    history.push(HistoryPoint { elapsed_ms: (offset + *t).as_secs_f64() * 1e3, objective: e.sqrt() });
                }
            }
            if found.energy <= best_energy {
                best_x = found.x;
            }
            chains = found.chains;
            iterations += found.iterations;
            if best_energy <= target || start.elapsed() >= budget || params.hooks.cancelled() {
                break;
            }
        }
        let status = if best_energy <= target {
            StopReason::TargetReached
        } else if start.elapsed() < budget && !params.hooks.cancelled() {
            StopReason::RoundLimit
        } else {
            StopReason::TimeLimit
        };
        self.report(best_x, status, start, history, chains, iterations, params.seed)
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        let start = Instant::now();
        let x = match name {
            "omp" => {
                let k = self.sparsity.unwrap_or(self.a.nrows().min(self.a.ncols()));
                omp(&self.a, &self.y, k, self.noise * (self.a.nrows() as f64).sqrt() + 1e-12 * norm(&self.y))
            }
            "ista" => lasso(&self.a, &self.y, self.lambda(), LASSO_ITERATIONS, false),
            "fista" => lasso(&self.a, &self.y, self.lambda(), LASSO_ITERATIONS, true),
            "policy" => {
                let x = self.policy_estimate(models)?.ok_or_else(|| {
                    ProblemError::invalid(
                        "model",
                        format!(
                            "no compressive_sensing model for A of {} x {} (GET /v1/models)",
                            self.a.nrows(),
                            self.a.ncols()
                        ),
                    )
                })?;
                let k = self.sparsity_for(&x);
                self.refit(&top_k(&x, k))
            }
            other => return Err(ProblemError::invalid("method", format!("unknown baseline '{other}'"))),
        };
        Ok(self.report(x, StopReason::Converged, start, Vec::new(), 1, 0, params.seed))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        objective * objective
    }

    fn size_summary(&self) -> String {
        format!("m={} n={}", self.a.nrows(), self.a.ncols())
    }
}

pub struct CompressiveSensing;

/// The default compressive-sensing model for an m x n instance: the first of that shape.
pub fn default_model(registry: &ModelRegistry, measurements: usize, unknowns: usize) -> Option<&RegisteredModel> {
    registry.models.iter().find(|m| {
        m.policy::<Mutex<ListaPolicy>>().is_some_and(|p| {
            let config = &p.lock().expect("policy lock").config;
            config.measurements == measurements && config.unknowns == unknowns
        })
    })
}

impl ProblemCode for CompressiveSensing {
    fn policy_loader(&self) -> Option<crate::models::PolicyLoader> {
        Some(lista::load)
    }

    fn instance_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "required": ["A", "y"],
            "properties": {
                "A": {"type": "array", "description": "m x n measurement matrix, rows", "items": {"type": "array", "items": {"type": "number"}}},
                "y": {"type": "array", "description": "m measurements", "items": {"type": "number"}},
                "sparsity": {"type": "integer", "minimum": 1, "description": "k, if known (else estimated from FISTA)"},
                "noise": {"type": "number", "minimum": 0, "description": "noise standard deviation (default 0)"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        match input {
            ProblemInput::Json(value) => Ok(Box::new(parse_json(value, limits)?)),
            ProblemInput::Text(_) => Err(ProblemError::invalid("body", "compressive_sensing accepts JSON only")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_mismatches_and_non_finite_values_name_their_field() {
        let limits = Limits::default();
        for (value, field) in [
            (json!({"y": [1]}), "A"),
            (json!({"A": [[1, 2], [3]], "y": [1, 2]}), "A[1]"),
            (json!({"A": [[1, 2], [3, 4]], "y": [1]}), "y"),
            (json!({"A": [[1, 2], [3, "inf"]], "y": [1, 2]}), "A[1][1]"),
            (json!({"A": [[1, 2], [3, 4]], "y": [1, 2], "sparsity": 0}), "sparsity"),
            (json!({"A": [[1, 2], [3, 4]], "y": [1, 2], "noise": -1}), "noise"),
        ] {
            let error = parse_json(&value, &limits).expect_err("rejected");
            assert_eq!(error.field(), Some(field), "{value}: {error}");
        }
    }
}
