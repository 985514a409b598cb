//! The symmetric travelling salesman problem: the shortest closed tour through every city.
//!
//! Inputs: TSPLIB `.tsp` text (`TYPE : TSP`, `EDGE_WEIGHT_TYPE` EUC_2D, CEIL_2D, ATT or GEO with a
//! `NODE_COORD_SECTION`, or EXPLICIT with `EDGE_WEIGHT_FORMAT : FULL_MATRIX`), with TSPLIB's
//! integer distances (Reinelt 1991: EUC_2D nint(euclidean), CEIL_2D its ceiling, ATT the
//! pseudo-euclidean rounding up, GEO the great-circle distance on the idealised sphere of radius
//! 6378.388 km with coordinates in DDD.MM, degrees truncated as concorde does); and JSON,
//! `{"coordinates": [[x, y], ...], "metric": "euclidean" | "euc_2d" | "ceil_2d" | "att" | "geo"}`
//! (default: unrounded euclidean) or `{"distances": [[...]]}` (symmetric, non-negative).
//!
//! Output: `solution.tour`, every city once as numbered in the input (TSPLIB's node ids; JSON:
//! 0-based), and `solution.length` (= `objective`).
//!
//! Search (`ils.rs`): the engine's parallel chains, each an iterated local search:
//! Lin-Kernighan moves (`lk.rs`) over five alpha-nearest candidates per city (`alpha.rs`) and
//! Or-opt over 10-nearest-neighbour lists, with don't-look bits (`tour.rs`), perturbed by a
//! segment exchange (a double bridge within a window of the tour) and accepted by Metropolis
//! at a low temperature (a tenth of the mean edge); partition crossover (`gpx.rs`) merges the
//! walk with its chain's best tour.
//! Baseline `nn-2opt`: the nearest-neighbour tour from the first city, then 2-opt to a local
//! optimum.
//!
//! Bound: the Held-Karp 1-tree bound with subgradient steps (`held_karp.rs`) from the candidate
//! ascent's penalties, in at most a twentieth of the budget, rounded up for TSPLIB's integer
//! distances; skipped when one O(n^2) step would take more than half of that (about 2,500 cities
//! at 1 s, 7,900 at 10 s here).

pub mod alpha;
pub mod generate;
pub mod gpx;
pub mod held_karp;
pub mod ils;
pub mod lk;
pub mod neighbours;
pub mod tour;

use super::{Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::problems::Solved;
use crate::search::moves::minimize_with;
use crate::search::{SearchParams, StopReason};
use serde_json::{json, Value};
use std::time::Instant;

/// Largest instance, in cities: the neighbour lists cost O(n^2) distance evaluations.
/// The travelling-salesman limits (flags of `serve` and `solve`).
#[derive(Debug, Clone, serde::Serialize, clap::Args)]
pub struct TspLimits {
    /// Largest travelling-salesman instance, in cities (`tsp`; its neighbour lists are O(n^2)).
    #[arg(long, env = "RLSOLVER_MAX_CITIES", default_value_t = TspLimits::default().max_cities)]
    pub max_cities: usize,
}

impl Default for TspLimits {
    fn default() -> Self {
        TspLimits { max_cities: MAX_CITIES }
    }
}

pub const MAX_CITIES: usize = 20_000;
/// Largest explicit distance matrix, in cities.
pub const MAX_MATRIX_CITIES: usize = 3_000;
/// Neighbours per city in the candidate lists.
pub const NEIGHBOURS: usize = 10;
/// Share of the time limit for each of the two ascents before the search: the sparse one that
/// ranks the candidates (`alpha`) and the dense one that proves the Held-Karp bound.
pub const PREPROCESSING_SHARE: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Euclidean,
    Euc2d,
    Ceil2d,
    Att,
    /// Coordinates converted to (latitude, longitude) in radians.
    Geo,
}

#[derive(Debug, Clone)]
pub enum Distances {
    Coordinates { xy: Vec<(f64, f64)>, metric: Metric },
    Matrix { n: usize, d: Vec<f64> },
}

