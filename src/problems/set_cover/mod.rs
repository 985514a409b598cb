//! Weighted set cover: choose sets of minimum total cost whose union is the universe.
//!
//! Inputs: OR-Library's SCP text (Beasley: `m n`, the n column costs, then per row its count k
//! and the k columns covering it, 1-indexed; line breaks carry no meaning) and JSON
//! `{universe, sets, costs}` (universe the element count, sets lists of 0-based elements, costs
//! positive; default 1 each). An element no set covers is a 422 (no cover exists).
//!
//! A solve proves what it can, then searches (see `solve`):
//! 1. the Lagrangian bound at the root (`lagrangian.rs`, at most a tenth of the limit);
//! 2. branch and bound on Lagrangian bounds from Chvatal's greedy cover (`branch.rs`), until half
//!    the limit: it stops with status `optimal` once no open node can hold a cheaper cover;
//! 3. when unproven, destroy-and-repair annealing chains from the tree's best cover for the rest,
//!    in the engine's move loop (`search::moves`; see `DestroyRepair`), stopped at the bound.
//!
//! Every answer carries the bound: the tree's least open bound (the root's when it is higher),
//! rounded up for integer costs. Why moves and not the Ising encoding for the search: each row's
//! "at least one" constraint needs slack spins per row (log2 of its set count), and single flips
//! on that encoding spend most of their time in infeasible states. A row-weighting search after
//! RWLS (Gao, Weise and Li 2015) with scores per unit cost was tried first: on scp41 it either
//! cycled among covers of cost 440-444 (weights raised at local minima only) or let the weights
//! swamp the costs (raised every step), never below 434 in 20 s.
//!
//! Method `ising`: the engine's spin flips on the penalty Hamiltonian with binary row slacks
//! (`ising.rs`), each incumbent completed to a cover; measured against the moves in the README.

pub mod branch;
pub mod generate;
pub mod ising;
pub mod lagrangian;

