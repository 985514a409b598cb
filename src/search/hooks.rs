//! How a caller watches and stops a running search (the solve-job service streams incumbents
//! and cancels): an incumbent callback and a cancel flag, checked once per round.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

type IncumbentCallback = Arc<dyn Fn(Duration, f64) + Send + Sync>;

#[derive(Clone, Default)]
pub struct SearchHooks {
    /// Every new incumbent: elapsed time and its value (the search's energy until `mapped`
    /// turns it into the problem's objective).
    pub on_incumbent: Option<IncumbentCallback>,
    /// Set to stop the search at its next round, as if its time were up.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for SearchHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchHooks")
            .field("on_incumbent", &self.on_incumbent.is_some())
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

    /// The same hooks, reporting `convert(value)` instead of the value.
    pub fn mapped(&self, convert: impl Fn(f64) -> f64 + Send + Sync + 'static) -> SearchHooks {
        SearchHooks {
            on_incumbent: self
                .on_incumbent
                .clone()
                .map(|f| -> IncumbentCallback { Arc::new(move |t, v| f(t, convert(v))) }),
            cancel: self.cancel.clone(),
        }
    }
}
