//! NuMVC (Cai, Su, Luo and Sattar, "NuMVC: An efficient local search algorithm for minimum
//! vertex cover", JAIR 46, 2013): the dedicated move set of unweighted covers, independent sets
//! and cliques. A chain holds a candidate cover C; whenever C covers every edge it is recorded
//! and its vertex of highest dscore leaves, so the chain looks for a cover one smaller. Each
//! step is the paper's two-stage exchange (Algorithm 2): remove the vertex of C with the highest
//! dscore (ties: the oldest), then add an endpoint of a random uncovered edge whose
//! configuration changed since it left (the higher dscore, ties oldest; the vertex just added is
//! not removed by the next exchange, as in the authors' code). Every uncovered edge
//! gains weight 1 per step; once the mean weight reaches gamma, every weight becomes
//! floor(rho * w) (forgetting). dscore(v) is the change in the weight of covered edges when v
//! joins (v outside C) or leaves (v in C, then <= 0).

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The paper's settings (section 5.1).
#[derive(Debug, Clone, Copy)]
pub struct NumvcParams {
    /// gamma = `gamma_per_vertex` * |V|: the mean edge weight that triggers forgetting (0.5).
    pub gamma_per_vertex: f64,
    /// rho: the share of its weight an edge keeps when forgetting (0.3).
    pub rho: f64,
}

impl Default for NumvcParams {
    fn default() -> Self {
        NumvcParams { gamma_per_vertex: 0.5, rho: 0.3 }
    }
}

/// Keys per block of the removal scan: the maximum is taken per block (vectorised), so finding
/// where it is reads one block, not half the array.
const KEY_CHUNK: usize = 64;

/// The largest key and the first block holding it.
fn max_key(keys: &[i64]) -> (i64, usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above); the function is safe code compiled
        // for it. Why: x86-64's baseline (SSE2) has no 64-bit compare, and this scan is a third
        // of a NuMVC step.
        return unsafe { max_key_avx2(keys) };
    }
    max_key_portable(keys)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn max_key_avx2(keys: &[i64]) -> (i64, usize) {
    max_key_portable(keys)
}

#[inline(always)]
fn max_key_portable(keys: &[i64]) -> (i64, usize) {
    let mut best = (i64::MIN, 0);
    for (c, chunk) in keys.chunks(KEY_CHUNK).enumerate() {
        let top = chunk.iter().copied().fold(i64::MIN, i64::max);
        if top > best.0 {
            best = (top, c);
        }
    }
    best
}

/// The graph a chain walks on, in compressed rows: vertex v's incidences are the slots
/// `start[v]..start[v + 1]`, each with its neighbour and edge id. A chain keeps an edge's weight
/// in both of its slots, so that an exchange reads its vertex's weights in one contiguous run
/// (a weight per edge id was a scattered read per neighbour, and add and remove were half of a
/// step); the few uncovered edges pay two writes per weight change instead.
pub struct CoverGraph {
    edges: Vec<(u32, u32)>,
    start: Vec<u32>,
    neighbour: Vec<u32>,
    slot_edge: Vec<u32>,
    /// Each edge's two slots: in its first end's row, then in its second's.
    edge_slots: Vec<(u32, u32)>,
    params: NumvcParams,
    /// Every dscore stays below 2^31 in magnitude (it is at most the total edge weight, which
    /// forgetting keeps under (gamma + 1) m), so a cover vertex's dscore and age pack into one
    /// i64 key and the removal choice is a single maximum.
    packed: bool,
}