use super::{penalty_baseline, Baseline};
use super::{HistoryPoint, Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::problems::Solved;
use crate::search::moves::{cycle_temperature, minimize_with, MoveSet};
use crate::search::{SearchParams, StopReason};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct SetCoverInstance {
    pub costs: Vec<f64>,
    /// rows[j]: the rows set j covers.
    pub rows_of: Vec<Vec<u32>>,
    /// sets_of[i]: the sets covering row i.
    pub sets_of: Vec<Vec<u32>>,
    /// 1 for OR-Library text (ids as in the file), 0 for JSON.
    base: usize,
}

impl SetCoverInstance {
    fn new(costs: Vec<f64>, sets_of: Vec<Vec<u32>>, base: usize) -> Self {
        let mut rows_of = vec![Vec::new(); costs.len()];
        for (i, sets) in sets_of.iter().enumerate() {
            for &j in sets {
                rows_of[j as usize].push(i as u32);
            }
        }
        SetCoverInstance { costs, rows_of, sets_of, base }
    }

    /// Annealing from 0.3 times the mean cost down to a twentieth of the cheapest, over 5,000
    /// moves (scp41, scp43, scpa1, 8 s: the same optima from 0.3 and 1 times the mean; 5,000 and
    /// 20,000 moves per cycle alike).
    fn moves<'a>(&'a self, from: Option<&'a [bool]>) -> DestroyRepair<'a> {
        let mean = self.costs.iter().sum::<f64>() / self.costs.len() as f64;
        let cheapest = self.costs.iter().copied().fold(f64::INFINITY, f64::min);
        let hot = 0.3 * mean;
        DestroyRepair { instance: self, hot, cold: (0.05 * cheapest).min(hot), cycle: 5_000, from }
    }

    pub fn cost(&self, x: &[bool]) -> f64 {
        self.costs.iter().zip(x).filter(|(_, &on)| on).map(|(c, _)| c).sum()
    }

    pub fn covers(&self, x: &[bool]) -> bool {
        self.sets_of.iter().all(|sets| sets.iter().any(|&j| x[j as usize]))
    }

    /// Drops sets whose rows are all covered by others, costliest first.
    fn without_redundant(&self, x: &mut [bool]) {
        let mut count = vec![0u32; self.sets_of.len()];
        for j in (0..x.len()).filter(|&j| x[j]) {
            self.rows_of[j].iter().for_each(|&i| count[i as usize] += 1);
        }
        let mut chosen: Vec<usize> = (0..x.len()).filter(|&j| x[j]).collect();
        chosen.sort_by(|&a, &b| self.costs[b].total_cmp(&self.costs[a]).then(a.cmp(&b)));
        for j in chosen {
            if self.rows_of[j].iter().all(|&i| count[i as usize] > 1) {
                x[j] = false;
                self.rows_of[j].iter().for_each(|&i| count[i as usize] -= 1);
            }
        }
    }

    /// Chvatal's greedy: the set of least cost per newly covered row, until covered; then the
    /// redundant sets leave.
    pub fn greedy(&self) -> Vec<bool> {
        self.completed(vec![false; self.costs.len()])
    }

    /// Chvatal's greedy from the sets already in `x`: it adds the set of least cost per newly
    /// covered row until every row is covered; then the redundant sets leave.
    pub fn completed(&self, mut x: Vec<bool>) -> Vec<bool> {
        let mut covered = vec![false; self.sets_of.len()];
        let mut new_rows: Vec<usize> = self.rows_of.iter().map(Vec::len).collect();
        let cover = |j: usize, covered: &mut Vec<bool>, new_rows: &mut Vec<usize>| {
            for &i in &self.rows_of[j] {
                if !std::mem::replace(&mut covered[i as usize], true) {
                    self.sets_of[i as usize].iter().for_each(|&k| new_rows[k as usize] -= 1);
                }
            }
        };
        for j in (0..x.len()).filter(|&j| x[j]) {
            cover(j, &mut covered, &mut new_rows);
        }
        loop {
            let pick = (0..x.len()).filter(|&j| !x[j] && new_rows[j] > 0).min_by(|&a, &b| {
                (self.costs[a] / new_rows[a] as f64).total_cmp(&(self.costs[b] / new_rows[b] as f64)).then(a.cmp(&b))
            });
            // None once every row is covered (every row has a set).
            let Some(pick) = pick else { break };
            x[pick] = true;
            cover(pick, &mut covered, &mut new_rows);
        }
        self.without_redundant(&mut x);
        x
    }

    /// `{sets, cost}`, set ids in the input's numbering.
    fn solution(&self, x: &[bool]) -> Value {
        let sets: Vec<usize> = (0..x.len()).filter(|&j| x[j]).map(|j| j + self.base).collect();
        json!({"sets": sets, "cost": self.cost(x)})
    }

    fn report(&self, x: &[bool], run: SolveRun) -> SolveReport {
        let cost = self.cost(x);
        SolveReport::new("set_cover", cost, cost, self.solution(x), run)
    }

    /// Whether every cost is an integer (then so is every cover's cost).
    pub(super) fn integral(&self) -> bool {
        self.costs.iter().all(|c| c.fract() == 0.0)
    }

    /// `bound` rounded up when every cost is an integer.
    pub(super) fn rounded(&self, bound: f64) -> f64 {
        if self.integral() {
            // The float sums may sit a hair above an integer the exact bound does not reach.
            (bound - INTEGER_SLACK).ceil()
        } else {
            bound
        }
    }
}

/// How far above an integer a float bound may sit and still be taken for that integer.
pub(super) const INTEGER_SLACK: f64 = 1e-6;

#[cfg(test)]
impl SetCoverInstance {
    /// 3 to `rows` rows over 3 to `sets` sets, costs 1 to 19: each row in one random set and in
    /// each other set with probability 0.3.
    pub(crate) fn random(rng: &mut Xoshiro256PlusPlus, rows: usize, sets: usize) -> Self {
        let (rows, sets) = (rng.gen_range(3..=rows), rng.gen_range(3..=sets));
        let mut sets_of: Vec<Vec<u32>> = (0..rows).map(|_| vec![rng.gen_range(0..sets as u32)]).collect();
        for covering in &mut sets_of {
            for j in 0..sets as u32 {
                if rng.gen_bool(0.3) && !covering.contains(&j) {
                    covering.push(j);
                }
            }
        }
        let costs: Vec<f64> = (0..sets).map(|_| f64::from(rng.gen_range(1..20))).collect();
        SetCoverInstance::new(costs, sets_of, 0)
    }

    /// The cheapest cover's cost, by enumerating every subset of the sets.
    pub(crate) fn enumerated_optimum(&self) -> f64 {
        let sets = self.costs.len();
        (0..1u32 << sets)
            .map(|m| (0..sets).map(|j| m >> j & 1 == 1).collect::<Vec<bool>>())
            .filter(|x| self.covers(x))
            .map(|x| self.cost(&x))
            .fold(f64::INFINITY, f64::min)
    }
}

/// One chain: a cover, how many chosen sets cover each row, and the best cover seen.
#[derive(Clone)]
pub struct CoverChain {
    x: Vec<bool>,
    count: Vec<u32>,
    cost: f64,
    moves: u64,
    best: Vec<bool>,
    best_cost: f64,
    /// The learned proposal policy's weights w_j (its log-odds of choosing set j, scaled): the
    /// repair's ratio for set j is multiplied by exp(-w_j). None without the policy.
    guide: Option<Arc<[f32]>>,
}

/// Destroy-and-repair annealing over covers (Jacobs and Brusco, "A local-search heuristic for
/// large set-covering problems", Naval Research Logistics 42, 1995): a move drops a few random
/// sets, re-covers the rows left bare greedily (for a random bare row, its set of least cost per
/// newly covered row), drops the sets that became redundant (costliest first), and is accepted
/// by Metropolis on the change in cost along an annealing cycle.
struct DestroyRepair<'a> {
    instance: &'a SetCoverInstance,
    hot: f64,
    cold: f64,
    /// Moves per annealing cycle.
    cycle: u64,
    /// The chains' first cover (None: the greedy one).
    from: Option<&'a [bool]>,
}

