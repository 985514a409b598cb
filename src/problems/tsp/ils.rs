//! Iterated local search in the engine's chains (`search::moves`): each chain holds a tour at a
//! Lin-Kernighan + Or-opt local optimum over the alpha-nearest candidates (`alpha`, `lk`); a move
//! exchanges two adjacent segments within a window of the tour (a double bridge, the kick local
//! search cannot undo: Martin, Otto & Felten 1991), runs the local search from the touched cities
//! only, and accepts the result by Metropolis at a low temperature (Lourenco, Martin & Stuetzle,
//! "Iterated local search", 2003, on acceptance criteria between "better" and random walk); each
//! chain keeps its best tour, and every `merge_every` kicks the walk takes back the stretches
//! where that tour is shorter (partition crossover, `gpx`). A chain starts from a
//! nearest-neighbour tour from a random city. After the last round the chains' best tours are
//! merged the same way (`combine`).

use super::gpx;
use super::tour::{tour_length, Tour};
use super::Tsp;
use crate::search::moves::MoveSet;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

/// Search hyperparameters.
#[derive(Debug, Clone)]
pub struct IlsConfig {
    /// Kicks per chain and round.
    pub kicks_per_round: usize,
    /// The segment exchange's window: each of the two segments holds 1..=window/2 cities (and
    /// at most half the tour). Chosen at 10 s on generated E2000 and C3000, seeds 3-8,
    /// median (worst) % above LKH-3's tour: 50 gave 0.13 (0.22) and 0.24 (0.27), 100 0.07 (0.09)
    /// and 0.16 (0.24), 200 to 1,600 0.05-0.06 (0.06-0.10) and 0.10-0.13 (0.18-0.25). Short
    /// segments make a kick that Lin-Kernighan mostly undoes; long ones cost more reversals per
    /// kick (about 0.4 times as many kicks at 400 as at 50) and still pay. Checked with 400 on instances
    /// not used to choose it, seeds 0-2: a second E2000 and C3000 (generator seed 1) 0.11-0.16%
    /// and 0.01-0.23% shorter than with 50 on every seed, and lin318, pcb442, rat783 and pr1002
    /// at their optima on every seed. Concorde's kick instead (a double bridge among cities
    /// three 50-step random walks over the candidate lists apart; Applegate, Cook & Rohe 2003)
    /// gave 0.06 (0.08) and 0.12 (0.15) against this kick's 0.05 (0.08) and 0.10 (0.25), seeds 3-8.
    pub window: usize,
    /// Metropolis temperature of the acceptance, as a fraction of the mean edge length
    /// (0: better or equal only, which stagnated: pcb442 ended at 0.28% on every seed at 10 s
    /// and at 60 s). Chosen on three generated 800-city instances at 10 s, seed 0: 0.1 gave
    /// tours 0.14%, 0.02% and 0.67% shorter than 0; 0.03 was mixed.
    pub temperature: f64,
    /// Kicks between partition crossovers of the chain's best tour into its current one (`gpx`):
    /// the current tour takes back every stretch where the best one is shorter, so the
    /// Metropolis walk keeps its gains in one place while it gives up length elsewhere
    /// (0: never). Chosen at 10 s, seeds 0-2: on generated E2000 and C3000 (DIMACS classes)
    /// 64 and 256 gave median tours 0.02-0.12% shorter than none, 1024 no shorter, and resetting
    /// the walk to the best tour instead 0.01-0.07%; with 64, lin318 and pcb442 ended 0.00%
    /// (0.27%) and 0.00% (0.26%) above their optima, median (worst), and with 256 0.00% (0.00%)
    /// on both. Crossing the chains' best
    /// tours into each other's walks after every round took pr1002 from its optimum (median) to
    /// 0.14% above: the chains lost their diversity, so they stay independent. Restarting a
    /// walk from a fresh nearest-neighbour tour after 1,000 kicks without a shorter best (the
    /// merges then cross it with the best) gave C3000 at 10 s, seeds 3-8, 0.09 (0.19)% above
    /// LKH-3's tour against 0.10 (0.25)% without: within the seeds' spread, so not taken.
    pub merge_every: usize,
}

impl Default for IlsConfig {
    fn default() -> Self {
        IlsConfig { kicks_per_round: 256, window: 400, temperature: 0.1, merge_every: 256 }
    }
}

