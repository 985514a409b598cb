//! Population training over the job queue: a population is `size` members, each a
//! lineage of whole-run checkpoints trained `interval_steps` at a time. Every member round is a
//! job (`member`) any worker replica claims; its checkpoint then goes to an `evaluation` job
//! (the evaluator role: fresh seeds, off the learners' path), whose result the orchestrator step
//! (`Store::record_round`, one transaction) files on the leaderboard and turns into the member's
//! next round, until the step budget is spent. Asynchronous: no generations, no barrier.
//!
//! Schemes:
//! - `pbt` (Jaderberg et al. 2017, "truncation selection"): a member whose score falls in the
//!   bottom `quantile` of the scores its peers got at the same round (equal env steps) copies
//!   the checkpoint of a peer of the top `quantile` (exploit: weights, optimizer moments,
//!   replay, everything) and perturbs its
//!   hyperparameters (explore: each explored one resampled with `resample_probability`, else
//!   multiplied by 0.8 or 1.2, kept in its range); other members continue their own checkpoint.
//! - `tournament` (ElegantRL-Podracer): the leaderboard holds every evaluated checkpoint; a
//!   member that scores below the median of the leaderboard's best `size` is replaced by a new
//!   one that the generator seeds from the leaderboard's best checkpoint with mutated
//!   hyperparameters; the others continue.
//!
//! Two failure modes Ray users report cannot happen here: a resumed checkpoint gets the round's
//! hyperparameters re-applied after the restore (`drl::run::train`), so an explored value is
//! never overwritten by the one saved with the weights; and a member is exploited only through
//! its leaderboard entry, which exists only once its checkpoint has been written and evaluated.

use crate::drl;
use crate::drl::env::Envs;
use crate::drl::hooks::RunHooks;
use crate::problems::ProblemError;
use crate::store::{relative_folder, Entry, NewJob, PopulationRecord};
use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use utoipa::ToSchema;

use super::training::{TrainingLimits, TrainingRequest};

pub const MEMBER: &str = "member";
pub const EVALUATION: &str = "evaluation";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    Pbt,
    Tournament,
}

/// The range an explored hyperparameter is drawn from and kept in.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreRange {
    pub min: f64,
    pub max: f64,
    /// Draw log-uniformly (rates); needs min > 0.
    #[serde(default)]
    pub log: bool,
}

/// `POST /v1/populations`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PopulationRequest {
    /// See `GET /v1/algorithms` (single- or multi-agent).
    pub algorithm: String,
    /// See `GET /v1/envs`.
    pub env: String,
    pub scheme: Scheme,
    /// Members trained at once.
    pub size: usize,
    /// Env steps over the whole population: each member trains `total_steps / size`, in rounds
    /// of `interval_steps` (what does not fill a round is not spent).
    pub total_steps: usize,
    /// Env steps of one member round (between two evaluations and decisions).
    pub interval_steps: usize,
    /// The hyperparameters to explore, by name, with their ranges: each member starts from a
    /// draw, and exploits perturb them. They must be ones a run can change between iterations
    /// (rates, coefficients), not ones that shape networks or buffers.
    #[schema(value_type = Object)]
    pub explore: BTreeMap<String, ExploreRange>,
    /// Fixed overrides of the algorithm's defaults for every member.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub hyperparameters: Option<Value>,
    #[serde(default)]
    pub seed: u64,
    /// PBT: the bottom and top fraction (default 0.25).
    #[serde(default)]
    pub quantile: Option<f64>,
    /// The chance an explored value is resampled instead of perturbed (default 0.25).
    #[serde(default)]
    pub resample_probability: Option<f64>,
    /// Episodes of the evaluator per round, on fresh seeds (default 10).
    #[serde(default)]
    pub eval_episodes: Option<usize>,
}

/// Caps on a population request (beyond one training run's).
#[derive(Debug, Clone)]
pub struct PopulationLimits {
    pub max_size: usize,
    pub max_rounds: usize,
}

impl Default for PopulationLimits {
    fn default() -> Self {
        PopulationLimits { max_size: 32, max_rounds: 512 }
    }
}