/// Sets dropped per move: 1 to this many.
const MAX_DROPPED: usize = 4;
/// The repair's ratio cost / new rows is multiplied by 1 + `REPAIR_NOISE` U(0, 1): a deterministic
/// repair rebuilt the same cover after most drops (scp41 stayed at 430, scpa1 at 254 in 8 s at any
/// temperature; with noise 1 both reached 429 and 253, and scp43 516).
const REPAIR_NOISE: f64 = 1.0;

impl DestroyRepair<'_> {
    fn set(&self, chain: &mut CoverChain, j: usize, on: bool) {
        let k = self.instance;
        chain.x[j] = on;
        if on {
            chain.cost += k.costs[j];
            k.rows_of[j].iter().for_each(|&i| chain.count[i as usize] += 1);
        } else {
            chain.cost -= k.costs[j];
            k.rows_of[j].iter().for_each(|&i| chain.count[i as usize] -= 1);
        }
    }

    /// One destroy-repair move; the changed sets, to undo a rejected move.
    fn perturb(&self, chain: &mut CoverChain, rng: &mut Xoshiro256PlusPlus) -> Vec<(usize, bool)> {
        let k = self.instance;
        let mut changed = Vec::new();
        let chosen: Vec<usize> = (0..chain.x.len()).filter(|&j| chain.x[j]).collect();
        let mut bare: Vec<usize> = Vec::new();
        for _ in 0..rng.gen_range(1..=MAX_DROPPED.min(chosen.len())) {
            let j = chosen[rng.gen_range(0..chosen.len())];
            if chain.x[j] {
                self.set(chain, j, false);
                changed.push((j, true));
                bare.extend(k.rows_of[j].iter().map(|&i| i as usize).filter(|&i| chain.count[i] == 0));
            }
        }
        let mut added = Vec::new();
        while let Some(at) = (!bare.is_empty()).then(|| rng.gen_range(0..bare.len())) {
            let row = bare.swap_remove(at);
            if chain.count[row] > 0 {
                continue;
            }
            let new_rows = |j: usize| k.rows_of[j].iter().filter(|&&i| chain.count[i as usize] == 0).count() as f64;
            let guide = |j: usize| chain.guide.as_ref().map_or(1.0, |w| (-f64::from(w[j])).exp());
            let pick = k.sets_of[row]
                .iter()
                .map(|&j| {
                    let j = j as usize;
                    (k.costs[j] / new_rows(j) * (1.0 + REPAIR_NOISE * rng.gen::<f64>()) * guide(j), j)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .expect("every row has a set")
                .1;
            self.set(chain, pick, true);
            changed.push((pick, false));
            added.push(pick);
        }
        let mut chosen: Vec<usize> = (0..chain.x.len()).filter(|&j| chain.x[j]).collect();
        chosen.sort_by(|&a, &b| k.costs[b].total_cmp(&k.costs[a]).then(a.cmp(&b)));
        for j in chosen {
            if k.rows_of[j].iter().all(|&i| chain.count[i as usize] > 1) {
                self.set(chain, j, false);
                changed.push((j, true));
            }
        }
        changed
    }
}

impl MoveSet for DestroyRepair<'_> {
    type Chain = CoverChain;
    type Solution = Vec<bool>;

    fn num_variables(&self) -> usize {
        self.instance.costs.len()
    }

    /// A tenth of an annealing cycle.
    fn moves_per_round(&self) -> usize {
        (self.cycle / 10).max(1) as usize
    }

    /// A destroy-and-repair move takes 42-47 us (a generated 400 x 4,000 cover at 5% density,
    /// one chain for 2 s, seeds 0-2), thousands of single flips' time. Counted as one, two
    /// chains' 1,000 moves a round would stay below the thread pool's threshold and take turns
    /// on one core (that cover, 2 s, seeds 0-2: 48 (46) rounds in turn against 62 (61) in
    /// parallel, median (worst); one chain alone runs 85-94); any cost above 20 makes them
    /// parallel.
    fn move_cost(&self) -> usize {
        1_000
    }

    /// Four annealing cycles.
    fn min_patience_rounds(&self) -> usize {
        40
    }

    /// From the given cover, else the greedy one.
    fn start(&self, _chain: usize, _rng: &mut Xoshiro256PlusPlus) -> CoverChain {
        let k = self.instance;
        let x = self.from.map_or_else(|| k.greedy(), <[bool]>::to_vec);
        let mut count = vec![0u32; k.sets_of.len()];
        for j in (0..x.len()).filter(|&j| x[j]) {
            k.rows_of[j].iter().for_each(|&i| count[i as usize] += 1);
        }
        let cost = k.cost(&x);
        CoverChain { best: x.clone(), best_cost: cost, x, count, cost, moves: 0, guide: None }
    }

    fn advance(&self, chain: &mut CoverChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        for _ in 0..moves {
            let temperature = cycle_temperature(chain.moves, self.cycle, self.hot, self.cold);
            chain.moves += 1;
            let before = chain.cost;
            let changed = self.perturb(chain, rng);
            let delta = chain.cost - before;
            if delta > 1e-9 && rng.gen::<f64>() >= (-delta / temperature).exp() {
                for &(j, on) in changed.iter().rev() {
                    self.set(chain, j, on);
                }
                continue;
            }
            if chain.cost < chain.best_cost - 1e-9 {
                chain.best_cost = chain.cost;
                chain.best.copy_from_slice(&chain.x);
            }
        }
    }

    fn best(&self, chain: &CoverChain) -> (Vec<bool>, f64) {
        (chain.best.clone(), chain.best_cost)
    }

    fn choices(&self, solution: &Vec<bool>) -> Option<Vec<bool>> {
        Some(solution.clone())
    }

    fn guide(&self, chain: &mut CoverChain, weights: &Arc<[f32]>) {
        chain.guide = Some(weights.clone());
    }
}