/// The nearest-neighbour tour from `start`.
pub fn nearest_neighbour(tsp: &Tsp, start: u32) -> Vec<u32> {
    let n = tsp.num_cities();
    let mut visited = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut at = start;
    visited[at as usize] = true;
    order.push(at);
    for _ in 1..n {
        // A near neighbour when one is left, else a scan.
        let next = tsp.neighbours[at as usize].iter().copied().find(|&c| !visited[c as usize]).unwrap_or_else(|| {
            (0..n as u32)
                .filter(|&c| !visited[c as usize])
                .min_by(|&a, &b| tsp.distances.get(at, a).total_cmp(&tsp.distances.get(at, b)).then(a.cmp(&b)))
                .expect("an unvisited city")
        });
        visited[next as usize] = true;
        order.push(next);
        at = next;
    }
    order
}

pub struct IteratedLocalSearch<'a> {
    tsp: &'a Tsp,
    /// Each city's Lin-Kernighan candidates with their distances.
    candidates: Vec<Vec<(u32, f64)>>,
    config: IlsConfig,
}

#[derive(Clone)]
pub struct IlsChain {
    current: Tour,
    best: Vec<u32>,
    best_length: f64,
}

impl<'a> IteratedLocalSearch<'a> {
    /// The search over each city's `candidates` for Lin-Kernighan moves.
    pub fn new(tsp: &'a Tsp, candidates: Vec<Vec<u32>>) -> Self {
        let candidates = super::lk::with_lengths(&candidates, &tsp.distances);
        IteratedLocalSearch { tsp, candidates, config: IlsConfig::default() }
    }

    /// Exchanges the adjacent segments after a random position, each of 1..=window/2 cities.
    fn kick(&self, tour: &mut Tour, rng: &mut Xoshiro256PlusPlus) {
        let n = tour.order.len();
        let half = (self.config.window / 2).clamp(1, (n - 2) / 2);
        let (first, second) = (rng.gen_range(1..=half), rng.gen_range(1..=half));
        let at = rng.gen_range(0..n);
        let d = &self.tsp.distances;
        let pos = |k: usize| (at + k) % n;
        let city = |t: &Tour, k: usize| t.order[pos(k)];
        // x [A: 1..=first] [B: first+1..=first+second] y  ->  x B A y
        let (x, a1, a_end, b1, b_end, y) = (
            city(tour, 0),
            city(tour, 1),
            city(tour, first),
            city(tour, first + 1),
            city(tour, first + second),
            city(tour, first + second + 1),
        );
        let delta =
            d.get(x, b1) + d.get(b_end, a1) + d.get(a_end, y) - d.get(x, a1) - d.get(a_end, b1) - d.get(b_end, y);
        let segment: Vec<u32> = (1..=first + second).map(|k| city(tour, k)).collect();
        let rotated = segment[first..].iter().chain(&segment[..first]);
        for (k, &c) in rotated.enumerate() {
            tour.order[pos(k + 1)] = c;
            tour.position[c as usize] = pos(k + 1) as u32;
        }
        tour.length += delta;
        for c in [x, a1, a_end, b1, b_end, y] {
            tour.mark(c);
        }
    }
}

