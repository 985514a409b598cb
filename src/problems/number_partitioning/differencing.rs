//! The differencing baselines: Karmarkar and Karp's heuristic ("The differencing method of set
//! partitioning", 1982) and Korf's complete version, CKK ("A complete anytime algorithm for
//! number partitioning", AIJ 106, 1998).
//!
//! CKK searches depth first: at each node the two largest numbers are either replaced by their
//! difference (opposite sides, KK's choice, tried first) or by their sum (same side); a node
//! whose largest number is at least the sum of the others is a leaf (that number against all
//! the others). Nodes keep only values and an id; each combination appends one entry to a stack
//! arena, so the sides are rebuilt only when a leaf improves the best.

use std::collections::BinaryHeap;
use std::time::Instant;

/// Sum over side 1 minus sum over side 0, exactly.
pub fn residue(numbers: &[i64], sides: &[bool]) -> i128 {
    numbers.iter().zip(sides).map(|(&a, &s)| if s { a as i128 } else { -(a as i128) }).sum()
}

/// Karmarkar-Karp: repeatedly replace the two largest numbers by their difference (they go on
/// opposite sides); the sides come back from the differencing tree.
pub fn karmarkar_karp(numbers: &[i64]) -> Vec<bool> {
    let n = numbers.len();
    let mut heap: BinaryHeap<(i128, usize)> = numbers.iter().enumerate().map(|(i, &a)| (a as i128, i)).collect();
    let mut links: Vec<Vec<usize>> = vec![Vec::new(); n];
    while heap.len() > 1 {
        let (a, i) = heap.pop().expect("two entries");
        let (b, j) = heap.pop().expect("two entries");
        links[i].push(j);
        links[j].push(i);
        heap.push((a - b, i));
    }
    // Linked items sit on opposite sides: 2-colour the tree.
    let mut sides = vec![false; n];
    let mut seen = vec![false; n];
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            for &u in &links[v] {
                if !seen[u] {
                    seen[u] = true;
                    sides[u] = !sides[v];
                    stack.push(u);
                }
            }
        }
    }
    sides
}

/// A combined number: the two groups it was made of and whether they sit on opposite sides.
#[derive(Clone, Copy)]
struct Combination {
    left: u32,
    right: u32,
    opposite: bool,
}

struct Ckk<'a> {
    numbers: &'a [i64],
    deadline: Instant,
    stop_at: u128,
    arena: Vec<Combination>,
    best: (u128, Vec<bool>),
    visited: u64,
    out_of_time: bool,
}

impl Ckk<'_> {
    /// Put group `id` and everything combined into it on `side`.
    fn place(&self, id: u32, side: bool, sides: &mut [bool]) {
        let mut stack = vec![(id, side)];
        while let Some((id, side)) = stack.pop() {
            match (id as usize).checked_sub(self.numbers.len()) {
                None => sides[id as usize] = side,
                Some(a) => {
                    let c = self.arena[a];
                    stack.push((c.left, side));
                    stack.push((c.right, side != c.opposite));
                }
            }
        }
    }

    fn done(&self) -> bool {
        self.out_of_time || self.best.0 <= self.stop_at
    }

    /// `groups` sorted by value, largest first; `total` their sum.
    fn visit(&mut self, groups: &[(i128, u32)], total: i128) {
        self.visited += 1;
        if self.visited.is_multiple_of(4096) && Instant::now() >= self.deadline {
            self.out_of_time = true;
        }
        if self.done() {
            return;
        }
        let (largest, id) = groups[0];
        let rest = total - largest;
        if groups.len() == 1 || largest >= rest {
            let difference = (largest - rest) as u128;
            if difference < self.best.0 {
                let mut sides = vec![false; self.numbers.len()];
                for (k, &(_, other)) in groups.iter().enumerate() {
                    self.place(other, k == 0, &mut sides);
                }
                self.best = (difference, sides);
            }
            return;
        }
        let (second, second_id) = groups[1];
        let mut child: Vec<(i128, u32)> = Vec::with_capacity(groups.len() - 1);
        for (value, opposite) in [(largest - second, true), (largest + second, false)] {
            let combined = (self.numbers.len() + self.arena.len()) as u32;
            self.arena.push(Combination { left: id, right: second_id, opposite });
            child.clear();
            let at = groups[2..].partition_point(|g| g.0 > value);
            child.extend_from_slice(&groups[2..2 + at]);
            child.push((value, combined));
            child.extend_from_slice(&groups[2 + at..]);
            let child_total = total - largest - second + value;
            self.visit(&child, child_total);
            self.arena.pop();
            if self.done() {
                return;
            }
        }
    }
}

/// CKK until `deadline` or a difference at most `stop_at`: the best sides found and whether the
/// search finished (the tree exhausted, so the difference is optimal, or `stop_at` reached).
pub fn complete_karmarkar_karp(numbers: &[i64], deadline: Instant, stop_at: u128) -> (Vec<bool>, bool) {
    let kk = karmarkar_karp(numbers);
    let residue = residue(numbers, &kk);
    let mut groups: Vec<(i128, u32)> = numbers.iter().enumerate().map(|(i, &a)| (a as i128, i as u32)).collect();
    groups.sort_by_key(|&(value, id)| (std::cmp::Reverse(value), id));
    let total = groups.iter().map(|g| g.0).sum();
    let mut search = Ckk {
        numbers,
        deadline,
        stop_at,
        arena: Vec::with_capacity(numbers.len()),
        best: (residue.unsigned_abs(), kk),
        visited: 0,
        out_of_time: false,
    };
    // The search recurses once per combination along a path (up to n deep): give it the stack.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size((1 << 20) + 1024 * numbers.len())
            .spawn_scoped(scope, || search.visit(&groups, total))
            .expect("CKK thread")
            .join()
            .expect("CKK search")
    });
    let finished = !search.out_of_time || search.best.0 <= stop_at;
    (search.best.1, finished)
}