impl SetCoverInstance {
    const BASELINES: &'static [Baseline<Self>] = &[
        Baseline { name: "greedy", run: |c, params, _| Ok(c.greedy_baseline(params)) },
        Baseline {
            name: "ising",
            run: |c, params, models| penalty_baseline(ising::SlackCover::new(c), params, models),
        },
    ];

    fn greedy_baseline(&self, params: &SearchParams) -> SolveReport {
        let start = Instant::now();
        let x = self.greedy();
        let elapsed = start.elapsed();
        self.report(&x, SolveRun::once(StopReason::Converged, elapsed, elapsed, self.cost(&x), params.seed))
    }
}

/// The root's Lagrangian ascent may take this share of the time limit (it usually ends sooner).
const BOUND_SHARE: f64 = 0.1;
/// The branch and bound runs until this share of the limit (from the start, the bound's time
/// included) unless it proves its cover optimal first; an unproven cover then goes to the
/// annealing search for the rest.
const TREE_SHARE: f64 = 0.5;
/// Tree nodes per search round when the caller fixes a round budget (`max_rounds`), so that a
/// round budget bounds the tree too and equal seeds give equal covers.
const NODES_PER_ROUND: usize = 10;

impl Instance for SetCoverInstance {
    fn solve(&self, params: &SearchParams, _: Models<'_>) -> SolveReport {
        let start = Instant::now();
        let point = |at: Duration, objective: f64| HistoryPoint { elapsed_ms: at.as_secs_f64() * 1e3, objective };
        let limit = Duration::from_secs_f64(params.time_limit_s.max(0.0));
        let greedy = self.greedy();
        let greedy_point = point(start.elapsed(), self.cost(&greedy));
        let root = lagrangian::lower_bound(self, greedy_point.objective, start + limit.mul_f64(BOUND_SHARE));
        let max_nodes = params.max_rounds.map(|r| (r * NODES_PER_ROUND) as u64);
        let tree_start = start.elapsed();
        let deadline = start + limit.mul_f64(TREE_SHARE);
        let limits = branch::TreeLimits { deadline, max_nodes, target: params.target_energy };
        let proof = branch::branch_and_bound(self, greedy, &root, limits);
        // The greedy cover first, so that an answer the tree only proves still has its incumbent.
        let improvements = proof.improvements.iter().map(|&(at, cost)| point(tree_start + at, cost));
        let mut history: Vec<HistoryPoint> = std::iter::once(greedy_point).chain(improvements).collect();
        let bound = self.rounded(root.bound).max(proof.bound);
        let reached = params.target_energy.is_some_and(|t| proof.cost <= t);
        let mut status = match () {
            _ if reached => StopReason::TargetReached,
            _ if max_nodes.is_some_and(|m| proof.nodes >= m) => StopReason::RoundLimit,
            _ => StopReason::TimeLimit,
        };
        let (mut cover, mut chains, mut rounds) = (proof.cover, 1, 0);
        if !proof.proven && !reached {
            // The annealing search takes the rest of the time, from the tree's best cover.
            let search_start = start.elapsed();
            let target_energy = Some(params.target_energy.map_or(bound, |t| t.max(bound)));
            let left = limit.saturating_sub(search_start).as_secs_f64().max(1e-3);
            let search = SearchParams { time_limit_s: left, target_energy, ..params.clone() };
            let outcome = minimize_with(&self.moves(Some(&cover)), &search);
            let better = outcome.history.iter().filter(|h| h.energy < proof.cost);
            history.extend(better.map(|h| point(search_start + h.elapsed, h.energy)));
            if outcome.energy < proof.cost {
                cover = outcome.solution;
            }
            (status, chains, rounds) = (outcome.stop, outcome.chains, outcome.rounds);
        }
        let run = SolveRun {
            status,
            elapsed: start.elapsed(),
            history,
            chains,
            rounds,
            device: "cpu".into(),
            seed: params.seed,
        };
        self.report(&cover, run).with_bound(bound)
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        super::run_baseline(Self::BASELINES, self, name, params, models)
    }

