//! Downlink MISO beamforming: K single-antenna users, N antennas, channel H (K x N complex),
//! power budget P, noise sigma^2; maximise the sum rate (see `beamforming`). Baselines: MRT, ZF,
//! regularized ZF ("MMSE"), WMMSE; the search refines many starts (WMMSE, the precoders, random)
//! in parallel by projected gradient ascent.

pub mod beamforming;
pub mod policy;

use super::{HistoryPoint, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport};
use crate::models::{ModelRegistry, RegisteredModel};
use crate::problems::Solved;
use crate::search::{SearchParams, StopReason};
use beamforming::{mmse, mrt, parallel_gradient_search, sum_rate, wmmse, zero_forcing, COMPLEX};
use policy::MimoPolicy;
use serde_json::json;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tch::{Device, Kind, Tensor};

/// MRT, zero-forcing, regularized ZF with alpha = K sigma^2 / P, WMMSE (200 iterations from RZF),
/// and the learned policy alone (`policy`: the named or default model).
pub const BASELINES: &[&str] = &["mrt", "zf", "rzf", "wmmse", "policy"];
pub const WMMSE_ITERATIONS: usize = 200;
/// Parallel starts of the search when `chains` is not given.
pub const DEFAULT_STARTS: usize = 64;

/// A validated instance (plain numbers: tensors are built per solve, they are not `Sync`).
#[derive(Debug, Clone)]
pub struct MimoInstance {
    users: usize,
    antennas: usize,
    /// Row-major K x N parts of H.
    re: Vec<f64>,
    im: Vec<f64>,
    pub power: f64,
    pub noise: f64,
}

fn matrix(value: &serde_json::Value, field: &str) -> Result<Vec<Vec<f64>>, ProblemError> {
    let rows = value.as_array().ok_or_else(|| ProblemError::invalid(field, "expected an array of rows"))?;
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            row.as_array()
                .ok_or_else(|| ProblemError::invalid(format!("{field}[{i}]"), "expected an array of numbers"))?
                .iter()
                .enumerate()
                .map(|(j, x)| {
                    x.as_f64()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| ProblemError::invalid(format!("{field}[{i}][{j}]"), "expected a finite number"))
                })
                .collect()
        })
        .collect()
}

fn positive(value: &serde_json::Value, field: &str, default: Option<f64>) -> Result<f64, ProblemError> {
    match (value.get(field), default) {
        (None | Some(serde_json::Value::Null), Some(d)) => Ok(d),
        (None | Some(serde_json::Value::Null), None) => Err(ProblemError::invalid(field, "required")),
        (Some(v), _) => v
            .as_f64()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| ProblemError::invalid(field, "expected a finite number > 0")),
    }
}

/// One channel object `{re, im}` at `field`: (K, N, re, im) row-major.
fn parse_channel(channel: &serde_json::Value, field: &str) -> Result<(usize, usize, Vec<f64>, Vec<f64>), ProblemError> {
    let part = |name: &str| -> Result<Vec<Vec<f64>>, ProblemError> {
        let f = format!("{field}.{name}");
        matrix(channel.get(name).ok_or_else(|| ProblemError::invalid(f.clone(), "required"))?, &f)
    };
    let (re, im) = (part("re")?, part("im")?);
    let k = re.len();
    let n = re.first().map_or(0, Vec::len);
    if k == 0 || n == 0 {
        return Err(ProblemError::invalid(
            format!("{field}.re"),
            "needs at least one user (row) and one antenna (column)",
        ));
    }
    if re.iter().any(|r| r.len() != n) {
        return Err(ProblemError::invalid(format!("{field}.re"), format!("rows must all have {n} entries")));
    }
    if im.len() != k || im.iter().any(|r| r.len() != n) {
        return Err(ProblemError::invalid(format!("{field}.im"), format!("must be {k} x {n} like {field}.re")));
    }
    Ok((k, n, re.concat(), im.concat()))
}