impl Distances {
    pub fn len(&self) -> usize {
        match self {
            Distances::Coordinates { xy, .. } => xy.len(),
            Distances::Matrix { n, .. } => *n,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An upper bound on any tour's length: n times the longest distance (for coordinates, the
    /// bounding box's diagonal, scaled as the metric scales; geographic distances are bounded).
    fn longest_tour_bound(&self) -> f64 {
        let n = self.len() as f64;
        match self {
            Distances::Matrix { d, .. } => n * d.iter().copied().fold(0.0, f64::max),
            Distances::Coordinates { metric: Metric::Geo, .. } => n * 20_038.0,
            Distances::Coordinates { xy, .. } => {
                let (mut low, mut high) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
                for &(x, y) in xy {
                    (low, high) = ((low.0.min(x), low.1.min(y)), (high.0.max(x), high.1.max(y)));
                }
                // Squared as `get` squares (an overflowing square is an infinite distance there);
                // ATT divides the squared distance by 10 before the root; CEIL_2D rounds up by < 1.
                let (width, height) = (high.0 - low.0, high.1 - low.1);
                n * ((width * width + height * height).sqrt() + 1.0)
            }
        }
    }

    #[inline]
    pub fn get(&self, i: u32, j: u32) -> f64 {
        match self {
            Distances::Matrix { n, d } => d[i as usize * n + j as usize],
            Distances::Coordinates { xy, metric } => {
                let (a, b) = (xy[i as usize], xy[j as usize]);
                let (dx, dy) = (a.0 - b.0, a.1 - b.1);
                match metric {
                    Metric::Euclidean => (dx * dx + dy * dy).sqrt(),
                    Metric::Euc2d => floor((dx * dx + dy * dy).sqrt() + 0.5),
                    Metric::Ceil2d => -floor(-(dx * dx + dy * dy).sqrt()),
                    Metric::Att => {
                        let r = ((dx * dx + dy * dy) / 10.0).sqrt();
                        let t = floor(r + 0.5);
                        if t < r {
                            t + 1.0
                        } else {
                            t
                        }
                    }
                    Metric::Geo => {
                        if i == j {
                            return 0.0;
                        }
                        const RRR: f64 = 6378.388;
                        let q1 = (a.1 - b.1).cos();
                        let q2 = (a.0 - b.0).cos();
                        let q3 = (a.0 + b.0).cos();
                        (RRR * (0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)).clamp(-1.0, 1.0).acos() + 1.0).floor()
                    }
                }
            }
        }
    }
}

/// `x.floor()` by an integer conversion where one is exact: without SSE4.1 in the baseline
/// x86-64 target, `f64::floor` is a call into libm, which was a tenth of the local search's time.
#[inline]
fn floor(x: f64) -> f64 {
    if x.abs() < 4e15 {
        let t = x as i64 as f64;
        if t > x {
            t - 1.0
        } else {
            t
        }
    } else {
        x.floor()
    }
}

/// TSPLIB's GEO conversion of DDD.MM to radians (PI = 3.141592 as in TSPLIB).
fn geo_radians(x: f64) -> f64 {
    // TSPLIB's own truncated PI: its published GEO optima are computed with it.
    #[allow(clippy::approx_constant)]
    const PI: f64 = 3.141592;
    let degrees = x.trunc();
    PI * (degrees + 5.0 * (x - degrees) / 3.0) / 180.0
}

/// A validated instance.
#[derive(Debug, Clone)]
pub struct Tsp {
    pub distances: Distances,
    /// Each city's id as the input numbers it.
    pub ids: Vec<i64>,
    /// Each city's `NEIGHBOURS` nearest others, nearest first.
    pub neighbours: Vec<Vec<u32>>,
}

impl Tsp {
    pub fn new(distances: Distances, ids: Vec<i64>) -> Result<Self, ProblemError> {
        let n = distances.len();
        if n < 3 {
            return Err(ProblemError::invalid("instance", format!("{n} cities: a tour needs at least 3")));
        }
        if !distances.longest_tour_bound().is_finite() {
            let field = if matches!(distances, Distances::Matrix { .. }) { "distances" } else { "coordinates" };
            return Err(ProblemError::invalid(
                field,
                "so far apart that a tour's length overflows a 64-bit float: scale them down",
            ));
        }
        let neighbours = neighbours::nearest(&distances, NEIGHBOURS);
        Ok(Tsp { distances, ids, neighbours })
    }

    pub fn num_cities(&self) -> usize {
        self.distances.len()
    }

    /// The Held-Karp bound within `seconds` from the penalties `pi`, given a tour of length
    /// `upper`, rounded up for integer distances; None when one step (Prim's algorithm on every
    /// pair) would take more than half of it.
    pub fn lower_bound(&self, seconds: f64, upper: f64, pi: Vec<f64>) -> Option<f64> {
        let n = self.num_cities() as f64;
        // About 4 ns per pair on this machine's cores.
        if n * n * 4e-9 > 0.5 * seconds {
            return None;
        }
        let deadline = Instant::now() + std::time::Duration::from_secs_f64(seconds.max(0.0));
        let bound = held_karp::lower_bound(&self.distances, upper, deadline, pi);
        let integral = match &self.distances {
            Distances::Coordinates { metric, .. } => *metric != Metric::Euclidean,
            Distances::Matrix { d, .. } => d.iter().all(|v| v.fract() == 0.0),
        };
        Some(if integral { (bound - 1e-9 * bound.abs().max(1.0)).ceil() } else { bound })
    }

