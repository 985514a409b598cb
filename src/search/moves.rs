//! The engine's loop for problems whose own move set beats single spin flips on their Ising
//! encoding (vertex cover's swap moves, ...): the same parallel chains, rounds, re-seeding of
//! the worst chains from the best, anytime incumbents through the hooks, `time_limit_s`,
//! `target`, `seed`, `max_rounds` and patience as `minimize`, with the chain dynamics supplied by
//! a `MoveSet`. Energies are the problem's Ising energies, so targets and reports are shared.

use super::hooks::SearchHooks;
use super::proposal::ProposalPolicy;
use super::{chain_rng, patience_sweeps, Incumbent, SearchParams, StopReason};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Below this many moves per round over all chains, the chains run in the calling thread (as
/// in `chains.rs`: the pool's hand-off cost more than it saved on small rounds).
pub(crate) const PARALLEL_MIN_MOVES: usize = 20_000;

/// A problem's own chain dynamics.
pub trait MoveSet: Sync {
    type Chain: Clone + Send;
    /// What a chain's best state is reported as (spins, a selection, a colouring).
    type Solution: Clone + Send + Default;
    fn num_variables(&self) -> usize;
    /// Moves per chain and round (a round ends with the incumbent check and re-seeding).
    fn moves_per_round(&self) -> usize;
    /// A fresh chain, number `chain` of the run (0-based). A move set that starts its chains
    /// differently picks by the number, not by the order of the calls, so chains started in
    /// parallel start where they would in turn.
    fn start(&self, chain: usize, rng: &mut Xoshiro256PlusPlus) -> Self::Chain;
    /// Runs `moves` moves on the chain.
    fn advance(&self, chain: &mut Self::Chain, moves: usize, rng: &mut Xoshiro256PlusPlus);
    /// `advance`, ending early once `deadline` has passed. A move set whose moves are long
    /// checks the clock between them, so that the last round ends near the time limit instead
    /// of up to a round past it; the default makes every move.
    fn advance_until(&self, chain: &mut Self::Chain, moves: usize, rng: &mut Xoshiro256PlusPlus, _deadline: Instant) {
        self.advance(chain, moves, rng);
    }
    /// What one move costs in single-flip moves' time: the chains run on the thread pool when
    /// a round's moves over all chains, times this, reach `PARALLEL_MIN_MOVES`. A move set
    /// whose moves are whole local searches (a TSP kick and its Lin-Kernighan repair) says so,
    /// or its few moves per round would keep its chains on one core.
    fn move_cost(&self) -> usize {
        1
    }
    /// The chain's best state so far and its energy (lower is better; for a problem solved
    /// through a `PenaltyProblem`, its Ising energy).
    fn best(&self, chain: &Self::Chain) -> (Self::Solution, f64);
    /// The patience is never shorter than this many rounds (a move set whose annealing cycle
    /// spans several rounds waits for a few cycles; `patience * n^2` sweeps is tiny at n = 20).
    fn min_patience_rounds(&self) -> usize {
        8
    }
    /// The solution as one 0/1 choice per variable, for the learned proposal policy
    /// (`proposal.rs`); None (the default): the move set takes no guidance.
    fn choices(&self, _solution: &Self::Solution) -> Option<Vec<bool>> {
        None
    }
    /// Hands a chain the policy's weights (`strength` times its log-odds of choosing each
    /// variable), for its proposals to follow.
    fn guide(&self, _chain: &mut Self::Chain, _weights: &Arc<[f32]>) {}
    /// Tells the hooks of a new incumbent: its energy (a move set whose solutions are spins of a
    /// penalty Hamiltonian passes them on, for the repair and scoring of `binary::Repaired`).
    fn announce(&self, hooks: &SearchHooks, elapsed: Duration, _solution: &Self::Solution, energy: f64) {
        hooks.incumbent(elapsed, energy);
    }
    /// After the last round, a state made from the chains' best ones (best first) that is lower
    /// than all of them, if the move set has a recombination; None (the default): the best
    /// chain's state is the answer.
    fn combine(&self, _bests: &[(Self::Solution, f64)]) -> Option<(Self::Solution, f64)> {
        None
    }
}

/// The temperature of a geometric annealing cycle of `cycle` moves from `hot` to `cold`, at the
/// chain's `moves`-th move (the cycle repeats).
pub fn cycle_temperature(moves: u64, cycle: u64, hot: f64, cold: f64) -> f64 {
    let progress = (moves % cycle.max(1)) as f64 / cycle.max(1) as f64;
    hot * (cold / hot).powf(progress)
}

/// The best state of a move-set search and how the search went (as `SearchOutcome`).
#[derive(Debug, Clone)]
pub struct MovesOutcome<S> {
    pub solution: S,
    pub energy: f64,
    pub stop: StopReason,
    pub elapsed: Duration,
    pub history: Vec<Incumbent>,
    pub chains: usize,
    pub rounds: usize,
}

/// Runs the chains of `moves` until the target, the time, the round budget, a cancel or the
/// patience (`patience * n^2` sweeps of n moves over all chains without improvement).
pub fn minimize_with<M: MoveSet>(moves: &M, params: &SearchParams) -> MovesOutcome<M::Solution> {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(params.time_limit_s.max(0.0));
    let n = moves.num_variables().max(1);
    // One chain per core: a move-set chain is one long trajectory, and sharing a core halves it
    // (frb45-21-1 to its optimum on 2 cores, seeds 0-4: 2 chains 0.6 s median, 1.1 s worst;
    // 4 chains 1.8 s and 2.3 s).
    let count = params.chains.unwrap_or_else(rayon::current_num_threads).max(1);
    let per_round = moves.moves_per_round().max(1);
    let parallel = per_round * count * moves.move_cost().max(1) >= PARALLEL_MIN_MOVES;
    let start_chain = |c: usize| moves.start(c, &mut chain_rng(params.seed, usize::MAX >> 32, c));
    let mut chains: Vec<M::Chain> = if parallel {
        (0..count).into_par_iter().map(start_chain).collect()
    } else {
        (0..count).map(start_chain).collect()
    };
    let (mut best_solution, mut best_energy) = (M::Solution::default(), f64::INFINITY);
    let mut history = Vec::new();
    let round_sweeps = (per_round * count) as f64 / n as f64;
    let patience = patience_sweeps(n, params.patience).max(moves.min_patience_rounds() as f64 * round_sweeps);
    let (mut rounds, mut sweeps_since_improvement) = (0usize, 0.0f64);
    let mut proposal = params.proposal.enabled.then(|| ProposalPolicy::new(n, &params.proposal));
    let stop = loop {
        // The first round always runs: it is what gives every chain a best state to report.
        if rounds > 0 && (Instant::now() >= deadline || params.hooks.cancelled()) {
            break StopReason::TimeLimit;
        }
        if params.max_rounds.is_some_and(|m| rounds >= m) {
            break StopReason::RoundLimit;
        }
        let advance = |(c, chain): (usize, &mut M::Chain)| {
            moves.advance_until(chain, per_round, &mut chain_rng(params.seed, rounds, c), deadline);
            moves.best(chain)
        };
        let bests: Vec<(M::Solution, f64)> = if parallel {
            chains.par_iter_mut().enumerate().map(advance).collect()
        } else {
            chains.iter_mut().enumerate().map(advance).collect()
        };
        for (solution, energy) in &bests {
            if *energy < best_energy - 1e-9 {
                (best_solution, best_energy) = (solution.clone(), *energy);
                sweeps_since_improvement = 0.0;
                history.push(Incumbent { elapsed: start.elapsed(), energy: *energy });
                moves.announce(&params.hooks, start.elapsed(), &best_solution, best_energy);
            }
        }
        if let Some(policy) = proposal.as_mut() {
            let mut guided = false;
            for (solution, energy) in &bests {
                if let Some(choices) = moves.choices(solution) {
                    policy.offer(&choices, *energy);
                    guided = true;
                }
            }
            if guided {
                let weights = policy.learn();
                chains.iter_mut().for_each(|chain| moves.guide(chain, &weights));
            } else {
                proposal = None;
            }
        }
        rounds += 1;
        if rounds.is_multiple_of(params.reseed_every.max(1)) && count >= 4 {
            // The worst quarter restarts from copies of the best quarter (ties by index).
            let mut order: Vec<usize> = (0..count).collect();
            order.sort_by(|&a, &b| bests[a].1.total_cmp(&bests[b].1).then(a.cmp(&b)));
            let quarter = count / 4;
            for k in 0..quarter {
                chains[order[count - 1 - k]] = chains[order[k]].clone();
            }
        }
        sweeps_since_improvement += round_sweeps;
        if params.target_energy.is_some_and(|t| best_energy <= t + 1e-9) {
            break StopReason::TargetReached;
        }
        if sweeps_since_improvement >= patience {
            break StopReason::Converged;
        }
    };
    // The chains searched independently (for their diversity); their best states meet once.
    if count > 1 {
        let mut bests: Vec<(M::Solution, f64)> = chains.iter().map(|chain| moves.best(chain)).collect();
        bests.sort_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((solution, energy)) = moves.combine(&bests).filter(|&(_, e)| e < best_energy - 1e-9) {
            (best_solution, best_energy) = (solution, energy);
            history.push(Incumbent { elapsed: start.elapsed(), energy });
            moves.announce(&params.hooks, start.elapsed(), &best_solution, best_energy);
        }
    }
    MovesOutcome {
        solution: best_solution,
        energy: best_energy,
        stop,
        elapsed: start.elapsed(),
        history,
        chains: count,
        rounds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Chains that stay at a random level in 1..2; `combined` is what their recombination makes.
    struct Levels {
        combined: f64,
    }

    impl MoveSet for Levels {
        type Chain = f64;
        type Solution = Vec<u32>;
        fn num_variables(&self) -> usize {
            4
        }
        fn moves_per_round(&self) -> usize {
            1
        }
        fn start(&self, _chain: usize, rng: &mut Xoshiro256PlusPlus) -> f64 {
            rng.gen_range(1.0..2.0)
        }
        fn advance(&self, _: &mut f64, _: usize, _: &mut Xoshiro256PlusPlus) {}
        fn best(&self, chain: &f64) -> (Vec<u32>, f64) {
            (vec![1], *chain)
        }
        fn combine(&self, bests: &[(Vec<u32>, f64)]) -> Option<(Vec<u32>, f64)> {
            assert!(bests.len() == 3 && bests.windows(2).all(|w| w[0].1 <= w[1].1), "the chains' bests, best first");
            Some((vec![7], self.combined))
        }
    }

    #[test]
    fn a_combination_below_every_chain_is_the_answer_and_one_above_is_not() {
        let params = SearchParams { chains: Some(3), max_rounds: Some(2), ..Default::default() };
        let low = minimize_with(&Levels { combined: 0.5 }, &params);
        assert_eq!((low.solution, low.energy), (vec![7], 0.5));
        assert_eq!(low.history.last().map(|i| i.energy), Some(0.5), "the combination is an incumbent");
        let high = minimize_with(&Levels { combined: 5.0 }, &params);
        assert!(high.solution == vec![1] && (1.0..2.0).contains(&high.energy), "{high:?}");
    }
}