/// `{"channel": {"re": [[..]], "im": [[..]]}, "power": P, "noise": sigma^2 (default 1)}`.
pub fn parse_json(value: &serde_json::Value, limits: &Limits) -> Result<MimoInstance, ProblemError> {
    let channel = value.get("channel").ok_or_else(|| ProblemError::invalid("channel", "required: {re, im}"))?;
    let (k, n, re, im) = parse_channel(channel, "channel")?;
    if k * n > limits.max_nodes {
        return Err(ProblemError::too_large(
            "channel",
            format!("{k} x {n} entries exceed the limit of {}", limits.max_nodes),
        ));
    }
    let power = positive(value, "power", None)?;
    let noise = positive(value, "noise", Some(1.0))?;
    Ok(MimoInstance { users: k, antennas: n, re, im, power, noise })
}

/// Several channels sharing P and noise: `{"channels": [{re, im}, ...], "power": P, "noise": ..}`;
/// all entries together are capped by `max_nodes`.
pub fn parse_batch(value: &serde_json::Value, limits: &Limits) -> Result<MimoBatch, ProblemError> {
    let list = value
        .get("channels")
        .and_then(|c| c.as_array())
        .ok_or_else(|| ProblemError::invalid("channels", "expected an array of {re, im}"))?;
    if list.is_empty() {
        return Err(ProblemError::invalid("channels", "needs at least one channel"));
    }
    let power = positive(value, "power", None)?;
    let noise = positive(value, "noise", Some(1.0))?;
    let mut items = Vec::with_capacity(list.len());
    let mut entries = 0usize;
    for (i, channel) in list.iter().enumerate() {
        let (k, n, re, im) = parse_channel(channel, &format!("channels[{i}]"))?;
        entries += k * n;
        if entries > limits.max_nodes {
            return Err(ProblemError::too_large(
                "channels",
                format!("more than {} channel entries in total", limits.max_nodes),
            ));
        }
        items.push(MimoInstance { users: k, antennas: n, re, im, power, noise });
    }
    Ok(MimoBatch { items })
}

/// A batch of channels solved one after another within the request's budget; the objective is
/// the mean sum rate, `solution.items[i]` each channel's answer.
pub struct MimoBatch {
    pub items: Vec<MimoInstance>,
}

impl MimoBatch {
    fn combine(&self, reports: Vec<SolveReport>, start: Instant, seed: u64) -> SolveReport {
        let mean = reports.iter().map(|r| r.objective).sum::<f64>() / reports.len() as f64;
        let status = if reports.iter().any(|r| r.status == StopReason::TimeLimit) {
            StopReason::TimeLimit
        } else {
            reports[0].status
        };
        let elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
        SolveReport {
            problem: "mimo".into(),
            objective: mean,
            energy: -mean,
            solution: json!({"items": reports.iter().map(|r| {
                let mut item = r.solution.clone();
                item["sum_rate"] = json!(r.objective);
                item
            }).collect::<Vec<_>>()}),
            status,
            bound: None,
            gap: None,
            elapsed_ms,
            history: vec![HistoryPoint { elapsed_ms, objective: mean }],
            chains: reports[0].chains,
            rounds: reports.iter().map(|r| r.rounds).sum(),
            device: reports[0].device.clone(),
            seed,
        }
    }
}

impl Instance for MimoBatch {
    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport {
        let start = Instant::now();
        let each = SearchParams { time_limit_s: params.time_limit_s / self.items.len() as f64, ..params.clone() };
        let reports = self.items.iter().map(|item| item.solve(&each, models)).collect();
        self.combine(reports, start, params.seed)
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        let start = Instant::now();
        let reports =
            self.items.iter().map(|item| item.solve_baseline(name, params, models)).collect::<Result<Vec<_>, _>>()?;
        Ok(self.combine(reports, start, params.seed))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        -objective
    }

    fn size_summary(&self) -> String {
        format!("channels={}", self.items.len())
    }
}

impl MimoInstance {
    fn users(&self) -> usize {
        self.users
    }

    fn antennas(&self) -> usize {
        self.antennas
    }

    /// H [K, N] complex128 on the CPU.
    pub fn channel(&self) -> Tensor {
        let shape = [self.users as i64, self.antennas as i64];
        Tensor::complex(&Tensor::from_slice(&self.re).view(shape), &Tensor::from_slice(&self.im).view(shape))
            .to_kind(COMPLEX)
    }