    /// The nearest-neighbour tour from the first city, then 2-opt (the `nn-2opt` baseline).
    fn nn_two_opt(&self) -> tour::Tour {
        let mut tour = tour::Tour::new(ils::nearest_neighbour(self, 0), &self.distances);
        tour.mark_all();
        tour.optimize(&self.distances, &self.neighbours, None);
        tour
    }

    fn report(&self, order: &[u32], run: SolveRun) -> SolveReport {
        let length = tour::tour_length(order, &self.distances);
        let tour: Vec<i64> = order.iter().map(|&c| self.ids[c as usize]).collect();
        SolveReport::new("tsp", length, length, json!({"tour": tour, "length": length}), run)
    }
}

impl Instance for Tsp {
    fn solve(&self, params: &SearchParams, _models: Models<'_>) -> SolveReport {
        let started = Instant::now();
        // The ascents step towards this length: a 2-opt tour (about 5% above the optimum on
        // TSPLIB's) keeps their Polyak steps several times shorter than a nearest-neighbour
        // tour's (about 25% above) would.
        let upper = self.nn_two_opt().length;
        let share = params.time_limit_s * PREPROCESSING_SHARE;
        let (candidates, pi) = match alpha::candidates(self, upper, share, &alpha::AlphaConfig::default()) {
            Some(found) => (found.lists, found.pi),
            None => (self.neighbours.clone(), vec![0.0; self.num_cities()]),
        };
        let bound = self.lower_bound(share, upper, pi);
        let moves = ils::IteratedLocalSearch::new(self, candidates);
        // The budget covers building the candidate structures too.
        let left = (params.time_limit_s - started.elapsed().as_secs_f64()).max(1e-3);
        let outcome = minimize_with(&moves, &SearchParams { time_limit_s: left, ..params.clone() });
        // The elapsed time counts the candidate lists built before the chains started.
        let run = SolveRun { elapsed: started.elapsed(), ..SolveRun::of_moves(&outcome, |e| e, params.seed) };
        let report = self.report(&outcome.solution, run);
        match bound {
            Some(bound) => report.with_bound(bound),
            None => report,
        }
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, _: Models<'_>) -> Solved {
        let started = Instant::now();
        match name {
            "nn-2opt" => {
                let tour = self.nn_two_opt();
                let (elapsed, length) = (started.elapsed(), tour::tour_length(&tour.order, &self.distances));
                let run = SolveRun {
                    rounds: 1,
                    ..SolveRun::once(StopReason::Converged, elapsed, elapsed, length, params.seed)
                };
                Ok(self.report(&tour.order, run))
            }
            _ => Err(ProblemError::invalid("method", format!("unknown baseline '{name}'"))),
        }
    }