/// One member round: train the checkpoint in `source` (None: a fresh member) for one interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemberRound {
    pub population: String,
    pub member: usize,
    pub round: usize,
    /// Env steps already in the source checkpoint's lineage.
    pub start_step: usize,
    /// Fixed and explored hyperparameters of this round.
    pub hyperparameters: Value,
    /// Folder (relative to the data folder) of the checkpoint to continue.
    pub source: Option<String>,
    /// How the round came about (see `Entry::origin`).
    pub origin: Value,
}

/// The evaluator's job: score a member round's checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvaluationRound {
    pub population: String,
    pub member: usize,
    pub round: usize,
    pub steps: usize,
    pub hyperparameters: Value,
    pub origin: Value,
    pub checkpoint: String,
}

impl PopulationRequest {
    pub fn quantile(&self) -> f64 {
        self.quantile.unwrap_or(0.25)
    }

    pub fn resample_probability(&self) -> f64 {
        self.resample_probability.unwrap_or(0.25)
    }

    pub fn eval_episodes(&self) -> usize {
        self.eval_episodes.unwrap_or(10)
    }

    /// Rounds of each member: every member trains the same number of env steps.
    pub fn rounds_per_member(&self) -> usize {
        self.total_steps / self.interval_steps.max(1) / self.size.max(1)
    }

    pub fn rounds_total(&self) -> usize {
        self.rounds_per_member() * self.size
    }

    fn fixed(&self) -> serde_json::Map<String, Value> {
        self.hyperparameters.as_ref().and_then(Value::as_object).cloned().unwrap_or_default()
    }

    /// One member's training run as a training request (for validation).
    fn member_request(&self, hyperparameters: Value) -> TrainingRequest {
        TrainingRequest {
            algorithm: self.algorithm.clone(),
            env: self.env.clone(),
            total_steps: self.interval_steps,
            seed: self.seed,
            target_return: None,
            hyperparameters: Some(hyperparameters),
            eval_every: None,
            eval_episodes: Some(self.eval_episodes()),
            env_config: None,
        }
    }

    /// Checks every field before any work; the error names the first bad one.
    pub fn validate(
        &self,
        training: &TrainingLimits,
        limits: &PopulationLimits,
        envs: &Envs,
    ) -> Result<(), ProblemError> {
        if self.size < 2 || self.size > limits.max_size {
            return Err(ProblemError::invalid("size", format!("expected 2..={}", limits.max_size)));
        }
        crate::problems::check_seed(self.seed)?;
        if self.interval_steps == 0 {
            return Err(ProblemError::invalid("interval_steps", "expected at least 1"));
        }
        if self.total_steps > training.max_total_steps {
            return Err(ProblemError::invalid("total_steps", format!("expected at most {}", training.max_total_steps)));
        }
        let rounds = self.rounds_total();
        if rounds == 0 {
            return Err(ProblemError::invalid(
                "total_steps",
                "expected at least size * interval_steps (one round per member)",
            ));
        }
        if rounds > limits.max_rounds {
            return Err(ProblemError::invalid(
                "interval_steps",
                format!(
                    "total_steps / interval_steps is {rounds} rounds; at most {} (each keeps a checkpoint)",
                    limits.max_rounds
                ),
            ));
        }
        if self.quantile.is_some_and(|q| !(q > 0.0 && q <= 0.5)) {
            return Err(ProblemError::invalid("quantile", "expected a fraction in (0, 0.5]"));
        }
        if self.resample_probability.is_some_and(|p| !(0.0..=1.0).contains(&p)) {
            return Err(ProblemError::invalid("resample_probability", "expected a probability in [0, 1]"));
        }
        if self.hyperparameters.as_ref().is_some_and(|h| !h.is_object()) {
            return Err(ProblemError::invalid("hyperparameters", "expected an object"));
        }
        if self.explore.is_empty() {
            return Err(ProblemError::invalid("explore", "name at least one hyperparameter to explore"));
        }
        let fixed = self.fixed();
        for (name, range) in &self.explore {
            let field = format!("explore.{name}");
            if !(range.min.is_finite() && range.max.is_finite() && range.min <= range.max) {
                return Err(ProblemError::invalid(&field, "expected finite min <= max"));
            }
            if range.log && range.min <= 0.0 {
                return Err(ProblemError::invalid(&field, "a log range needs min > 0"));
            }
            if fixed.contains_key(name) {
                return Err(ProblemError::invalid(&field, "is also fixed in hyperparameters"));
            }
        }
        // Both ends of every range as one member's run: the algorithm, env, budget and each
        // value checked as a training request would be (its errors renamed to this request's).
        for end in [Bound::Min, Bound::Max] {
            let mut hyperparameters = fixed.clone();
            for (name, range) in &self.explore {
                hyperparameters.insert(name.clone(), self.typed(name, end.of(range)));
            }
            self.member_request(Value::Object(hyperparameters)).validate(training, envs).map_err(
                |error| match error.field().and_then(|f| f.strip_prefix("hyperparameters.")) {
                    Some(name) if self.explore.contains_key(name) => {
                        ProblemError::invalid(format!("explore.{name}"), error.to_string())
                    }
                    _ => match error.field() {
                        Some("total_steps") => ProblemError::invalid("interval_steps", error.to_string()),
                        _ => error,
                    },
                },
            )?;
        }
        for name in self.explore.keys() {
            let patch = json!({ name.clone(): self.typed(name, self.explore[name].max) });
            drl::run::check_retunable(&self.algorithm, &self.env, &Value::Object(fixed.clone()), &patch, envs)
                .map_err(|error| ProblemError::invalid(format!("explore.{name}"), format!("{error:#}")))?;
        }
        Ok(())
    }