    fn size_summary(&self) -> String {
        format!("rows={} sets={}", self.sets_of.len(), self.costs.len())
    }
}

fn check_cost(cost: f64, field: &str) -> Result<f64, ProblemError> {
    if !cost.is_finite() || cost <= 0.0 {
        return Err(ProblemError::invalid(field, format!("cost {cost} must be a positive finite number")));
    }
    Ok(cost)
}

fn check_sizes(rows: usize, sets: usize, nonzeros: usize, field: &str, limits: &Limits) -> Result<(), ProblemError> {
    if rows == 0 || sets == 0 {
        return Err(ProblemError::invalid(field, "the instance needs at least one element and one set"));
    }
    if rows > limits.max_nodes || sets > limits.max_nodes {
        return Err(ProblemError::too_large(
            field,
            format!("more than this server's limit of {} elements or sets", limits.max_nodes),
        ));
    }
    if nonzeros > limits.max_edges {
        return Err(ProblemError::too_large(
            field,
            format!("{nonzeros} memberships exceed this server's limit of {}", limits.max_edges),
        ));
    }
    Ok(())
}

/// The next whitespace-separated token and its line.
fn token<'t>(
    tokens: &mut impl Iterator<Item = (usize, &'t str)>,
    what: &str,
) -> Result<(usize, &'t str), ProblemError> {
    tokens.next().ok_or_else(|| ProblemError::invalid("body", format!("the file ends before {what}")))
}