    fn size_summary(&self) -> String {
        format!("cities={}", self.num_cities())
    }
}

fn too_many(n: usize, cap: usize, field: &str) -> ProblemError {
    ProblemError::too_large(field, format!("{n} cities exceed this server's limit of {cap}"))
}

/// TSPLIB `.tsp` text.
pub fn parse_tsplib(text: &str, limits: &Limits) -> Result<Tsp, ProblemError> {
    let cap = limits.tsp.max_cities;
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let (mut dimension, mut weight_type, mut format) = (None, None, None);
    let mut section = None;
    for line in lines.by_ref() {
        let upper = line.to_ascii_uppercase();
        if upper.starts_with("NODE_COORD_SECTION") || upper.starts_with("EDGE_WEIGHT_SECTION") {
            section = Some(upper);
            break;
        }
        if upper == "EOF" {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(ProblemError::invalid("instance", format!("header line '{line}' is not 'KEY : value'")));
        };
        let (key, value) = (key.trim().to_ascii_uppercase(), value.trim().to_string());
        match key.as_str() {
            "TYPE" if !value.eq_ignore_ascii_case("TSP") => {
                return Err(ProblemError::invalid("instance", format!("TYPE {value}: only symmetric TSP is solved")))
            }
            "DIMENSION" => {
                let n: usize = value
                    .parse()
                    .map_err(|_| ProblemError::invalid("instance", format!("DIMENSION '{value}' is not a count")))?;
                if n > cap {
                    return Err(too_many(n, cap, "instance"));
                }
                dimension = Some(n);
            }
            "EDGE_WEIGHT_TYPE" => weight_type = Some(value.to_ascii_uppercase()),
            "EDGE_WEIGHT_FORMAT" => format = Some(value.to_ascii_uppercase()),
            _ => {}
        }
    }
    let n = dimension.ok_or_else(|| ProblemError::invalid("instance", "no DIMENSION line"))?;
    let weight_type = weight_type.ok_or_else(|| ProblemError::invalid("instance", "no EDGE_WEIGHT_TYPE line"))?;
    let section =
        section.ok_or_else(|| ProblemError::invalid("instance", "no NODE_COORD_SECTION or EDGE_WEIGHT_SECTION"))?;
    let numbers = |line: &str| -> Result<Vec<f64>, ProblemError> {
        line.split_whitespace()
            .map(|t| t.parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| {
                ProblemError::invalid("instance", format!("line '{line}' holds a value that is not a finite number"))
            })
    };
    if weight_type == "EXPLICIT" {
        if format.as_deref() != Some("FULL_MATRIX") || !section.starts_with("EDGE_WEIGHT_SECTION") {
            return Err(ProblemError::invalid(
                "instance",
                "EXPLICIT weights are read as EDGE_WEIGHT_FORMAT : FULL_MATRIX",
            ));
        }
        if n > limits.tsp.max_cities.min(MAX_MATRIX_CITIES) {
            return Err(too_many(n, limits.tsp.max_cities.min(MAX_MATRIX_CITIES), "instance"));
        }
        let mut values = Vec::with_capacity(n * n);
        for line in
            lines.take_while(|l| !l.eq_ignore_ascii_case("EOF") && !l.to_ascii_uppercase().ends_with("_SECTION"))
        {
            values.extend(numbers(line)?);
        }
        let rows: Vec<Vec<f64>> = values.chunks(n.max(1)).map(|c| c.to_vec()).collect();
        if values.len() != n * n {
            return Err(ProblemError::invalid("instance", format!("{} weights, expected {n} x {n}", values.len())));
        }
        return matrix(&rows, "instance").and_then(|d| Tsp::new(d, (1..=n as i64).collect()));
    }
    let metric = match weight_type.as_str() {
        "EUC_2D" => Metric::Euc2d,
        "CEIL_2D" => Metric::Ceil2d,
        "ATT" => Metric::Att,
        "GEO" => Metric::Geo,
        other => {
            return Err(ProblemError::invalid(
                "instance",
                format!("EDGE_WEIGHT_TYPE {other} is not supported (EUC_2D, CEIL_2D, ATT, GEO, EXPLICIT)"),
            ))
        }
    };
    let (mut xy, mut ids) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for line in lines {
        if line.eq_ignore_ascii_case("EOF") || line.to_ascii_uppercase().ends_with("_SECTION") {
            break;
        }
        let v = numbers(line)?;
        if v.len() != 3 || v[0].fract() != 0.0 {
            return Err(ProblemError::invalid("instance", format!("coordinate line '{line}' is not 'id x y'")));
        }
        if xy.len() == n {
            return Err(ProblemError::invalid("instance", format!("more than DIMENSION = {n} coordinate lines")));
        }
        ids.push(v[0] as i64);
        xy.push(if metric == Metric::Geo { (geo_radians(v[1]), geo_radians(v[2])) } else { (v[1], v[2]) });
    }
    if xy.len() != n {
        return Err(ProblemError::invalid("instance", format!("{} coordinate lines, DIMENSION is {n}", xy.len())));
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(ProblemError::invalid("instance", "a node id appears twice"));
    }
    Tsp::new(Distances::Coordinates { xy, metric }, ids)
}

fn matrix(rows: &[Vec<f64>], field: &str) -> Result<Distances, ProblemError> {
    let n = rows.len();
    let mut d = vec![0.0; n * n];
    for (i, row) in rows.iter().enumerate() {
        if row.len() != n {
            return Err(ProblemError::invalid(
                format!("{field}[{i}]"),
                format!("has {} entries, expected {n}", row.len()),
            ));
        }
        for (j, &v) in row.iter().enumerate() {
            if !v.is_finite() || v < 0.0 {
                return Err(ProblemError::invalid(
                    format!("{field}[{i}][{j}]"),
                    "must be a non-negative finite number",
                ));
            }
            d[i * n + j] = v;
        }
    }
    for i in 0..n {
        for j in 0..i {
            if (d[i * n + j] - d[j * n + i]).abs() > 1e-9 * d[i * n + j].abs().max(1.0) {
                return Err(ProblemError::invalid(field, format!("is not symmetric: [{i}][{j}] != [{j}][{i}]")));
            }
        }
    }
    Ok(Distances::Matrix { n, d })
}

/// The JSON forms (module doc).
pub fn parse_json(value: &Value, limits: &Limits) -> Result<Tsp, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    let row = |v: &Value, field: &str| -> Result<Vec<f64>, ProblemError> {
        v.as_array()
            .ok_or_else(|| ProblemError::invalid(field, "expected a list of numbers"))?
            .iter()
            .map(|x| x.as_f64().filter(|x| x.is_finite()))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| ProblemError::invalid(field, "expected finite numbers"))
    };
    if let Some(rows) = object.get("distances") {
        let rows = rows.as_array().ok_or_else(|| ProblemError::invalid("distances", "expected a list of rows"))?;
        let cap = limits.tsp.max_cities.min(MAX_MATRIX_CITIES);
        if rows.len() > cap {
            return Err(too_many(rows.len(), cap, "distances"));
        }
        let rows: Vec<Vec<f64>> =
            rows.iter().enumerate().map(|(i, r)| row(r, &format!("distances[{i}]"))).collect::<Result<_, _>>()?;
        let n = rows.len();
        return Tsp::new(matrix(&rows, "distances")?, (0..n as i64).collect());
    }
    let points = object
        .get("coordinates")
        .and_then(Value::as_array)
        .ok_or_else(|| ProblemError::invalid("coordinates", "give coordinates [[x, y], ...] or distances [[...]]"))?;
    if points.len() > limits.tsp.max_cities {
        return Err(too_many(points.len(), limits.tsp.max_cities, "coordinates"));
    }
    let metric = match object.get("metric").and_then(Value::as_str).unwrap_or("euclidean") {
        "euclidean" => Metric::Euclidean,
        "euc_2d" => Metric::Euc2d,
        "ceil_2d" => Metric::Ceil2d,
        "att" => Metric::Att,
        "geo" => Metric::Geo,
        other => {
            return Err(ProblemError::invalid(
                "metric",
                format!("'{other}' is not one of euclidean, euc_2d, ceil_2d, att, geo"),
            ))
        }
    };
    let mut xy = Vec::with_capacity(points.len());
    for (i, p) in points.iter().enumerate() {
        let v = row(p, &format!("coordinates[{i}]"))?;
        if v.len() != 2 {
            return Err(ProblemError::invalid(format!("coordinates[{i}]"), "expected [x, y]"));
        }
        xy.push(if metric == Metric::Geo { (geo_radians(v[0]), geo_radians(v[1])) } else { (v[0], v[1]) });
    }
    let n = xy.len();
    Tsp::new(Distances::Coordinates { xy, metric }, (0..n as i64).collect())
}

