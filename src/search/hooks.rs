//! How a caller watches and stops a running search (the solve-job service streams incumbents
//! and cancels): an incumbent callback and a cancel flag, checked once per round.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

type IncumbentCallback = Arc<dyn Fn(Duration, f64) + Send + Sync>;
type StateCallback = Arc<dyn Fn(Duration, &[i8], f64) + Send + Sync>;

#[derive(Clone, Default)]
pub struct SearchHooks {
    /// Every new incumbent: elapsed time and its value (the search's energy until `mapped`
    /// turns it into the problem's objective).
    pub on_incumbent: Option<IncumbentCallback>,
    /// Every new incumbent with its spins (set by `decoded`, for objectives that are not a
    /// function of the energy alone); when set, the engine calls it instead of `on_incumbent`.
    pub on_incumbent_state: Option<StateCallback>,
    /// Set to stop the search at its next round, as if its time were up.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for SearchHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchHooks")
            .field("on_incumbent", &(self.on_incumbent.is_some() || self.on_incumbent_state.is_some()))
            .field("cancelled", &self.cancelled())
            .finish()
    }
}

impl SearchHooks {
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    pub fn incumbent(&self, elapsed: Duration, value: f64) {
        if let Some(f) = &self.on_incumbent {
            f(elapsed, value);
        }
    }

    /// What the engine calls on a new incumbent: its spins and energy.
    pub fn incumbent_state(&self, elapsed: Duration, spins: &[i8], energy: f64) {
        match &self.on_incumbent_state {
            Some(f) => f(elapsed, spins, energy),
            None => self.incumbent(elapsed, energy),
        }
    }

    /// The same hooks, reporting `convert(value)` instead of the value (objectives affine in
    /// the energy).
    pub fn mapped(&self, convert: impl Fn(f64) -> f64 + Send + Sync + 'static) -> SearchHooks {
        SearchHooks {
            on_incumbent: self
                .on_incumbent
                .clone()
                .map(|f| -> IncumbentCallback { Arc::new(move |t, v| f(t, convert(v))) }),
            on_incumbent_state: None,
            cancel: self.cancel.clone(),
        }
    }

    /// The same hooks, reporting `objective(spins, energy)` for every incumbent: the decoded
    /// objective of problems whose score is not a function of the energy (a constrained problem
    /// scores its repaired solution).
    pub fn decoded(&self, objective: impl Fn(&[i8], f64) -> f64 + Send + Sync + 'static) -> SearchHooks {
        SearchHooks {
            on_incumbent: None,
            on_incumbent_state: self
                .on_incumbent
                .clone()
                .map(|f| -> StateCallback { Arc::new(move |t, spins, energy| f(t, objective(spins, energy))) }),
            cancel: self.cancel.clone(),
        }
    }
}