impl IteratedLocalSearch<'_> {
    /// Up to `moves` kicks, each repaired by the local search and accepted by Metropolis; past
    /// `deadline` no further kick starts (the first always runs).
    fn kicks(&self, chain: &mut IlsChain, moves: usize, rng: &mut Xoshiro256PlusPlus, deadline: Option<Instant>) {
        if self.tsp.num_cities() < 8 {
            return;
        }
        let d = &self.tsp.distances;
        for kick in 0..moves {
            if kick > 0 && deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return;
            }
            let saved = chain.current.clone();
            self.kick(&mut chain.current, rng);
            chain.current.optimize(d, &self.tsp.neighbours, Some(&self.candidates));
            let n = self.tsp.num_cities() as f64;
            let temperature = self.config.temperature * saved.length / n;
            let worse = chain.current.length - saved.length;
            let accept = worse <= 1e-7 || (temperature > 0.0 && rng.gen::<f64>() < (-worse / temperature).exp());
            if !accept {
                chain.current = saved;
            } else if chain.current.length < chain.best_length - 1e-7 {
                // The current tour with the stretches where the best one is shorter.
                let merged = gpx::partition_crossover(&chain.current.order, &chain.best, d);
                chain.best = merged.map_or_else(|| chain.current.order.clone(), |(child, _)| child);
                // Exact again (the deltas add up rounding), so that incumbents are as reported.
                chain.best_length = tour_length(&chain.best, d);
            }
            if self.config.merge_every > 0 && (kick + 1) % self.config.merge_every == 0 {
                let best = chain.best.clone();
                self.take_from(chain, &best);
            }
        }
    }

    /// The chain's current tour with every stretch where `other` is shorter, at a local optimum.
    fn take_from(&self, chain: &mut IlsChain, other: &[u32]) {
        let d = &self.tsp.distances;
        let Some((child, gain)) = gpx::partition_crossover(&chain.current.order, other, d) else { return };
        let mut current = Tour::new(child, d);
        debug_assert!((current.length - (chain.current.length - gain)).abs() < 1e-6 * current.length);
        // The local search looks again at the cities whose tour neighbours changed.
        let old = &chain.current;
        for c in 0..self.tsp.num_cities() as u32 {
            let (p, q) = (current.prev(c), current.next(c));
            if !((p == old.prev(c) && q == old.next(c)) || (p == old.next(c) && q == old.prev(c))) {
                current.mark(c);
            }
        }
        current.optimize(d, &self.tsp.neighbours, Some(&self.candidates));
        chain.current = current;
        if chain.current.length < chain.best_length - 1e-7 {
            chain.current.length = tour_length(&chain.current.order, d);
            chain.best.clone_from(&chain.current.order);
            chain.best_length = chain.current.length;
        }
    }
}