    /// `value` as the JSON the algorithm's config takes (integers for integer fields).
    fn typed(&self, name: &str, value: f64) -> Value {
        let integer = drl::algorithms::find(&self.algorithm).is_ok_and(|a| (a.defaults)()[name].is_i64());
        if integer {
            json!(value.round() as i64)
        } else {
            json!(value)
        }
    }

    /// A value drawn from the range.
    fn draw(&self, name: &str, range: &ExploreRange, rng: &mut ChaCha8Rng) -> Value {
        let u: f64 = rng.gen();
        let value = if range.log {
            (range.min.ln() + u * (range.max.ln() - range.min.ln())).exp()
        } else {
            range.min + u * (range.max - range.min)
        };
        self.typed(name, value)
    }

    /// Member `member`'s starting hyperparameters (fixed ones plus a draw of each explored one).
    pub fn initial_hyperparameters(&self, member: usize) -> Value {
        let mut rng = ChaCha8Rng::seed_from_u64(decision_seed(self.seed, member, usize::MAX));
        let mut hyperparameters = self.fixed();
        for (name, range) in &self.explore {
            hyperparameters.insert(name.clone(), self.draw(name, range, &mut rng));
        }
        Value::Object(hyperparameters)
    }

    /// PBT's explore step: each explored value resampled, or scaled by 0.8 or 1.2 within its range.
    pub fn perturb(&self, hyperparameters: &Value, rng: &mut ChaCha8Rng) -> Value {
        let mut out = hyperparameters.clone();
        for (name, range) in &self.explore {
            let value = if rng.gen::<f64>() < self.resample_probability() {
                self.draw(name, range, rng)
            } else {
                let factor = if rng.gen::<bool>() { 1.2 } else { 0.8 };
                let old = hyperparameters[name].as_f64().unwrap_or((range.min + range.max) / 2.0);
                self.typed(name, (old * factor).clamp(range.min, range.max))
            };
            out[name] = value;
        }
        out
    }

    /// The first round of every member (a fresh run each).
    pub fn first_rounds(&self, population: &str) -> Vec<NewJob> {
        (0..self.size)
            .map(|member| {
                let round = MemberRound {
                    population: population.to_string(),
                    member,
                    round: 0,
                    start_step: 0,
                    hyperparameters: self.initial_hyperparameters(member),
                    source: None,
                    origin: json!({"action": "start", "ancestor": member}),
                };
                round.job()
            })
            .collect()
    }