impl CoverGraph {
    pub fn new(num_nodes: usize, edges: &[(u32, u32)], params: NumvcParams) -> Self {
        let mut start = vec![0u32; num_nodes + 1];
        for &(u, v) in edges {
            start[u as usize + 1] += 1;
            start[v as usize + 1] += 1;
        }
        for v in 0..num_nodes {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut neighbour = vec![0u32; 2 * edges.len()];
        let mut slot_edge = vec![0u32; 2 * edges.len()];
        let mut edge_slots = Vec::with_capacity(edges.len());
        for (e, &(u, v)) in edges.iter().enumerate() {
            let mut place = |from: u32, to: u32| {
                let slot = fill[from as usize];
                fill[from as usize] += 1;
                neighbour[slot as usize] = to;
                slot_edge[slot as usize] = e as u32;
                slot
            };
            let a = place(u, v);
            let b = place(v, u);
            edge_slots.push((a, b));
        }
        let gamma = params.gamma_per_vertex * num_nodes as f64;
        let packed = (gamma + 2.0) * edges.len() as f64 + 1.0 < f64::from(1u32 << 31);
        CoverGraph { edges: edges.to_vec(), start, neighbour, slot_edge, edge_slots, params, packed }
    }

    pub fn num_nodes(&self) -> usize {
        self.start.len() - 1
    }

    /// Vertex v's slots.
    #[inline]
    fn slots(&self, v: usize) -> std::ops::Range<usize> {
        self.start[v] as usize..self.start[v + 1] as usize
    }

    fn degree(&self, v: usize) -> usize {
        self.slots(v).len()
    }

    /// What a unit of dscore weighs in a removal key.
    #[inline]
    fn key_scale(&self) -> i64 {
        if self.packed {
            1 << 32
        } else {
            1
        }
    }
}

const COVERED: u32 = u32::MAX;

/// Takes edge `e` off the uncovered list (`position` is each edge's place there).
fn cover_edge(uncovered: &mut Vec<u32>, position: &mut [u32], e: u32) {
    let at = position[e as usize];
    let last = *uncovered.last().expect("the edge is uncovered");
    uncovered.swap_remove(at as usize);
    if last != e {
        position[last as usize] = at;
    }
    position[e as usize] = COVERED;
}

/// Puts edge `e` on the uncovered list.
fn uncover_edge(uncovered: &mut Vec<u32>, position: &mut [u32], e: u32) {
    position[e as usize] = uncovered.len() as u32;
    uncovered.push(e);
}

/// One chain's state.
#[derive(Clone)]
pub struct CoverChain {
    in_cover: Vec<bool>,
    /// The dscore of the vertices outside C; inside C it is kept in `cover_key` alone (a cover
    /// vertex's dscore is its key's high half), so that a move updates one score per neighbour
    /// in C, not two, and most neighbours are in C.
    dscore: Vec<i64>,
    conf_change: Vec<bool>,
    /// The removal key of the vertices in C, i64::MIN outside: dscore * 2^32 + (2^32 - 1 - age)
    /// when the graph is `packed` (higher dscore, then older, wins), else the dscore alone. The
    /// array `best_in_cover` scans, kept apart so that the scan is a plain maximum the compiler
    /// vectorises (the scan was half of a step).
    cover_key: Vec<i64>,
    /// Step of each vertex's last move.
    age: Vec<u64>,
    /// Edge weights by slot (both slots of an edge hold its weight).
    weight: Vec<i64>,
    total_weight: i64,
    /// Uncovered edge ids, and each edge's position there (COVERED when covered).
    uncovered: Vec<u32>,
    position: Vec<u32>,
    size: usize,
    step: u64,
    best: Vec<bool>,
    best_size: usize,
    /// The vertex added by the last exchange, which the next one may not remove (the exchange
    /// would undo itself: a just-added vertex often has the highest dscore in C).
    tabu_remove: Option<usize>,
}

impl CoverChain {
    /// A greedy cover (the vertex of highest dscore joins, random ties) with redundant vertices
    /// removed, as the paper's initialisation.
    pub fn new(graph: &CoverGraph, rng: &mut Xoshiro256PlusPlus) -> Self {
        let n = graph.num_nodes();
        let m = graph.edges.len();
        let mut chain = CoverChain {
            in_cover: vec![false; n],
            dscore: (0..n).map(|v| graph.degree(v) as i64).collect(),
            conf_change: vec![true; n],
            cover_key: vec![i64::MIN; n],
            age: vec![0; n],
            weight: vec![1; 2 * m],
            total_weight: m as i64,
            uncovered: (0..m as u32).collect(),
            position: (0..m as u32).collect(),
            size: 0,
            step: 0,
            best: vec![true; n],
            best_size: n,
            tabu_remove: None,
        };
        while !chain.uncovered.is_empty() {
            let mut pick = (i64::MIN, 0usize, 0u32);
            for v in 0..n {
                if !chain.in_cover[v] {
                    let tie: u32 = rng.gen();
                    if (chain.dscore[v], tie) > (pick.0, pick.2) {
                        pick = (chain.dscore[v], v, tie);
                    }
                }
            }
            chain.add::<false>(graph, pick.1);
        }
        for v in 0..n {
            if chain.in_cover[v] && chain.score(graph, v) == 0 {
                chain.remove::<false>(graph, v);
            }
        }
        chain.record();
        chain
    }