pub fn load(input: ProblemInput<'_>, limits: &Limits) -> Result<Tsp, ProblemError> {
    match input {
        ProblemInput::Text(text) => parse_tsplib(text, limits),
        ProblemInput::Json(value) => parse_json(value, limits),
    }
}

/// The registry row.
pub struct TravellingSalesman;

impl ProblemCode for TravellingSalesman {
    /// DIMACS-style random instances: `nodes` cities of `class` 1 (uniform) or 2 (clustered).
    fn generate(&self, spec: &crate::problems::GenerateSpec) -> Option<Result<String, String>> {
        Some(generate::generate(spec.nodes, spec.class, spec.seed))
    }

    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "coordinates": {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}},
                "metric": {"type": "string", "enum": ["euclidean", "euc_2d", "ceil_2d", "att", "geo"], "description": "distance between coordinates (default: unrounded euclidean)"},
                "distances": {"type": "array", "items": {"type": "array", "items": {"type": "number", "minimum": 0}}, "description": "a symmetric distance matrix, instead of coordinates"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        Ok(Box::new(load(input, limits)?))
    }
}

#[cfg(test)]
mod tests {
    use super::floor;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_integer_floor_matches_the_library_one() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let edges = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 1e15 + 0.5, -1e15 - 0.5, 4e15, 1e17 + 3.0, -1e300];
        for x in edges.into_iter().chain((0..10_000).map(|_| rng.gen_range(-1e6..1e6))) {
            assert_eq!(floor(x), x.floor(), "{x}");
        }
    }
}