    /// A classical baseline, or `policy` (which needs `models`).
    fn baseline(&self, h: &Tensor, name: &str, models: Option<Models<'_>>) -> Result<Tensor, ProblemError> {
        Ok(match name {
            "mrt" => mrt(h, self.power),
            "zf" => zero_forcing(h, self.power),
            "rzf" => mmse(h, self.power, self.noise),
            "wmmse" => wmmse(h, self.power, self.noise, &mmse(h, self.power, self.noise), WMMSE_ITERATIONS),
            "policy" => {
                let models = models.ok_or_else(|| ProblemError::invalid("method", "policy needs a model registry"))?;
                let w = self.policy_beamformer(h, models)?.ok_or_else(|| {
                    ProblemError::invalid(
                        "model",
                        format!("no model for {} users x {} antennas (GET /v1/models)", self.users, self.antennas),
                    )
                })?;
                w
            }
            other => return Err(ProblemError::invalid("method", format!("unknown baseline '{other}'"))),
        })
    }

    /// The named model's (or the default model's) beamformer; Ok(None) when no model fits this
    /// size.
    fn policy_beamformer(&self, h: &Tensor, models: Models<'_>) -> Result<Option<Tensor>, ProblemError> {
        let default = || default_model(models.registry, self.users, self.antennas, self.power);
        let Some((policy, chosen)) = models.chosen::<Mutex<MimoPolicy>>("mimo", default)? else { return Ok(None) };
        let config = policy.lock().expect("policy lock").config.clone();
        if config.users != self.users || config.antennas != self.antennas {
            return Err(ProblemError::invalid(
                "model",
                format!(
                    "'{}' serves {} x {}, the instance is {} x {}",
                    chosen.manifest.name, config.users, config.antennas, self.users, self.antennas
                ),
            ));
        }
        let policy = policy.lock().expect("policy lock");
        // The policy outputs power P_model; rescale to the instance's budget.
        let w = tch::no_grad(|| policy.beamformers(&h.unsqueeze(0))).get(0);
        Ok(Some(beamforming::to_power(&w, self.power)))
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        h: &Tensor,
        w: &Tensor,
        status: StopReason,
        elapsed: Duration,
        history: Vec<HistoryPoint>,
        chains: usize,
        rounds: usize,
        device: Device,
        seed: u64,
    ) -> SolveReport {
        let rate = sum_rate(h, w, self.noise).double_value(&[0]);
        let gains = h.matmul(w).abs().square();
        let signal = gains.diagonal(0, 0, 1);
        let interference = gains.sum_dim_intlist(1, false, Kind::Double) - &signal;
        let user_rates: Vec<f64> = (signal / (interference + self.noise) + 1.0).log2().try_into().expect("f64");
        let part = |t: Tensor| -> Vec<Vec<f64>> {
            let (rows, cols) = (t.size()[0], t.size()[1]);
            let flat: Vec<f64> = t.contiguous().view([-1]).try_into().expect("f64");
            (0..rows as usize).map(|r| flat[r * cols as usize..(r + 1) * cols as usize].to_vec()).collect()
        };
        SolveReport {
            problem: "mimo".into(),
            objective: rate,
            energy: -rate,
            solution: json!({"w": {"re": part(w.real()), "im": part(w.imag())}, "user_rates": user_rates}),
            status,
            bound: None,
            gap: None,
            elapsed_ms: elapsed.as_secs_f64() * 1e3,
            history,
            chains,
            rounds,
            device: super::device_name(device),
            seed,
        }
    }
}

impl Instance for MimoInstance {
    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport {
        let start = Instant::now();
        let h = self.channel();
        let time_limit = Duration::from_secs_f64(params.time_limit_s);
        let mut seeds: Vec<Tensor> =
            ["wmmse", "rzf", "mrt"].iter().map(|b| self.baseline(&h, b, None).expect("classical")).collect();
        if self.users() <= self.antennas() {
            seeds.push(self.baseline(&h, "zf", None).expect("classical"));
        }
        // A named model was validated by `prepare_options`; a size mismatch only drops the seed.
        if let Ok(Some(w)) = self.policy_beamformer(&h, models) {
            seeds.insert(0, w);
        }
        let starts = params.chains.unwrap_or(DEFAULT_STARTS).max(seeds.len());
        let offset = start.elapsed();
        let found = parallel_gradient_search(
            &h,
            self.power,
            self.noise,
            &seeds,
            starts,
            params.seed,
            time_limit.saturating_sub(offset),
            params.max_rounds.unwrap_or(usize::MAX),
            params.device,
            &params.hooks,
        );
        let history = found
            .history
            .iter()
            .map(|(t, r)| HistoryPoint { elapsed_ms: (offset + *t).as_secs_f64() * 1e3, objective: *r })
            .collect();
        self.report(
            &h,
            &found.w,
            found.stop,
            start.elapsed(),
            history,
            found.starts,
            found.iterations,
            params.device,
            params.seed,
        )
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        let start = Instant::now();
        let h = self.channel();
        let w = self.baseline(&h, name, Some(models))?;
        let rate = sum_rate(&h, &w, self.noise).double_value(&[0]);
        let history = vec![HistoryPoint { elapsed_ms: start.elapsed().as_secs_f64() * 1e3, objective: rate }];
        Ok(self.report(&h, &w, StopReason::Converged, start.elapsed(), history, 1, 0, Device::Cpu, params.seed))
    }

