//! What both run loops (single- and multi-agent) do after an iteration, written once: when an
//! evaluation is due (every `eval_every` env steps and at the end of the budget) run it on fresh
//! episodes, confirm a reached target, log it to `metrics.jsonl`, report it to the hooks,
//! checkpoint, and say whether to stop.

use super::agents::Metrics;
use super::hooks::RunHooks;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Env seed of a run's k-th evaluation (disjoint from the training envs' seeds).
pub fn evaluation_seed(run_seed: u64, k: usize) -> u64 {
    run_seed.wrapping_add(1_000_003).wrapping_add((k as u64).wrapping_mul(7_919))
}

/// Env seed of the k-th confirmation episodes.
fn confirmation_seed(run_seed: u64, k: usize) -> u64 {
    evaluation_seed(run_seed, k) ^ (1 << 40)
}

/// One evaluation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evaluation {
    pub step: usize,
    pub episodes: usize,
    /// Env seed of this evaluation's episodes.
    pub eval_seed: u64,
    pub return_mean: f64,
    pub return_std: f64,
    /// Mean and std over `confirm_episodes` more, when the mean reached the target.
    pub confirmation: Option<(f64, f64)>,
    pub wall_s: f64,
    /// Wall time spent training so far, evaluations excluded.
    pub train_s: f64,
    pub steps_per_s: f64,
    pub losses: serde_json::Value,
}

/// When and how a run evaluates.
#[derive(Debug, Clone)]
pub struct EvaluationPlan {
    pub seed: u64,
    pub eval_every: usize,
    pub eval_episodes: usize,
    /// Stop once an evaluation and its confirmation over `confirm_episodes` further fresh
    /// episodes both reach this.
    pub target_return: Option<f64>,
    pub confirm_episodes: usize,
    pub total_steps: usize,
}

/// Creates a run folder: `config.json` (what checkpoints are rebuilt from) and an empty
/// `metrics.jsonl`, returned for appending.
pub fn create_run_dir(dir: &Path, config: &serde_json::Value) -> Result<std::fs::File> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("config.json"), serde_json::to_string_pretty(config)?)?;
    Ok(std::fs::File::create(dir.join("metrics.jsonl"))?)
}

/// What a loop lends `after_iteration`: its agent, to evaluate and to checkpoint with the rest
/// of the run.
pub trait Iteration {
    /// Mean and std of the (team) return of `episodes` deterministic episodes seeded by `seed`.
    fn evaluate(&mut self, episodes: usize, seed: u64) -> Result<(f64, f64)>;
    /// Writes the run's checkpoint into `dir`.
    fn checkpoint(&mut self, dir: &Path, reached_target_at: Option<usize>) -> Result<()>;
}

pub struct Monitor {
    plan: EvaluationPlan,
    hooks: RunHooks,
    file: Option<std::fs::File>,
    out_dir: Option<PathBuf>,
    start: Instant,
    /// Seconds spent in evaluations.
    evaluating_s: f64,
    pub evaluations: Vec<Evaluation>,
    next_eval: usize,
    pub reached_target_at: Option<usize>,
}

