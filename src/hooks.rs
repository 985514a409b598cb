//! How a caller watches and stops a training run from outside its loop (the job service streams
//! evaluations and progress, and cancels; the command line moves its progress bar): callbacks
//! plus a cancel flag, checked once per iteration of the loop. Deep-RL runs (`drl`) and the
//! supervised policy trainers (`policies`) report through the same hooks.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

type EvaluationCallback = Arc<dyn Fn(&serde_json::Value) + Send + Sync>;
type ProgressCallback = Arc<dyn Fn(usize) + Send + Sync>;

#[derive(Clone, Default)]
pub struct RunHooks {
    /// Every evaluation, as the JSON line `metrics.jsonl` gets.
    pub on_evaluation: Option<EvaluationCallback>,
    /// Env steps so far, once per loop iteration (keep it cheap).
    pub on_progress: Option<ProgressCallback>,
    /// Set to stop the run at the next iteration; the run then checkpoints and returns.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for RunHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunHooks")
            .field("on_evaluation", &self.on_evaluation.is_some())
            .field("on_progress", &self.on_progress.is_some())
            .field("cancelled", &self.cancelled())
            .finish()
    }
}

impl RunHooks {
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    pub fn progress(&self, step: usize) {
        if let Some(f) = &self.on_progress {
            f(step);
        }
    }

    pub fn evaluation(&self, evaluation: &impl Serialize) {
        if let Some(f) = &self.on_evaluation {
            f(&serde_json::to_value(evaluation).unwrap_or_default());
        }
    }

    /// A supervised trainer's running figure at `step` (e.g. "sum rate 12.3456"), reported as
    /// an evaluation with a `figure` field.
    pub fn figure(&self, step: usize, figure: String) {
        if let Some(f) = &self.on_evaluation {
            f(&serde_json::json!({"step": step, "figure": figure}));
        }
    }
}