    fn target_energy(&self, objective: f64) -> f64 {
        -objective
    }

    fn size_summary(&self) -> String {
        format!("users={} antennas={}", self.users(), self.antennas())
    }
}

/// The registry entry.
pub struct Mimo;

/// The default MIMO model for a size: same users and antennas, the closest power (in dB).
pub fn default_model(registry: &ModelRegistry, users: usize, antennas: usize, power: f64) -> Option<&RegisteredModel> {
    registry
        .models
        .iter()
        .filter_map(|m| m.policy::<Mutex<MimoPolicy>>().map(|p| (m, p.lock().expect("policy lock").config.clone())))
        .filter(|(_, c)| c.users == users && c.antennas == antennas)
        .min_by(|(_, a), (_, b)| {
            let gap = |c: &policy::PolicyConfig| (c.power.log10() - power.log10()).abs();
            gap(a).total_cmp(&gap(b))
        })
        .map(|(m, _)| m)
}

impl ProblemCode for Mimo {
    fn policy_loader(&self) -> Option<crate::models::PolicyLoader> {
        Some(policy::load)
    }

    fn instance_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "description": "One channel (`channel`) or a batch (`channels`: objective = mean sum rate, solution.items per channel)",
            "required": ["power"],
            "properties": {
                "channels": {"type": "array", "items": {"type": "object", "required": ["re", "im"]}},
                "channel": {
                    "type": "object",
                    "description": "H, K x N: row k is user k's channel",
                    "required": ["re", "im"],
                    "properties": {
                        "re": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
                        "im": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
                    }
                },
                "power": {"type": "number", "exclusiveMinimum": 0, "description": "total transmit power P (linear)"},
                "noise": {"type": "number", "exclusiveMinimum": 0, "description": "noise power sigma^2 (default 1)"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        match input {
            ProblemInput::Json(value) if value.get("channels").is_some() => Ok(Box::new(parse_batch(value, limits)?)),
            ProblemInput::Json(value) => Ok(Box::new(parse_json(value, limits)?)),
            ProblemInput::Text(_) => Err(ProblemError::invalid("body", "mimo accepts JSON only")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_instances_name_their_field() {
        let limits = Limits::default();
        let cases = [
            (json!({"power": 1}), "channel"),
            (json!({"channel": {"re": [[1, 2]], "im": [[1]]}, "power": 1}), "channel.im"),
            (json!({"channel": {"re": [[1, 2], [3]], "im": [[1, 2], [3, 4]]}, "power": 1}), "channel.re"),
            (json!({"channel": {"re": [[1, "x"]], "im": [[1, 2]]}, "power": 1}), "channel.re[0][1]"),
            (json!({"channel": {"re": [[1, 2]], "im": [[1, 2]]}, "power": -1}), "power"),
            (json!({"channel": {"re": [[1, 2]], "im": [[1, 2]]}, "power": 1, "noise": 0}), "noise"),
        ];
        for (value, field) in [
            (json!({"channels": [], "power": 1}), "channels"),
            (
                json!({"channels": [{"re": [[1]], "im": [[0]]}, {"re": [[1, 2]], "im": [[1]]}], "power": 1}),
                "channels[1].im",
            ),
        ] {
            let error = parse_batch(&value, &limits).err().expect("rejected");
            assert_eq!(error.field(), Some(field), "{value}: {error}");
        }
        for (value, field) in cases {
            let error = parse_json(&value, &limits).unwrap_err();
            assert_eq!(error.field(), Some(field), "{value}: {error}");
        }
    }
}