impl Monitor {
    /// A fresh run writes `config` into `out_dir`; a resumed one (at `step`) appends to its log
    /// and carries its earlier evaluations.
    pub fn new(
        plan: EvaluationPlan,
        hooks: RunHooks,
        out_dir: Option<&Path>,
        config: &serde_json::Value,
        resumed_at: Option<usize>,
    ) -> Result<Self> {
        let every = plan.eval_every.max(1);
        let (file, evaluations, next_eval) = match (out_dir, resumed_at) {
            (Some(dir), Some(step)) => {
                // The resumed run's configuration (hyperparameters may have changed since).
                std::fs::write(dir.join("config.json"), serde_json::to_string_pretty(config)?)?;
                let log = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap_or_default();
                let evaluations = log
                    .lines()
                    .map(serde_json::from_str)
                    .collect::<Result<Vec<Evaluation>, _>>()?
                    .into_iter()
                    .filter(|e| e.step <= step)
                    .collect::<Vec<_>>();
                let mut file = std::fs::File::create(dir.join("metrics.jsonl"))?;
                for e in &evaluations {
                    writeln!(file, "{}", serde_json::to_string(e)?)?;
                }
                (Some(file), evaluations, (step / every + 1) * every)
            }
            (Some(dir), None) => (Some(create_run_dir(dir, config)?), Vec::new(), every),
            (None, _) => (None, Vec::new(), every),
        };
        Ok(Monitor {
            plan,
            hooks,
            file,
            out_dir: out_dir.map(Path::to_path_buf),
            start: Instant::now(),
            evaluating_s: 0.0,
            evaluations,
            next_eval,
            reached_target_at: None,
        })
    }

    pub fn hooks(&self) -> &RunHooks {
        &self.hooks
    }

    /// The loop goes on while the budget lasts and nobody cancelled; reports progress.
    pub fn running(&self, step: usize) -> bool {
        self.hooks.progress(step);
        step < self.plan.total_steps && !self.hooks.cancelled() && self.reached_target_at.is_none()
    }

    pub fn evaluation_due(&self, step: usize) -> bool {
        step >= self.next_eval || step >= self.plan.total_steps
    }

    /// After one iteration at `step`: when due, evaluate, confirm, checkpoint into the run
    /// folder, log and report. Returns whether the target has been reached (the loop stops).
    pub fn after_iteration(
        &mut self,
        step: usize,
        episodes: usize,
        losses: &Metrics,
        iteration: &mut dyn Iteration,
    ) -> Result<bool> {
        tracing::debug!(step, ?losses, "iteration");
        if !self.evaluation_due(step) {
            return Ok(false);
        }
        let every = self.plan.eval_every.max(1);
        self.next_eval = (step / every + 1) * every;
        let started = Instant::now();
        let k = self.evaluations.len();
        let (seed, plan) = (self.plan.seed, &self.plan);
        let eval_seed = evaluation_seed(seed, k);
        let (mean, std) = iteration.evaluate(plan.eval_episodes, eval_seed)?;
        let confirmation = match plan.target_return {
            Some(target) if mean >= target && plan.confirm_episodes > 0 => {
                Some(iteration.evaluate(plan.confirm_episodes, confirmation_seed(seed, k))?)
            }
            _ => None,
        };
        self.evaluating_s += started.elapsed().as_secs_f64();
        let reached = plan.target_return.is_some_and(|t| mean >= t && confirmation.is_none_or(|c| c.0 >= t));
        if reached {
            self.reached_target_at = Some(step);
        }
        let wall_s = self.start.elapsed().as_secs_f64();
        let train_s = wall_s - self.evaluating_s;
        let evaluation = Evaluation {
            step,
            episodes,
            eval_seed,
            return_mean: mean,
            return_std: std,
            confirmation,
            wall_s,
            train_s,
            steps_per_s: step as f64 / train_s.max(1e-9),
            losses: serde_json::Value::Object(losses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()),
        };
        tracing::info!(step, mean, std, "evaluation");
        if let Some(dir) = &self.out_dir {
            iteration.checkpoint(dir, self.reached_target_at)?;
        }
        if let Some(file) = &mut self.file {
            writeln!(file, "{}", serde_json::to_string(&evaluation)?)?;
        }
        self.hooks.evaluation(&evaluation);
        self.evaluations.push(evaluation);
        Ok(reached)
    }

    pub fn out_dir(&self) -> Option<&Path> {
        self.out_dir.as_deref()
    }

    /// (wall seconds, of which training).
    pub fn clock(&self) -> (f64, f64) {
        let wall_s = self.start.elapsed().as_secs_f64();
        (wall_s, wall_s - self.evaluating_s)
    }
}