    /// The orchestrator's decision after `filed` was evaluated: the member's next round, from
    /// the leaderboard `board` (every evaluated round, the new one included).
    pub fn next_round(&self, population: &str, filed: &Entry, board: &[Entry]) -> MemberRound {
        let mut rng = ChaCha8Rng::seed_from_u64(decision_seed(self.seed, filed.member as usize, filed.round as usize));
        let donor = match self.scheme {
            Scheme::Pbt => pbt_donor(filed, board, self.quantile(), &mut rng),
            Scheme::Tournament => tournament_donor(filed, board, self.size),
        };
        let action = match self.scheme {
            Scheme::Pbt => "exploit",
            Scheme::Tournament => "generate",
        };
        let (from, hyperparameters, action) = match donor {
            Some(donor) => (donor, self.perturb(&donor.hyperparameters, &mut rng), action),
            None => (filed, filed.hyperparameters.clone(), "continue"),
        };
        MemberRound {
            population: population.to_string(),
            member: filed.member as usize,
            round: filed.round as usize + 1,
            start_step: from.steps as usize,
            hyperparameters,
            source: Some(from.checkpoint.clone()),
            origin: json!({
                "action": action,
                "from": {"member": from.member, "round": from.round, "score": from.score},
                "ancestor": from.origin["ancestor"],
            }),
        }
    }
}

#[derive(Clone, Copy)]
enum Bound {
    Min,
    Max,
}

impl Bound {
    fn of(self, range: &ExploreRange) -> f64 {
        match self {
            Bound::Min => range.min,
            Bound::Max => range.max,
        }
    }
}

/// A decision's own random stream: the population seed, the member and its round.
fn decision_seed(seed: u64, member: usize, round: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (member as u64).wrapping_mul(1_000_003) ^ (round as u64).rotate_left(32)
}

/// A member's env and network seed: members of one population differ.
pub fn member_seed(seed: u64, member: usize) -> u64 {
    seed.wrapping_mul(1_000).wrapping_add(member as u64)
}

/// Every member's latest entry, best first.
pub fn latest_per_member(board: &[Entry]) -> Vec<&Entry> {
    let mut latest: BTreeMap<i64, &Entry> = BTreeMap::new();
    for entry in board {
        if latest.get(&entry.member).is_none_or(|e| e.round < entry.round) {
            latest.insert(entry.member, entry);
        }
    }
    let mut list: Vec<&Entry> = latest.into_values().collect();
    list.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.member.cmp(&b.member)));
    list
}

/// PBT: when `filed` is in the bottom quantile of its peers, a peer of the top quantile to copy.
/// Peers are the members' rounds evaluated at the same round as `filed` (equal env steps:
/// asynchronous members are compared at the same training time, not a fresh score against
/// stale ones); only rounds with an evaluated checkpoint take part.
fn pbt_donor<'a>(filed: &Entry, board: &'a [Entry], quantile: f64, rng: &mut ChaCha8Rng) -> Option<&'a Entry> {
    let mut ranked: Vec<&Entry> = board.iter().filter(|e| e.round == filed.round).collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.member.cmp(&b.member)));
    if ranked.len() < 2 {
        return None;
    }
    let k = ((quantile * ranked.len() as f64).ceil() as usize).clamp(1, ranked.len() / 2);
    let position = ranked.iter().position(|e| e.member == filed.member)?;
    if position < ranked.len() - k {
        return None;
    }
    let top = &ranked[..k];
    Some(top[rng.gen_range(0..top.len())])
}

/// Tournament: when `filed` scores below the median of the leaderboard's best `size`, the
/// leaderboard's best (any member, any round) to seed a new member from.
fn tournament_donor<'a>(filed: &Entry, board: &'a [Entry], size: usize) -> Option<&'a Entry> {
    let mut ranked: Vec<&Entry> = board.iter().collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.member.cmp(&b.member)).then(a.round.cmp(&b.round)));
    ranked.truncate(size);
    if ranked.len() < 2 {
        return None;
    }
    let median = ranked[ranked.len() / 2].score;
    let best = ranked[0];
    (filed.score < median && !(best.member == filed.member && best.round == filed.round)).then_some(best)
}