    pub fn best_cover(&self) -> &[bool] {
        &self.best
    }

    pub fn best_size(&self) -> usize {
        self.best_size
    }

    fn record(&mut self) {
        if self.uncovered.is_empty() && self.size < self.best_size {
            self.best.copy_from_slice(&self.in_cover);
            self.best_size = self.size;
        }
    }

    /// The removal key of a vertex in C of this dscore and age.
    fn key_of(&self, graph: &CoverGraph, dscore: i64, v: usize) -> i64 {
        if graph.packed {
            // Ages past 2^32 steps saturate (ties then go to the lower id).
            dscore * graph.key_scale() + i64::from(u32::MAX - self.age[v].min(u64::from(u32::MAX)) as u32)
        } else {
            dscore
        }
    }

    /// v's dscore, wherever it is kept.
    fn score(&self, graph: &CoverGraph, v: usize) -> i64 {
        match (self.in_cover[v], graph.packed) {
            (false, _) => self.dscore[v],
            // The age part is in [0, 2^32): the shift is the floor of the key over 2^32.
            (true, true) => self.cover_key[v] >> 32,
            (true, false) => self.cover_key[v],
        }
    }

    /// v joins C; with `TOUCH` its neighbours' configurations change (NuMVC's confChange).
    fn add<const TOUCH: bool>(&mut self, graph: &CoverGraph, v: usize) {
        self.shift::<true, TOUCH>(graph, v);
    }

    /// v leaves C; with `TOUCH` its neighbours' configurations change.
    fn remove<const TOUCH: bool>(&mut self, graph: &CoverGraph, v: usize) {
        self.shift::<false, TOUCH>(graph, v);
    }

    /// v joins C (`JOIN`) or leaves it. Each incident edge's weight moves between v's dscore and
    /// its neighbour's: a neighbour in C gains (v joins) or loses (v leaves) it; one outside
    /// loses or gains it, and their edge becomes covered or uncovered.
    fn shift<const JOIN: bool, const TOUCH: bool>(&mut self, graph: &CoverGraph, v: usize) {
        let moved = -self.score(graph, v);
        self.in_cover[v] = JOIN;
        if JOIN {
            self.size += 1;
            self.cover_key[v] = self.key_of(graph, moved, v);
        } else {
            self.size -= 1;
            self.dscore[v] = moved;
            self.cover_key[v] = i64::MIN;
        }
        let scale = graph.key_scale();
        // Local borrows: through `self` every field was reloaded per neighbour.
        let CoverChain { in_cover, dscore, cover_key, conf_change, weight, uncovered, position, .. } = self;
        // Slices of one length, not `&mut Vec`: a byte store may alias a Vec's header, never a
        // register, and one comparison of a neighbour with `n` bounds all four accesses.
        let n = in_cover.len();
        let (in_cover, dscore, cover_key, conf_change) =
            (&in_cover[..n], &mut dscore[..n], &mut cover_key[..n], &mut conf_change[..n]);
        let range = graph.slots(v);
        let (neighbours, weights, ids) =
            (&graph.neighbour[range.clone()], &weight[range.clone()], &graph.slot_edge[range]);
        for ((&u, &w), &e) in neighbours.iter().zip(weights).zip(ids) {
            let u = u as usize;
            assert!(u < n, "a neighbour id is a vertex");
            if TOUCH {
                conf_change[u] = true;
            }
            let w = if JOIN { w } else { -w };
            if in_cover[u] {
                cover_key[u] += w * scale;
            } else {
                dscore[u] -= w;
                if JOIN {
                    cover_edge(uncovered, position, e);
                } else {
                    uncover_edge(uncovered, position, e);
                }
            }
        }
    }