fn count<'t>(tokens: &mut impl Iterator<Item = (usize, &'t str)>, what: &str) -> Result<(usize, usize), ProblemError> {
    let (line, text) = token(tokens, what)?;
    let value = text.parse::<usize>().map_err(|_| {
        ProblemError::invalid(format!("line {line}"), format!("{what} '{text}' is not a non-negative integer"))
    })?;
    Ok((line, value))
}

/// OR-Library SCP text.
pub fn parse_orlib(text: &str, limits: &Limits) -> Result<SetCoverInstance, ProblemError> {
    let mut tokens = text.lines().enumerate().flat_map(|(l, line)| line.split_whitespace().map(move |t| (l + 1, t)));
    let (_, m) = count(&mut tokens, "the number of rows")?;
    let (_, n) = count(&mut tokens, "the number of columns")?;
    check_sizes(m, n, 0, "line 1", limits)?;
    let mut costs = Vec::with_capacity(n);
    for j in 1..=n {
        let (line, text) = token(&mut tokens, &format!("the cost of column {j}"))?;
        let cost = text
            .parse::<f64>()
            .map_err(|_| ProblemError::invalid(format!("line {line}"), format!("cost '{text}' is not a number")))?;
        costs.push(check_cost(cost, &format!("line {line}"))?);
    }
    let mut sets_of = Vec::with_capacity(m);
    let mut nonzeros = 0usize;
    for i in 1..=m {
        let (line, k) = count(&mut tokens, &format!("the column count of row {i}"))?;
        if k == 0 {
            return Err(ProblemError::invalid(
                format!("line {line}"),
                format!("row {i} is covered by no column: no cover exists"),
            ));
        }
        nonzeros += k;
        check_sizes(m, n, nonzeros, &format!("line {line}"), limits)?;
        let mut sets = Vec::with_capacity(k);
        for _ in 0..k {
            let (line, text) = token(&mut tokens, &format!("the columns of row {i}"))?;
            let j = text.parse::<usize>().ok().filter(|&j| (1..=n).contains(&j)).ok_or_else(|| {
                ProblemError::invalid(format!("line {line}"), format!("column '{text}' of row {i} is not in 1..={n}"))
            })?;
            sets.push(j as u32 - 1);
        }
        sets.sort_unstable();
        sets.dedup();
        sets_of.push(sets);
    }
    if let Some((line, text)) = tokens.next() {
        return Err(ProblemError::invalid(format!("line {line}"), format!("'{text}' after the last of the {m} rows")));
    }
    Ok(SetCoverInstance::new(costs, sets_of, 1))
}

