//! A convex program in Clarabel's form, assembled row by row: minimise 1/2 x'Px + q'x subject
//! to equalities, inequalities (a'x <= b) and second-order cones. The portfolio's subset QPs and
//! branch-and-bound relaxations and the OR-Gym references' linear programs (the inventory's
//! shrinking horizon) all build one, so the Clarabel calls live here once.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

/// One sparse row: (variable, coefficient) pairs.
pub type Row = Vec<(usize, f64)>;

#[derive(Debug, Clone, Default)]
pub struct Program {
    num_variables: usize,
    /// Upper-triangle entries (row <= column) of P.
    quadratic: Vec<(usize, usize, f64)>,
    linear: Vec<f64>,
    equalities: Vec<(Row, f64)>,
    inequalities: Vec<(Row, f64)>,
    /// Each cone's rows: s_j = b_j - a_j'x, with s_0 >= ||s_1..||.
    cones: Vec<Vec<(Row, f64)>>,
}

impl Program {
    pub fn new(num_variables: usize) -> Self {
        Program { num_variables, linear: vec![0.0; num_variables], ..Default::default() }
    }

    /// Appends `count` variables (objective 0); returns the first one's index.
    pub fn add_variables(&mut self, count: usize) -> usize {
        let first = self.num_variables;
        self.num_variables += count;
        self.linear.resize(self.num_variables, 0.0);
        first
    }

    /// Adds `value` to P[i][j] and P[j][i] (the objective gains value * x_i x_j for i != j,
    /// value / 2 * x_i^2 on the diagonal).
    pub fn add_quadratic(&mut self, i: usize, j: usize, value: f64) {
        if value != 0.0 {
            self.quadratic.push((i.min(j), i.max(j), value));
        }
    }

    pub fn add_linear(&mut self, i: usize, value: f64) {
        self.linear[i] += value;
    }

    pub fn equal(&mut self, row: Row, rhs: f64) {
        self.equalities.push((row, rhs));
    }

    pub fn at_most(&mut self, row: Row, rhs: f64) {
        self.inequalities.push((row, rhs));
    }

    /// ||(b_j - a_j'x)_{j >= 1}|| <= b_0 - a_0'x.
    pub fn second_order_cone(&mut self, rows: Vec<(Row, f64)>) {
        self.cones.push(rows);
    }

    /// The optimum x, or None when the program is infeasible or the solver fails.
    pub fn solve(&self) -> Option<Vec<f64>> {
        let n = self.num_variables;
        // Clarabel's gap tolerances are absolute as well as relative: a variance of 6e-4 met
        // to 1e-8 is only 2e-5 exact. The objective is scaled to unit coefficients (the
        // optimum x is the same).
        let largest =
            self.quadratic.iter().map(|e| e.2.abs()).chain(self.linear.iter().map(|v| v.abs())).fold(0.0, f64::max);
        let scale = if largest > 0.0 { 1.0 / largest } else { 1.0 };
        let p = csc(n, n, self.quadratic.iter().map(|&(i, j, v)| (i, j, v * scale)).collect());
        let linear: Vec<f64> = self.linear.iter().map(|v| v * scale).collect();
        let mut triplets = Vec::new();
        let mut rhs = Vec::new();
        let mut cones = Vec::new();
        let rows = self.equalities.iter().chain(&self.inequalities).chain(self.cones.iter().flatten());
        for (r, (row, b)) in rows.enumerate() {
            triplets.extend(row.iter().map(|&(j, a)| (r, j, a)));
            rhs.push(*b);
        }
        if !self.equalities.is_empty() {
            cones.push(SupportedConeT::ZeroConeT(self.equalities.len()));
        }
        if !self.inequalities.is_empty() {
            cones.push(SupportedConeT::NonnegativeConeT(self.inequalities.len()));
        }
        cones.extend(self.cones.iter().map(|c| SupportedConeT::SecondOrderConeT(c.len())));
        let a = csc(rhs.len(), n, triplets);
        let settings = DefaultSettingsBuilder::default().verbose(false).build().ok()?;
        let mut solver = DefaultSolver::new(&p, &linear, &a, &rhs, &cones, settings).ok()?;
        solver.solve();
        match solver.solution.status {
            SolverStatus::Solved | SolverStatus::AlmostSolved => Some(solver.solution.x.clone()),
            _ => None,
        }
    }
}

/// An m x n CSC matrix from (row, column, value) triplets; duplicates add up.
fn csc(m: usize, n: usize, mut triplets: Vec<(usize, usize, f64)>) -> CscMatrix<f64> {
    triplets.sort_by_key(|&(r, c, _)| (c, r));
    let (mut colptr, mut rowval, mut nzval) = (vec![0usize; n + 1], Vec::new(), Vec::<f64>::new());
    let mut last: Option<(usize, usize)> = None;
    for (r, c, v) in triplets {
        if last == Some((r, c)) {
            *nzval.last_mut().expect("an entry") += v;
            continue;
        }
        last = Some((r, c));
        rowval.push(r);
        nzval.push(v);
        colptr[c + 1] += 1;
    }
    for c in 0..n {
        colptr[c + 1] += colptr[c];
    }
    CscMatrix::new(m, n, colptr, rowval, nzval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_constrained_quadratic_meets_its_closed_form() {
        // min (x0 - 1)^2 + (x1 - 2)^2 s.t. x0 + x1 = 1, x1 <= 0.8: x = (0.2, 0.8).
        let mut program = Program::new(2);
        program.add_quadratic(0, 0, 2.0);
        program.add_quadratic(1, 1, 2.0);
        program.add_linear(0, -2.0);
        program.add_linear(1, -4.0);
        program.equal(vec![(0, 1.0), (1, 1.0)], 1.0);
        program.at_most(vec![(1, 1.0)], 0.8);
        let x = program.solve().expect("feasible");
        assert!((x[0] - 0.2).abs() < 1e-6 && (x[1] - 0.8).abs() < 1e-6, "{x:?}");
        program.at_most(vec![(0, 1.0)], 0.1);
        assert!(program.solve().is_none(), "x0 <= 0.1 and x1 <= 0.8 cannot sum to 1");
    }
}