    /// The vertex of C with the highest dscore, ties to the oldest, then the lowest id (never
    /// `tabu_remove`): a vectorised maximum of the keys (then, unpacked, the oldest of the few
    /// that reach it).
    fn best_in_cover(&mut self, graph: &CoverGraph) -> Option<usize> {
        let hidden = self
            .tabu_remove
            .filter(|&t| self.in_cover[t])
            .map(|t| (t, std::mem::replace(&mut self.cover_key[t], i64::MIN)));
        let (top, chunk) = max_key(&self.cover_key);
        let pick = (top != i64::MIN).then(|| {
            if graph.packed {
                let at = chunk * KEY_CHUNK;
                let within = self.cover_key[at..].iter().position(|&k| k == top).expect("the maximum is there");
                return at + within;
            }
            let mut pick = usize::MAX;
            for (v, &score) in self.cover_key.iter().enumerate() {
                if score == top && (pick == usize::MAX || self.age[v] < self.age[pick]) {
                    pick = v;
                }
            }
            pick
        });
        if let Some((t, key)) = hidden {
            self.cover_key[t] = key;
        }
        pick
    }

    /// Runs `steps` exchange steps (Algorithm 2's loop body).
    pub fn advance(&mut self, graph: &CoverGraph, steps: usize, rng: &mut Xoshiro256PlusPlus) {
        let gamma = graph.params.gamma_per_vertex * graph.num_nodes() as f64;
        for _ in 0..steps {
            self.step += 1;
            if self.uncovered.is_empty() {
                self.record();
                match self.best_in_cover(graph) {
                    Some(v) => {
                        self.remove::<false>(graph, v);
                        self.age[v] = self.step;
                    }
                    None => return,
                }
                continue;
            }
            let Some(u) = self.best_in_cover(graph) else { return };
            self.remove::<true>(graph, u);
            self.conf_change[u] = false;
            self.age[u] = self.step;
            let e = self.uncovered[rng.gen_range(0..self.uncovered.len())];
            let (a, b) = graph.edges[e as usize];
            let (a, b) = (a as usize, b as usize);
            let rank = |v: usize| (self.conf_change[v], self.dscore[v], std::cmp::Reverse(self.age[v]));
            let v = if rank(a) >= rank(b) { a } else { b };
            // Aged first: joining keys v with its age.
            self.age[v] = self.step;
            self.add::<true>(graph, v);
            self.tabu_remove = Some(v);
            for k in 0..self.uncovered.len() {
                let e = self.uncovered[k] as usize;
                let (sa, sb) = graph.edge_slots[e];
                self.weight[sa as usize] += 1;
                self.weight[sb as usize] += 1;
                let (a, b) = graph.edges[e];
                self.dscore[a as usize] += 1;
                self.dscore[b as usize] += 1;
            }
            self.total_weight += self.uncovered.len() as i64;
            if !graph.edges.is_empty() && self.total_weight as f64 / graph.edges.len() as f64 >= gamma {
                self.forget(graph);
            }
            self.record();
        }
    }