impl MemberRound {
    pub fn job_id(&self) -> String {
        format!("{}-m{}-r{}", self.population, self.member, self.round)
    }

    /// This round's checkpoint folder, relative to the data folder.
    pub fn folder(&self) -> String {
        format!("populations/{}/m{}-r{}", self.population, self.member, self.round)
    }

    pub fn job(&self) -> NewJob {
        NewJob { id: self.job_id(), kind: MEMBER, request: serde_json::to_value(self).expect("serializable") }
    }

    /// Trains the round (blocking): copies the source checkpoint into the round's own folder
    /// (once: a round taken over after a crash resumes its own checkpoint), then resumes it
    /// with this round's hyperparameters up to `start_step + interval_steps`.
    pub fn run(
        &self,
        data_dir: &Path,
        population: &PopulationRequest,
        hooks: RunHooks,
        envs: &Envs,
    ) -> Result<(Value, bool)> {
        let folder = self.folder();
        let dir = data_dir.join(&folder);
        if !drl::run::has_checkpoint(&dir) {
            if let Some(source) = &self.source {
                let from = data_dir.join(relative_folder(source)?);
                if !drl::run::has_checkpoint(&from) {
                    bail!(
                        "member {} round {}: the checkpoint to continue ({source}) is missing",
                        self.member,
                        self.round
                    );
                }
                copy_folder(&from, &dir)?;
            }
        }
        let resume = drl::run::has_checkpoint(&dir);
        let total = self.start_step + population.interval_steps;
        let request = drl::TrainRequest {
            algorithm: population.algorithm.clone(),
            env: population.env.clone(),
            total_steps: total,
            seed: member_seed(population.seed, self.origin["ancestor"].as_u64().unwrap_or(self.member as u64) as usize),
            eval_every: Some(population.interval_steps),
            // The learner's own evaluation only writes the checkpoint; the evaluator scores it.
            eval_episodes: Some(1),
            overrides: self.hyperparameters.clone(),
            out_dir: Some(dir),
            resume,
            hooks,
            envs: envs.clone(),
            ..Default::default()
        };
        let summary = drl::train(&request)?;
        Ok((json!({"steps": summary.steps, "wall_s": summary.wall_s, "checkpoint": folder}), summary.cancelled))
    }

    /// The evaluation job of this round once it has trained to `steps`.
    pub fn evaluation(&self, steps: usize) -> NewJob {
        let evaluation = EvaluationRound {
            population: self.population.clone(),
            member: self.member,
            round: self.round,
            steps,
            hyperparameters: self.hyperparameters.clone(),
            origin: self.origin.clone(),
            checkpoint: self.folder(),
        };
        NewJob {
            id: format!("{}-eval", self.job_id()),
            kind: EVALUATION,
            request: serde_json::to_value(evaluation).expect("serializable"),
        }
    }
}

impl EvaluationRound {
    /// The evaluator's episodes' seed: fresh for every round, apart from every seed the
    /// learners evaluate or train on.
    pub fn seed(&self, population: &PopulationRequest) -> u64 {
        let stream = member_seed(population.seed, self.member) ^ 0x5EED_E7A1_0000_0000;
        drl::run::evaluation_seed(stream, self.round)
    }

    /// Scores the checkpoint (blocking): mean and std of the return.
    pub fn run(&self, data_dir: &Path, population: &PopulationRequest, envs: &Envs) -> Result<(Value, bool)> {
        let dir = data_dir.join(relative_folder(&self.checkpoint)?);
        let episodes = population.eval_episodes();
        let (mean, std) = drl::run::score_checkpoint(&dir, episodes, self.seed(population), envs)
            .with_context(|| format!("scoring the checkpoint of member {} round {}", self.member, self.round))?;
        Ok((json!({"score": mean, "score_std": std, "episodes": episodes}), false))
    }

    /// The leaderboard entry of this evaluation's `result`.
    pub fn entry(&self, result: &Value) -> Entry {
        Entry {
            member: self.member as i64,
            round: self.round as i64,
            steps: self.steps as i64,
            score: result["score"].as_f64().unwrap_or(f64::NEG_INFINITY),
            score_std: result["score_std"].as_f64().unwrap_or(0.0),
            hyperparameters: self.hyperparameters.clone(),
            origin: self.origin.clone(),
            checkpoint: self.checkpoint.clone(),
            evaluated_at: crate::store::now(),
        }
    }
}

