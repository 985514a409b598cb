//! Step control of a subgradient ascent on a Lagrangian dual (M. Held, P. Wolfe and H. P.
//! Crowder, "Validation of subgradient optimization", Mathematical Programming 6, 1974): the step
//! t = lambda (U - L) / ||g||^2 towards a known upper value U, lambda halving after `stall` steps
//! without a better bound, the ascent over once lambda falls below its floor. Every iterate of a
//! Lagrangian dual is a valid bound, so the best one is what a caller reports.

pub struct Ascent {
    /// The best bound recorded so far.
    pub best: f64,
    lambda: f64,
    stalled: usize,
    stall: usize,
    min_lambda: f64,
}

impl Ascent {
    /// lambda starts at 2.
    pub fn new(stall: usize, min_lambda: f64) -> Self {
        Self::starting_at(2.0, stall, min_lambda)
    }

    /// lambda starts at `lambda` (a warm start from good multipliers takes smaller steps).
    pub fn starting_at(lambda: f64, stall: usize, min_lambda: f64) -> Self {
        Ascent { best: f64::NEG_INFINITY, lambda, stalled: 0, stall, min_lambda }
    }

    /// Records this step's bound; false once lambda has fallen below its floor.
    pub fn record(&mut self, bound: f64) -> bool {
        if bound > self.best + 1e-9 {
            (self.best, self.stalled) = (bound, 0);
        } else {
            self.stalled += 1;
            if self.stalled >= self.stall {
                (self.lambda, self.stalled) = (self.lambda / 2.0, 0);
            }
        }
        self.lambda >= self.min_lambda
    }

    /// The step length from `bound` towards `upper` along a subgradient of squared norm `norm`.
    pub fn step(&self, upper: f64, bound: f64, norm: f64) -> f64 {
        self.lambda * (upper - bound).max(0.0) / norm
    }
}