    /// w := floor(rho * w) for every edge (at least 1), then every dscore from scratch.
    fn forget(&mut self, graph: &CoverGraph) {
        let rho = graph.params.rho;
        self.total_weight = 0;
        self.dscore.iter_mut().for_each(|d| *d = 0);
        for (&(a, b), &(sa, sb)) in graph.edges.iter().zip(&graph.edge_slots) {
            let w = ((self.weight[sa as usize] as f64 * rho).floor() as i64).max(1);
            self.weight[sa as usize] = w;
            self.weight[sb as usize] = w;
            self.total_weight += w;
            let (a, b) = (a as usize, b as usize);
            match (self.in_cover[a], self.in_cover[b]) {
                (false, false) => {
                    self.dscore[a] += w;
                    self.dscore[b] += w;
                }
                (true, false) => self.dscore[a] -= w,
                (false, true) => self.dscore[b] -= w,
                (true, true) => {}
            }
        }
        for v in 0..self.dscore.len() {
            self.cover_key[v] = if self.in_cover[v] { self.key_of(graph, self.dscore[v], v) } else { i64::MIN };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// dscore of every vertex, from its definition over the edge list (an edge's two slots must
    /// hold the same weight).
    fn dscores(graph: &CoverGraph, chain: &CoverChain) -> Vec<i64> {
        let mut dscore = vec![0; graph.num_nodes()];
        for (&(a, b), &(sa, sb)) in graph.edges.iter().zip(&graph.edge_slots) {
            let w = chain.weight[sa as usize];
            assert_eq!(w, chain.weight[sb as usize], "the slots of edge {a}-{b} disagree");
            assert_eq!((graph.neighbour[sa as usize], graph.neighbour[sb as usize]), (b, a));
            let (a, b) = (a as usize, b as usize);
            match (chain.in_cover[a], chain.in_cover[b]) {
                (false, false) => {
                    dscore[a] += w;
                    dscore[b] += w;
                }
                (true, false) => dscore[a] -= w,
                (false, true) => dscore[b] -= w,
                (true, true) => {}
            }
        }
        dscore
    }

    #[test]
    fn incremental_scores_match_their_definition_and_best_covers_cover() {
        // A random graph of 60 nodes and 240 edges.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut edges = std::collections::BTreeSet::new();
        while edges.len() < 240 {
            let (a, b) = (rng.gen_range(0..60u32), rng.gen_range(0..60u32));
            if a != b {
                edges.insert((a.min(b), a.max(b)));
            }
        }
        let edges: Vec<(u32, u32)> = edges.into_iter().collect();
        // A small gamma so that forgetting happens within the test.
        let graph = CoverGraph::new(60, &edges, NumvcParams { gamma_per_vertex: 0.05, rho: 0.3 });
        let mut chain = CoverChain::new(&graph, &mut rng);
        for _ in 0..50 {
            chain.advance(&graph, 37, &mut rng);
            let truth = dscores(&graph, &chain);
            let kept: Vec<i64> = (0..60).map(|v| chain.score(&graph, v)).collect();
            assert_eq!(kept, truth);
            let keys: Vec<i64> =
                (0..60).map(|v| if chain.in_cover[v] { chain.key_of(&graph, truth[v], v) } else { i64::MIN }).collect();
            assert_eq!(chain.cover_key, keys);
            assert!(graph.packed);
            let uncovered: Vec<u32> = (0..edges.len() as u32)
                .filter(|&e| {
                    let (a, b) = edges[e as usize];
                    !chain.in_cover[a as usize] && !chain.in_cover[b as usize]
                })
                .collect();
            let mut listed = chain.uncovered.clone();
            listed.sort_unstable();
            assert_eq!(listed, uncovered);
            assert!(edges.iter().all(|&(a, b)| chain.best[a as usize] || chain.best[b as usize]));
            assert_eq!(chain.best.iter().filter(|&&c| c).count(), chain.best_size);
        }
    }
}