impl MoveSet for IteratedLocalSearch<'_> {
    type Chain = IlsChain;
    type Solution = Vec<u32>;

    fn num_variables(&self) -> usize {
        self.tsp.num_cities()
    }

    fn moves_per_round(&self) -> usize {
        self.config.kicks_per_round
    }

    /// A kick moves up to `window` cities and Lin-Kernighan repairs around them: 0.2-0.3 ms on
    /// generated C3000, thousands of single flips' time. Counted as `window` flips, two
    /// chains' 256 kicks pass the thread pool's threshold at any window above 40; counted as
    /// one, the chains would take turns on one core (half a single chain's rounds).
    fn move_cost(&self) -> usize {
        self.config.window.max(1)
    }

    fn start(&self, _chain: usize, rng: &mut Xoshiro256PlusPlus) -> IlsChain {
        let start = rng.gen_range(0..self.tsp.num_cities() as u32);
        let mut current = Tour::new(nearest_neighbour(self.tsp, start), &self.tsp.distances);
        current.mark_all();
        current.optimize(&self.tsp.distances, &self.tsp.neighbours, Some(&self.candidates));
        IlsChain { best: current.order.clone(), best_length: current.length, current }
    }

    fn advance(&self, chain: &mut IlsChain, moves: usize, rng: &mut Xoshiro256PlusPlus) {
        self.kicks(chain, moves, rng, None);
    }

    fn advance_until(&self, chain: &mut IlsChain, moves: usize, rng: &mut Xoshiro256PlusPlus, deadline: Instant) {
        self.kicks(chain, moves, rng, Some(deadline));
    }

    fn best(&self, chain: &IlsChain) -> (Vec<u32>, f64) {
        (chain.best.clone(), chain.best_length)
    }

    /// The shortest tour takes, from each other chain's best in turn, every stretch where that
    /// one is shorter (partition crossover), back at a local optimum each time: LKH's merging of
    /// its runs' tours, once, so that the chains keep their diversity until the end. Small and
    /// cheap: at 10 s on generated C3000, E2000 and a second C3000 (seeds 3-8, two chains) it
    /// shortened 3 answers of 18 (two by 0.015%) and left the others as they were.
    fn combine(&self, bests: &[(Vec<u32>, f64)]) -> Option<(Vec<u32>, f64)> {
        let (first, rest) = bests.split_first()?;
        let mut chain = IlsChain {
            current: Tour::new(first.0.clone(), &self.tsp.distances),
            best: first.0.clone(),
            best_length: first.1,
        };
        for (other, _) in rest {
            self.take_from(&mut chain, other);
        }
        (chain.best_length < first.1 - 1e-7).then_some((chain.best, chain.best_length))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tour::is_permutation;
    use super::super::{Distances, Metric};
    use super::*;
    use rand::SeedableRng;

    /// `n` cities drawn uniformly from a 10,000-square (EUC_2D).
    fn uniform_cities(n: usize, rng: &mut Xoshiro256PlusPlus) -> Tsp {
        let xy: Vec<(f64, f64)> = (0..n).map(|_| (rng.gen_range(0.0..1e4), rng.gen_range(0.0..1e4))).collect();
        Tsp::new(Distances::Coordinates { xy, metric: Metric::Euc2d }, (0..n as i64).collect()).unwrap()
    }

    /// The search over each city's five nearest neighbours.
    fn five_nearest(tsp: &Tsp) -> IteratedLocalSearch<'_> {
        IteratedLocalSearch::new(tsp, tsp.neighbours.iter().map(|list| list[..5].to_vec()).collect())
    }

    #[test]
    fn merged_walks_hold_tours_scored_exactly_and_never_lose_to_the_walk_alone() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let tsp = uniform_cities(400, &mut rng);
        let search = five_nearest(&tsp);
        let d = &tsp.distances;
        let mut chain = search.start(0, &mut rng);
        let mut shortened = 0;
        for _ in 0..40 {
            search.advance(&mut chain, 40, &mut rng);
            let (best, current) = (chain.best.clone(), chain.current.length);
            search.take_from(&mut chain, &best);
            assert!(is_permutation(&chain.best) && is_permutation(&chain.current.order), "a permutation");
            assert!((tour_length(&chain.best, d) - chain.best_length).abs() < 1e-6);
            assert!((tour_length(&chain.current.order, d) - chain.current.length).abs() < 1e-6 * current);
            assert!(chain.current.length <= current + 1e-6, "{} > {current}", chain.current.length);
            assert!(chain.best_length <= tour_length(&best, d) + 1e-6);
            shortened += usize::from(chain.current.length < current - 1e-6);
        }
        assert!(shortened > 0, "no merge shortened the walk");
    }

    /// Past its deadline a round makes its first kick only; before it, every kick: the same
    /// tours as `advance` with as many kicks from the same random stream.
    #[test]
    fn a_round_past_its_deadline_makes_one_kick_and_one_before_it_makes_them_all() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let tsp = uniform_cities(300, &mut rng);
        let search = five_nearest(&tsp);
        let start = search.start(0, &mut Xoshiro256PlusPlus::seed_from_u64(5));
        let run = |kicks: usize, deadline: Option<Instant>| {
            let (mut chain, mut rng) = (start.clone(), Xoshiro256PlusPlus::seed_from_u64(6));
            match deadline {
                Some(deadline) => search.advance_until(&mut chain, kicks, &mut rng, deadline),
                None => search.advance(&mut chain, kicks, &mut rng),
            }
            (chain.current.order, chain.best)
        };
        let now = Instant::now();
        let far = now + std::time::Duration::from_secs(3600);
        assert_eq!(run(50, Some(now)), run(1, None), "past the deadline: one kick");
        assert_eq!(run(50, Some(far)), run(50, None), "before it: all of them");
        assert_ne!(run(50, None), run(1, None), "fifty kicks moved the tour further than one");
    }

    #[test]
    fn the_chains_best_tours_combine_into_a_shorter_one_scored_exactly() {
        let mut shorter = 0;
        for seed in 0..3 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let tsp = uniform_cities(600, &mut rng);
            let search = five_nearest(&tsp);
            let mut bests: Vec<(Vec<u32>, f64)> = (0..3)
                .map(|_| {
                    let mut chain = search.start(0, &mut rng);
                    search.advance(&mut chain, 20, &mut rng);
                    search.best(&chain)
                })
                .collect();
            bests.sort_by(|a, b| a.1.total_cmp(&b.1));
            let Some((tour, length)) = search.combine(&bests) else { continue };
            assert!(is_permutation(&tour));
            assert!((tour_length(&tour, &tsp.distances) - length).abs() < 1e-6, "length as reported");
            assert!(length < bests[0].1, "{length} not below the shortest chain's {}", bests[0].1);
            shorter += 1;
        }
        assert!(shorter > 0, "no combination was shorter than every chain's best");
    }
}
