//! Chang et al.'s (2000, section 4.1) genetic algorithm for one lambda: a chromosome is K
//! distinct assets with values s_i in [0, 1]; its weights are w_i = eps_i + s_i (1 - sum eps) /
//! sum s over the held set (assets that then exceed delta_i are fixed at delta_i and the rest
//! re-spread, as in their paper); steady-state with binary tournaments, uniform crossover, a
//! mutation that scales one value by 0.9 or 1.1, and the child replacing the worst member;
//! 1000 N evaluations from a random population of 100. Sector caps and cost budgets are not in
//! their GA: a chromosome that breaks one scores its objective plus the excess.

use super::qp::Allocation;
use super::Portfolio;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Debug, Clone)]
pub struct GaConfig {
    /// Members of the population (Chang et al.: 100).
    pub population: usize,
    /// Children evaluated (Chang et al.: 1000 N).
    pub evaluations: usize,
}

impl GaConfig {
    pub fn for_assets(n: usize) -> Self {
        GaConfig { population: 100, evaluations: 1000 * n }
    }
}

#[derive(Clone)]
struct Member {
    /// (asset, s), ascending by asset.
    genes: Vec<(usize, f64)>,
    fitness: f64,
}

/// Chang et al.'s decoding: floors plus the values' share of what remains, capped.
fn weights(portfolio: &Portfolio, genes: &[(usize, f64)]) -> Vec<f64> {
    let (lower, upper) = (&portfolio.constraints.lower, &portfolio.constraints.upper);
    let mut fixed = vec![false; genes.len()];
    loop {
        let free_mass =
            1.0 - genes.iter().zip(&fixed).map(|(&(i, _), &f)| if f { upper[i] } else { lower[i] }).sum::<f64>();
        let total: f64 = genes.iter().zip(&fixed).filter(|(_, &f)| !f).map(|(&(_, s), _)| s).sum();
        let w: Vec<f64> = genes
            .iter()
            .zip(&fixed)
            .map(
                |(&(i, s), &f)| {
                    if f {
                        upper[i]
                    } else {
                        lower[i] + if total > 0.0 { s * free_mass / total } else { 0.0 }
                    }
                },
            )
            .collect();
        let over: Vec<usize> = (0..genes.len()).filter(|&a| !fixed[a] && w[a] > upper[genes[a].0] + 1e-12).collect();
        if over.is_empty() || over.len() + fixed.iter().filter(|&&f| f).count() == genes.len() {
            return w;
        }
        over.into_iter().for_each(|a| fixed[a] = true);
    }
}

fn evaluate(portfolio: &Portfolio, lambda: f64, genes: Vec<(usize, f64)>) -> Member {
    let assets: Vec<usize> = genes.iter().map(|g| g.0).collect();
    let w = weights(portfolio, &genes);
    let r = portfolio.expected_return(&assets, &w);
    let v = portfolio.variance(&assets, &w);
    let excess: f64 = portfolio
        .constraints
        .sectors
        .iter()
        .map(|s| {
            (assets.iter().zip(&w).filter(|(i, _)| s.assets.contains(i)).map(|(_, w)| w).sum::<f64>() - s.max).max(0.0)
        })
        .sum::<f64>()
        + portfolio.constraints.costs.as_ref().map_or(0.0, |c| (c.cost(&assets, &w) - c.budget).max(0.0));
    Member { genes, fitness: lambda * v - (1.0 - lambda) * r + excess }
}

fn random_member(portfolio: &Portfolio, lambda: f64, k: usize, rng: &mut Xoshiro256PlusPlus) -> Member {
    let mut assets: Vec<usize> = (0..portfolio.num_assets()).collect();
    assets.shuffle(rng);
    let mut genes: Vec<(usize, f64)> = assets[..k].iter().map(|&i| (i, rng.gen::<f64>())).collect();
    genes.sort_by_key(|g| g.0);
    evaluate(portfolio, lambda, genes)
}

fn tournament<'a>(population: &'a [Member], rng: &mut Xoshiro256PlusPlus) -> &'a Member {
    let (a, b) = (&population[rng.gen_range(0..population.len())], &population[rng.gen_range(0..population.len())]);
    if a.fitness <= b.fitness {
        a
    } else {
        b
    }
}

/// The best member found for `lambda` with K held assets.
pub fn chang_ga(portfolio: &Portfolio, lambda: f64, k: usize, config: &GaConfig, seed: u64) -> Option<Allocation> {
    let n = portfolio.num_assets();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6a09_e667_f3bc_c908);
    let mut population: Vec<Member> =
        (0..config.population.max(2)).map(|_| random_member(portfolio, lambda, k, &mut rng)).collect();
    for _ in 0..config.evaluations {
        let (p, q) = (tournament(&population, &mut rng).genes.clone(), tournament(&population, &mut rng).genes.clone());
        // Uniform crossover: an asset of both parents stays (its value from either), an asset of
        // one parent stays with probability 1/2; then assets are removed or added to reach K.
        let mut child: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
        for &(i, s) in &p {
            match q.iter().find(|g| g.0 == i) {
                Some(&(_, t)) => child.push((i, if rng.gen_bool(0.5) { s } else { t })),
                None if rng.gen_bool(0.5) => child.push((i, s)),
                None => {}
            }
        }
        child.extend(q.iter().filter(|g| !p.iter().any(|h| h.0 == g.0) && rng.gen_bool(0.5)).copied());
        while child.len() > k {
            child.swap_remove(rng.gen_range(0..child.len()));
        }
        while child.len() < k {
            let i = rng.gen_range(0..n);
            if !child.iter().any(|g| g.0 == i) {
                child.push((i, rng.gen::<f64>()));
            }
        }
        let m = rng.gen_range(0..k);
        child[m].1 *= if rng.gen_bool(0.5) { 0.9 } else { 1.1 };
        child.sort_by_key(|g| g.0);
        let child = evaluate(portfolio, lambda, child);
        let worst = (0..population.len())
            .max_by(|&a, &b| population[a].fitness.total_cmp(&population[b].fitness))
            .expect("a member");
        if child.fitness < population[worst].fitness && !population.iter().any(|m| m.genes == child.genes) {
            population[worst] = child;
        }
    }
    let best = population.iter().min_by(|a, b| a.fitness.total_cmp(&b.fitness))?;
    let assets: Vec<usize> = best.genes.iter().map(|g| g.0).collect();
    let w = weights(portfolio, &best.genes);
    Some(portfolio.allocation(assets, w, &super::Goal::Tradeoff(lambda)))
}