pub fn parse_json(value: &Value, limits: &Limits) -> Result<SetCoverInstance, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    if let Some(unknown) = object.keys().find(|k| !["universe", "sets", "costs"].contains(&k.as_str())) {
        return Err(ProblemError::invalid(unknown.as_str(), "unknown field; expected universe, sets, costs"));
    }
    let universe = object
        .get("universe")
        .and_then(Value::as_u64)
        .ok_or_else(|| ProblemError::invalid("universe", "must be the number of elements (a positive integer)"))?;
    let universe = usize::try_from(universe).unwrap_or(usize::MAX);
    let sets = object
        .get("sets")
        .and_then(Value::as_array)
        .ok_or_else(|| ProblemError::invalid("sets", "must be an array of element lists"))?;
    check_sizes(universe, sets.len(), 0, "sets", limits)?;
    let mut sets_of = vec![Vec::new(); universe];
    let mut nonzeros = 0usize;
    for (j, set) in sets.iter().enumerate() {
        let field = format!("sets[{j}]");
        let elements = set.as_array().ok_or_else(|| ProblemError::invalid(&field, "must be an array of elements"))?;
        nonzeros += elements.len();
        check_sizes(universe, sets.len(), nonzeros, &field, limits)?;
        for e in elements {
            let e = e
                .as_u64()
                .filter(|&e| (e as usize) < universe)
                .ok_or_else(|| ProblemError::invalid(&field, format!("{e} is not an element of 0..{universe}")))?
                as usize;
            if sets_of[e].last() != Some(&(j as u32)) {
                sets_of[e].push(j as u32);
            }
        }
    }
    if let Some(e) = sets_of.iter().position(Vec::is_empty) {
        return Err(ProblemError::invalid("sets", format!("element {e} is in no set: no cover exists")));
    }
    let costs = match object.get("costs") {
        None | Some(Value::Null) => vec![1.0; sets.len()],
        Some(list) => {
            let list = list
                .as_array()
                .filter(|l| l.len() == sets.len())
                .ok_or_else(|| ProblemError::invalid("costs", format!("must be an array of {} numbers", sets.len())))?;
            list.iter()
                .enumerate()
                .map(|(j, c)| {
                    let field = format!("costs[{j}]");
                    check_cost(c.as_f64().ok_or_else(|| ProblemError::invalid(&field, "must be a number"))?, &field)
                })
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    if !costs.iter().sum::<f64>().is_finite() {
        return Err(ProblemError::invalid("costs", "the costs sum past a 64-bit float: scale them down"));
    }
    Ok(SetCoverInstance::new(costs, sets_of, 0))
}

/// The registry row.
pub struct SetCover;

impl ProblemCode for SetCover {
    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["universe", "sets"],
            "properties": {
                "universe": {"type": "integer", "minimum": 1, "description": "elements 0..universe-1"},
                "sets": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
                "costs": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}, "description": "default 1 each"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        Ok(Box::new(match input {
            ProblemInput::Json(value) => parse_json(value, limits)?,
            ProblemInput::Text(text) => parse_orlib(text, limits)?,
        }))
    }

    /// OR-Library-like covers: --nodes rows, --edges columns, --class the density in percent,
    /// costs on 1..=--range.
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        Some(generate::generate(spec.nodes, spec.edges, spec.class, spec.range, spec.seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn random_instance(seed: u64) -> SetCoverInstance {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (m, n) = (40, 80);
        let mut sets_of: Vec<Vec<u32>> = (0..m)
            .map(|_| {
                let mut sets: Vec<u32> = (0..4).map(|_| rng.gen_range(0..n as u32)).collect();
                sets.sort_unstable();
                sets.dedup();
                sets
            })
            .collect();
        sets_of[0].push(79);
        let costs: Vec<f64> = (0..n).map(|_| rng.gen_range(1..20) as f64).collect();
        SetCoverInstance::new(costs, sets_of, 0)
    }

    #[test]
    fn chains_keep_a_cover_and_never_do_worse_than_greedy() {
        let instance = random_instance(8);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let moves = instance.moves(None);
        let mut chain = moves.start(0, &mut rng);
        for _ in 0..40 {
            moves.advance(&mut chain, 25, &mut rng);
            assert!(instance.covers(&chain.x));
            assert!((instance.cost(&chain.x) - chain.cost).abs() < 1e-9);
            assert!(instance.covers(&chain.best));
            assert!((instance.cost(&chain.best) - chain.best_cost).abs() < 1e-9);
            assert!(chain.best_cost <= instance.cost(&instance.greedy()));
        }
    }

    /// The learned proposal policy reaches the repair (the guided trajectory differs), and a
    /// guided search still returns covers, the same for the same seed and round budget.
    #[test]
    fn a_guided_search_returns_reproducible_covers() {
        let instance = random_instance(8);
        let search = |enabled: bool, strength: f64| {
            let proposal = crate::search::proposal::ProposalParams { enabled, strength, ..Default::default() };
            let params =
                SearchParams { seed: 3, max_rounds: Some(30), chains: Some(2), proposal, ..Default::default() };
            let outcome = minimize_with(&instance.moves(None), &params);
            assert!(instance.covers(&outcome.solution));
            assert!((instance.cost(&outcome.solution) - outcome.energy).abs() < 1e-9);
            outcome.solution
        };
        assert_eq!(search(true, 3.0), search(true, 3.0));
        // Weights that make the start cover's sets unattractive to the repair.
        let moves = instance.moves(None);
        let trajectory = |guided: bool| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
            let mut chain = moves.start(0, &mut rng);
            if guided {
                let weights: Arc<[f32]> = chain.x.iter().map(|&on| if on { -3.0 } else { 0.0 }).collect();
                moves.guide(&mut chain, &weights);
            }
            moves.advance(&mut chain, 50, &mut rng);
            assert!(instance.covers(&chain.x));
            chain.x
        };
        assert_ne!(trajectory(true), trajectory(false));
        search(false, 0.0);
    }

    #[test]
    fn a_round_budget_bounds_the_tree_and_the_search_so_equal_seeds_give_equal_covers() {
        // A class-C-like cover, which the tree does not prove in its 10 nodes: the search runs after it.
        let text = generate::generate(400, 4_000, 2, 100, 5).unwrap();
        let instance = parse_orlib(&text, &Limits::default()).unwrap();
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let models = Models { registry: &registry, requested: None };
        let solve = || {
            let params = SearchParams { seed: 2, max_rounds: Some(1), time_limit_s: 600.0, ..Default::default() };
            let report = instance.solve(&params, models);
            let sets: Vec<usize> =
                report.solution["sets"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap() as usize - 1).collect();
            let x: Vec<bool> = (0..instance.costs.len()).map(|j| sets.contains(&j)).collect();
            assert!(instance.covers(&x));
            assert_eq!(instance.cost(&x), report.objective);
            assert!(report.bound.unwrap() <= report.objective);
            (sets, report.status)
        };
        let (first, status) = solve();
        assert_eq!(status, StopReason::RoundLimit);
        assert_eq!(first, solve().0);
    }

    #[test]
    fn an_answer_the_tree_only_proves_keeps_its_greedy_incumbent_in_the_history() {
        // Three disjoint sets: the greedy cover is the optimum, so the tree finds nothing better.
        let instance = SetCoverInstance::new(vec![2.0, 3.0, 4.0], vec![vec![0], vec![1], vec![2]], 0);
        let registry = crate::models::ModelRegistry::empty(crate::problems::policy_loaders);
        let report = instance.solve(&SearchParams::default(), Models { registry: &registry, requested: None });
        assert_eq!((report.objective, report.status), (9.0, StopReason::Optimal));
        assert_eq!(report.history.last().map(|h| h.objective), Some(9.0), "{:?}", report.history);
    }
}
