//! The combinatorial part: which K assets. The engine's parallel chains (`minimize_with`: rounds,
//! the worst chains reseeded from the best, incumbents, the learned proposal policy) over held
//! sets, moved by swaps (one held asset out, one other in) under a cyclic annealing schedule.
//! Each set is scored by its QP optimum (`qp.rs`), cached: chains revisit sets, and the swap
//! neighbourhood of a good set holds mostly other good sets. The asset leaving is the one of
//! least weight half of the time (the QP already says it contributes least), else uniform; the
//! asset entering follows the proposal policy's weights when it has any. Chains start from the
//! previous frontier point's best sets (warm starts along the frontier), else at random.

use super::qp::Allocation;
use super::{Goal, Portfolio};
use crate::problems::HistoryPoint;
use crate::search::moves::{cycle_temperature, minimize_with, MoveSet};
use crate::search::{SearchParams, StopReason};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Search hyperparameters.
#[derive(Debug, Clone)]
pub struct SubsetConfig {
    /// Swaps per chain and round.
    pub moves_per_round: usize,
    /// Swaps per annealing cycle.
    pub cycle: u64,
    /// Hot and cold temperatures, as fractions of the objective's scale.
    pub temperature: (f64, f64),
    /// Probability that the leaving asset is the held one of least weight.
    pub drop_lightest: f64,
    /// Probability that the entering asset is drawn from the `shortlist` of most negative
    /// reduced cost (lambda tradeoffs), not by the policy or uniformly.
    pub enter_by_gradient: f64,
    /// How many of the most improving assets the gradient draw picks from.
    pub shortlist: usize,
    /// Distinct best sets handed to the next frontier point.
    pub elite: usize,
    /// The search stops after this many times K (N - K) swaps over all chains without
    /// improvement (each swap of the neighbourhood tried a few times).
    pub patience_neighbourhoods: f64,
    /// Sets the cache holds at most (beyond it, sets are scored but not kept).
    pub cache_capacity: usize,
}

impl Default for SubsetConfig {
    fn default() -> Self {
        SubsetConfig {
            moves_per_round: 32,
            cycle: 400,
            temperature: (0.02, 0.0002),
            drop_lightest: 0.5,
            enter_by_gradient: 0.5,
            shortlist: 3,
            elite: 4,
            patience_neighbourhoods: 1.5,
            cache_capacity: 200_000,
        }
    }
}

/// What one goal's search found.
#[derive(Debug, Clone)]
pub struct GoalResult {
    pub best: Option<Allocation>,
    /// The best distinct held sets, best first (the next frontier point's starts).
    pub elite: Vec<Vec<usize>>,
    pub stop: StopReason,
    pub chains: usize,
    pub rounds: usize,
    pub history: Vec<HistoryPoint>,
    /// The non-dominated portfolios (return against variance) among all the goal's search scored.
    pub scored: Vec<Arc<Allocation>>,
}

impl GoalResult {
    /// A result computed in one go.
    pub fn exact(best: Option<Allocation>) -> Self {
        let elite = best.iter().map(|a| a.assets.clone()).collect();
        let scored = best.iter().cloned().map(Arc::new).collect();
        GoalResult { best, elite, stop: StopReason::Converged, chains: 1, rounds: 1, history: Vec::new(), scored }
    }
}

/// The objective's natural unit: the mean asset variance and mean absolute return, weighed as
/// the goal weighs them (the temperatures' and the proof gap's unit).
pub fn objective_scale(portfolio: &Portfolio, goal: &Goal) -> f64 {
    let n = portfolio.num_assets() as f64;
    let mean_variance = (0..portfolio.num_assets()).map(|i| portfolio.cov[[i, i]]).sum::<f64>() / n;
    let mean_return = portfolio.mu.iter().map(|m| m.abs()).sum::<f64>() / n;
    match *goal {
        Goal::Tradeoff(lambda) => lambda * mean_variance + (1.0 - lambda) * mean_return,
        Goal::TargetReturn(_) => mean_variance,
        Goal::RiskBudget(_) => mean_return,
    }
    .max(f64::MIN_POSITIVE)
}

type Scored = Option<Arc<Allocation>>;

/// Scored sets and the best distinct ones.
#[derive(Default)]
struct Cache {
    scores: HashMap<Vec<usize>, Scored>,
    elite: Vec<(f64, Vec<usize>)>,
}

pub struct SubsetMoves<'a> {
    portfolio: &'a Portfolio,
    goal: Goal,
    k: usize,
    config: SubsetConfig,
    /// The objective's scale: the temperatures' unit.
    scale: f64,
    seeds: Vec<Vec<usize>>,
    cache: Mutex<Cache>,
}

#[derive(Clone)]
pub struct SubsetChain {
    held: Vec<usize>,
    current: Scored,
    best: Scored,
    moves: u64,
    guide: Option<Arc<[f32]>>,
}

fn energy(scored: &Scored) -> f64 {
    scored.as_ref().map_or(f64::INFINITY, |a| a.objective)
}