/// The orchestrator's step as `Store::record_round` takes it: the member's next round, or None
/// once it has trained its share of the budget.
pub fn decide(record: &PopulationRecord, filed: &Entry, board: &[Entry]) -> Result<Option<NewJob>> {
    let request: PopulationRequest =
        serde_json::from_value(record.request.clone()).context("the population's request")?;
    if filed.round as usize + 1 >= request.rounds_per_member() {
        return Ok(None);
    }
    Ok(Some(request.next_round(&record.id, filed, board).job()))
}

/// Removes the whole-run state tensors (`state.safetensors`: replay, optimizer moments) of every
/// round under a finished population's folder; returns the bytes freed. `state.json` and the
/// policy files stay.
pub fn drop_run_states(folder: &Path) -> u64 {
    let mut freed = 0;
    for round in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let file = round.path().join(crate::drl::state::TENSORS_FILE);
        if let Ok(meta) = std::fs::metadata(&file) {
            if std::fs::remove_file(&file).is_ok() {
                freed += meta.len();
            }
        }
    }
    freed
}

/// Copies a checkpoint folder's files (through a temporary folder renamed at the end, so a
/// crash never leaves a half copy that looks like a checkpoint).
fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    let staging = to.with_extension("copying");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.path().is_file() {
            std::fs::copy(entry.path(), staging.join(entry.file_name()))?;
        }
    }
    let _ = std::fs::remove_dir_all(to);
    std::fs::rename(&staging, to)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(scheme: Scheme) -> PopulationRequest {
        serde_json::from_value(json!({
            "algorithm": "dqn", "env": "CartPole-v1", "scheme": scheme, "size": 4,
            "total_steps": 16_000, "interval_steps": 1_000, "seed": 7,
            "explore": {"learning_rate": {"min": 1e-4, "max": 1e-2, "log": true}, "batch_size": {"min": 32, "max": 128}},
        }))
        .unwrap()
    }

    fn entry(member: i64, round: i64, score: f64) -> Entry {
        Entry {
            member,
            round,
            steps: (round + 1) * 1000,
            score,
            score_std: 0.0,
            hyperparameters: json!({"learning_rate": 1e-3, "batch_size": 64}),
            origin: json!({"action": "start", "ancestor": member}),
            checkpoint: format!("populations/p/m{member}-r{round}"),
            evaluated_at: 0.0,
        }
    }

    #[test]
    fn draws_and_perturbations_stay_in_range_with_the_fields_types() {
        let r = request(Scheme::Pbt);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for member in 0..4 {
            let mut h = r.initial_hyperparameters(member);
            for _ in 0..50 {
                let lr = h["learning_rate"].as_f64().unwrap();
                assert!((1e-4..=1e-2).contains(&lr), "{h}");
                let batch = h["batch_size"].as_u64().expect("an integer field stays an integer");
                assert!((32..=128).contains(&batch), "{h}");
                h = r.perturb(&h, &mut rng);
            }
        }
        assert_ne!(r.initial_hyperparameters(0), r.initial_hyperparameters(1), "members start apart");
        assert_eq!(r.initial_hyperparameters(2), r.initial_hyperparameters(2), "seeded");
    }

    #[test]
    fn pbt_copies_a_top_member_into_a_bottom_one_and_only_evaluated_members_take_part() {
        let r = request(Scheme::Pbt);
        // Alone on the board: nothing to compare with, the member continues.
        let alone = [entry(3, 0, -5.0)];
        let next = r.next_round("p", &alone[0], &alone);
        assert_eq!(
            (next.origin["action"].as_str(), next.source.as_deref()),
            (Some("continue"), Some("populations/p/m3-r0"))
        );
        let board = [entry(0, 0, 100.0), entry(1, 0, 50.0), entry(2, 0, 20.0), entry(3, 0, 10.0), entry(0, 1, 5.0)];
        // Member 3 is last of the round-0 scores (100, 50, 20, 10): it exploits member 0's round
        // 0, the only top-quantile peer, and perturbs its hyperparameters.
        let next = r.next_round("p", &board[3], &board);
        assert_eq!(next.origin["action"], "exploit");
        assert_eq!(next.source.as_deref(), Some("populations/p/m0-r0"));
        assert_eq!((next.member, next.round, next.start_step), (3, 1, 1000));
        assert_eq!(next.origin["ancestor"], 0);
        assert_ne!(next.hyperparameters, board[0].hyperparameters, "explored");
        // The top member and the middle ones continue; member 0's round 1 has no peer yet (a
        // fresh score is not ranked against older rounds).
        for filed in [&board[0], &board[1], &board[2], &board[4]] {
            assert_eq!(r.next_round("p", filed, &board).origin["action"], "continue", "{filed:?}");
        }
        // A member is never a donor before one of its rounds is on the board.
        let partial = [entry(1, 0, 50.0), entry(3, 0, 10.0)];
        let next = r.next_round("p", &partial[1], &partial);
        assert_eq!(next.source.as_deref(), Some("populations/p/m1-r0"));
    }

    #[test]
    fn the_tournament_seeds_a_weak_member_from_the_leaderboards_best() {
        let r = request(Scheme::Tournament);
        let board = [entry(0, 0, 100.0), entry(0, 1, 90.0), entry(1, 0, 50.0), entry(2, 0, 20.0), entry(3, 0, 10.0)];
        // The best 4 are 100, 90, 50, 20 (median 50): member 3's 10 and member 2's 20 are below.
        let next = r.next_round("p", &board[4], &board);
        assert_eq!(next.origin["action"], "generate");
        assert_eq!(next.source.as_deref(), Some("populations/p/m0-r0"), "a historical checkpoint may be the best");
        assert_eq!(r.next_round("p", &board[2], &board).origin["action"], "continue");
        assert_eq!(r.next_round("p", &board[1], &board).origin["action"], "continue");
    }

    #[test]
    fn every_bad_field_is_named() {
        let training = TrainingLimits::default();
        let limits = PopulationLimits::default();
        let base = serde_json::to_value(request(Scheme::Pbt)).unwrap();
        assert!(request(Scheme::Pbt).validate(&training, &limits, &crate::problems::envs(Default::default())).is_ok());
        for (patch, field) in [
            (json!({"size": 1}), "size"),
            (json!({"size": 33}), "size"),
            (json!({"interval_steps": 0}), "interval_steps"),
            (json!({"total_steps": 3_000}), "total_steps"),
            (json!({"interval_steps": 1, "total_steps": 1_000_000}), "interval_steps"),
            (json!({"quantile": 0.9}), "quantile"),
            (json!({"resample_probability": 2.0}), "resample_probability"),
            (json!({"explore": {}}), "explore"),
            (json!({"explore": {"learning_rate": {"min": 0.0, "max": 1.0, "log": true}}}), "explore.learning_rate"),
            (json!({"explore": {"learning_rate": {"min": 2.0, "max": 1.0}}}), "explore.learning_rate"),
            (json!({"explore": {"gamma": {"min": 0.9, "max": 1.5}}}), "explore.gamma"),
            (json!({"explore": {"bogus": {"min": 0.9, "max": 1.0}}}), "explore.bogus"),
            (json!({"explore": {"buffer_size": {"min": 1000, "max": 5000}}}), "explore.buffer_size"),
            (json!({"hyperparameters": {"learning_rate": 0.001}}), "explore.learning_rate"),
            (json!({"algorithm": "sac"}), "env"),
            (json!({"env": "Nope-v0"}), "env"),
        ] {
            let mut value = base.clone();
            for (k, v) in patch.as_object().unwrap() {
                value[k] = v.clone();
            }
            let r: PopulationRequest = serde_json::from_value(value.clone()).unwrap();
            let error =
                r.validate(&training, &limits, &crate::problems::envs(Default::default())).expect_err("rejected");
            assert_eq!(error.field(), Some(field), "{patch}: {error}");
        }
    }
}