impl<'a> SubsetMoves<'a> {
    pub fn new(portfolio: &'a Portfolio, goal: Goal, k: usize, seeds: &[Vec<usize>], config: SubsetConfig) -> Self {
        let scale = objective_scale(portfolio, &goal);
        SubsetMoves {
            portfolio,
            goal,
            k,
            config,
            scale,
            seeds: seeds.iter().filter(|s| s.len() == k).cloned().collect(),
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The QP optimum of `held` (ascending), from the cache when scored before.
    fn score(&self, held: &[usize]) -> Scored {
        if let Some(found) = self.cache.lock().expect("cache").scores.get(held) {
            return found.clone();
        }
        let scored = self.portfolio.solve_held(held, &self.goal, true).map(Arc::new);
        let mut cache = self.cache.lock().expect("cache");
        if cache.scores.len() < self.config.cache_capacity {
            cache.scores.insert(held.to_vec(), scored.clone());
        }
        if let Some(a) = &scored {
            if !cache.elite.iter().any(|(_, s)| s == held) {
                cache.elite.push((a.objective, held.to_vec()));
                cache.elite.sort_by(|x, y| x.0.total_cmp(&y.0).then_with(|| x.1.cmp(&y.1)));
                cache.elite.truncate(self.config.elite);
            }
        }
        scored
    }

    /// The non-dominated portfolios among those scored.
    fn nondominated(&self) -> Vec<Arc<Allocation>> {
        let cache = self.cache.lock().expect("cache");
        super::frontier::nondominated(cache.scores.values().flatten().cloned().collect())
    }

    fn elite(&self) -> Vec<Vec<usize>> {
        self.cache.lock().expect("cache").elite.iter().map(|(_, s)| s.clone()).collect()
    }

    fn random_set(&self, rng: &mut Xoshiro256PlusPlus) -> Vec<usize> {
        let mut all: Vec<usize> = (0..self.portfolio.num_assets()).collect();
        all.shuffle(rng);
        let mut held = all[..self.k].to_vec();
        held.sort_unstable();
        held
    }

    /// One of the `shortlist` candidates of most negative reduced cost at `a`: the gradient
    /// 2 lambda (Sw)_j - (1 - lambda) mu_j less the budget constraint's multiplier (the mean
    /// gradient over the held assets strictly between their bounds, where the KKT conditions make
    /// them equal). An asset whose reduced cost is negative would enter the unconstrained QP.
    fn most_improving(&self, a: &Allocation, lambda: f64, candidates: &[usize], rng: &mut Xoshiro256PlusPlus) -> usize {
        let p = self.portfolio;
        let gradient = |j: usize| {
            2.0 * lambda * a.assets.iter().zip(&a.weights).map(|(&i, w)| p.cov[[j, i]] * w).sum::<f64>()
                - (1.0 - lambda) * p.mu[j]
        };
        let interior: Vec<f64> = a
            .assets
            .iter()
            .zip(&a.weights)
            .filter(|(&i, &w)| w > p.constraints.lower[i] + 1e-9 && w < p.constraints.upper[i] - 1e-9)
            .map(|(&i, _)| gradient(i))
            .collect();
        let multiplier = if interior.is_empty() {
            a.assets.iter().map(|&i| gradient(i)).fold(f64::INFINITY, f64::min)
        } else {
            interior.iter().sum::<f64>() / interior.len() as f64
        };
        let mut ranked: Vec<(f64, usize)> = candidates.iter().map(|&j| (gradient(j) - multiplier, j)).collect();
        ranked.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        ranked[rng.gen_range(0..self.config.shortlist.min(ranked.len()))].1
    }

    /// `held` with one asset swapped out for one not held.
    fn neighbour(&self, chain: &SubsetChain, rng: &mut Xoshiro256PlusPlus) -> Option<Vec<usize>> {
        let n = self.portfolio.num_assets();
        if self.k == n {
            return None;
        }
        let out = match &chain.current {
            Some(a) if rng.gen_bool(self.config.drop_lightest) => {
                (0..a.weights.len()).min_by(|&x, &y| a.weights[x].total_cmp(&a.weights[y])).expect("held")
            }
            _ => rng.gen_range(0..self.k),
        };
        let candidates: Vec<usize> = (0..n).filter(|i| chain.held.binary_search(i).is_err()).collect();
        let by_gradient = match (&chain.current, self.goal) {
            (Some(a), Goal::Tradeoff(lambda)) if rng.gen_bool(self.config.enter_by_gradient) => {
                Some(self.most_improving(a, lambda, &candidates, rng))
            }
            _ => None,
        };
        let entering = match &chain.guide {
            _ if by_gradient.is_some() => by_gradient.expect("checked"),
            Some(guide) => {
                let weights: Vec<f64> = candidates.iter().map(|&i| (guide[i] as f64).exp()).collect();
                candidates[crate::problems::random::weighted_pick(&weights, rng)]
            }
            None => candidates[rng.gen_range(0..candidates.len())],
        };
        let mut held = chain.held.clone();
        held[out] = entering;
        held.sort_unstable();
        Some(held)
    }
}

impl MoveSet for SubsetMoves<'_> {
    type Chain = SubsetChain;
    type Solution = Scored;

    fn num_variables(&self) -> usize {
        self.portfolio.num_assets()
    }

    fn moves_per_round(&self) -> usize {
        self.config.moves_per_round
    }

    /// Chain c starts from the c-th seed set (the previous frontier point's best sets), the
    /// rest from random sets.
    fn start(&self, chain: usize, rng: &mut Xoshiro256PlusPlus) -> SubsetChain {
        let held = self.seeds.get(chain).cloned().unwrap_or_else(|| self.random_set(rng));
        let current = self.score(&held);
        SubsetChain { held, best: current.clone(), current, moves: 0, guide: None }
    }

    /// A swap scores its set by a QP solve (Clarabel) or a cache hit: 34-38 us a swap on
    /// average on port2 at lambda = 0.5 (one chain, seeds 0-2, loading included), some 3,000
    /// single flips' time. Counted as one, two chains' 64 swaps a round would stay far below the
    /// thread pool's threshold and the chains take turns on one core; any cost above 312 makes
    /// them parallel.
    fn move_cost(&self) -> usize {
        3_000
    }

    fn advance(&self, chain: &mut SubsetChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        for _ in 0..moves {
            let Some(held) = self.neighbour(chain, rng) else { return };
            let scored = self.score(&held);
            let (now, next) = (energy(&chain.current), energy(&scored));
            let (hot, cold) = self.config.temperature;
            let temperature = cycle_temperature(chain.moves, self.config.cycle, hot, cold) * self.scale;
            chain.moves += 1;
            let accept = next <= now || (next.is_finite() && rng.gen::<f64>() < (-(next - now) / temperature).exp());
            if accept {
                chain.held = held;
                chain.current = scored;
                if energy(&chain.current) < energy(&chain.best) {
                    chain.best = chain.current.clone();
                }
            }
        }
    }

    fn best(&self, chain: &SubsetChain) -> (Scored, f64) {
        (chain.best.clone(), energy(&chain.best))
    }

    fn choices(&self, solution: &Scored) -> Option<Vec<bool>> {
        let mut chosen = vec![false; self.portfolio.num_assets()];
        solution.as_ref()?.assets.iter().for_each(|&i| chosen[i] = true);
        Some(chosen)
    }

    fn guide(&self, chain: &mut SubsetChain, weights: &Arc<[f32]>) {
        chain.guide = Some(weights.clone());
    }
}

/// The best K-asset allocation for `goal` within `params` (its time, rounds, chains, seed).
pub fn search_goal(
    portfolio: &Portfolio,
    goal: &Goal,
    k: usize,
    params: &SearchParams,
    seeds: &[Vec<usize>],
) -> GoalResult {
    let config = SubsetConfig::default();
    let n = portfolio.num_assets();
    // The engine's patience is in sweeps of n moves, patience * n^2 of them.
    let swaps = config.patience_neighbourhoods * (k * (n - k)).max(1) as f64;
    let mut params = params.clone();
    params.patience = swaps / (n as f64).powi(3);
    params.proposal.enabled = true;
    let moves = SubsetMoves::new(portfolio, *goal, k, seeds, config);
    let outcome = minimize_with(&moves, &params);
    GoalResult {
        best: outcome.solution.map(|a| (*a).clone()),
        elite: moves.elite(),
        stop: outcome.stop,
        chains: outcome.chains,
        rounds: outcome.rounds,
        history: crate::problems::history_points(&outcome.history, |e| e),
        scored: moves.nondominated(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problems::Limits;
    use rand::SeedableRng;

    #[test]
    fn chain_c_starts_from_seed_set_c_in_whatever_order_the_chains_start() {
        let mu: Vec<f64> = (0..8).map(|i| 0.01 + 0.001 * i as f64).collect();
        let cov: Vec<Vec<f64>> = (0..8).map(|i| (0..8).map(|j| if i == j { 0.04 } else { 0.01 }).collect()).collect();
        let instance = serde_json::json!({"mu": mu, "cov": cov, "cardinality": 3, "lambda": 0.5});
        let portfolio = super::super::parse_json(&instance, &Limits::default()).unwrap();
        let seeds = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let moves = SubsetMoves::new(&portfolio, Goal::Tradeoff(0.5), 3, &seeds, SubsetConfig::default());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        // Started out of order, as the thread pool may start them.
        let third = moves.start(2, &mut rng);
        let second = moves.start(1, &mut rng);
        let first = moves.start(0, &mut rng);
        assert_eq!((first.held, second.held), (seeds[0].clone(), seeds[1].clone()));
        assert_eq!(third.held.len(), 3, "past the seeds: a random set of K assets");
        // Two chains' 32 swaps a round, at their cost, reach the pool's threshold.
        assert!(2 * moves.moves_per_round() * moves.move_cost() >= crate::search::moves::PARALLEL_MIN_MOVES);
    }
}
