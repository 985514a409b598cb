//! Contraction trees: a binary tree whose leaves are the network's tensors, each inner node the
//! pairwise contraction of its children. Costs follow the README of `shared/data/tnco`:
//! contracting A and B costs the product of the sizes of the indices of A and B (union), and the
//! result keeps the indices still carried by a tensor outside the subtree or by the output.
//! Everything is kept in log2 (sizes can pass 2^1000); the total is summed with `log2_add`.

use super::Network;
use serde_json::{json, Value};

/// A node's open indices: (index, how many of its subtree's leaves carry it), sorted by index.
pub type Legs = Vec<(u32, u32)>;

/// log2(2^a + 2^b), exact for any magnitudes.
pub fn log2_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi + (1.0 + (lo - hi).exp2()).log2()
}

/// log2(2^a - 2^b) for a >= b (NEG_INFINITY when equal).
pub fn log2_sub(a: f64, b: f64) -> f64 {
    if b == f64::NEG_INFINITY {
        return a;
    }
    let rest = 1.0 - (b - a).exp2();
    if rest <= 0.0 {
        f64::NEG_INFINITY
    } else {
        a + rest.log2()
    }
}

impl Network {
    /// The legs of a leaf.
    pub fn leaf_legs(&self, tensor: usize) -> Legs {
        self.tensors[tensor].iter().map(|&i| (i, 1)).collect()
    }

    /// Contracting `a` with `b`: (log2 of its cost, the result's legs).
    pub fn merge(&self, a: &Legs, b: &Legs) -> (f64, Legs) {
        let mut cost = 0.0;
        let mut legs = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let (index, count) = match (a.get(i), b.get(j)) {
                (Some(&(x, cx)), Some(&(y, cy))) if x == y => {
                    i += 1;
                    j += 1;
                    (x, cx + cy)
                }
                (Some(&(x, cx)), Some(&(y, _))) if x < y => {
                    i += 1;
                    (x, cx)
                }
                (Some(&(x, cx)), None) => {
                    i += 1;
                    (x, cx)
                }
                (_, Some(&(y, cy))) => {
                    j += 1;
                    (y, cy)
                }
                (None, None) => unreachable!("loop condition"),
            };
            cost += self.log2_sizes[index as usize];
            if self.output[index as usize] || count < self.carriers[index as usize] {
                legs.push((index, count));
            }
        }
        (cost, legs)
    }

    /// log2 of a tensor's size.
    pub fn size_of(&self, legs: &Legs) -> f64 {
        legs.iter().map(|&(i, _)| self.log2_sizes[i as usize]).sum()
    }
}

/// A full binary tree over n leaves: leaves 0..n, inner nodes n..2n-1 listed children first
/// (each inner node's children come before it), the last one the root.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContractionTree {
    pub leaves: usize,
    /// children[k]: the two children of inner node leaves + k.
    pub children: Vec<[u32; 2]>,
}

/// A tree's figures of merit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeCost {
    /// log2 of the total scalar multiplications.
    pub log2_flops: f64,
    /// log2 of the largest tensor (inputs included).
    pub log2_largest: f64,
}

impl TreeCost {
    pub fn log10_flops(&self) -> f64 {
        self.log2_flops * std::f64::consts::LOG10_2
    }
}

impl ContractionTree {
    /// The tree of a sequence of pairwise contractions in SSA numbering (leaves 0..n, the k-th
    /// contraction's result n + k), as `Network::contract_in_order` and the greedy rules give.
    pub fn from_ssa(leaves: usize, pairs: Vec<[u32; 2]>) -> Self {
        debug_assert_eq!(pairs.len() + 1, leaves.max(1));
        ContractionTree { leaves, children: pairs }
    }

    /// Every node's legs and the tree's cost, evaluated bottom-up.
    pub fn evaluate(&self, network: &Network) -> (Vec<Legs>, TreeCost) {
        let mut legs: Vec<Legs> = (0..self.leaves).map(|t| network.leaf_legs(t)).collect();
        let mut largest = legs.iter().map(|l| network.size_of(l)).fold(f64::NEG_INFINITY, f64::max);
        let mut flops = f64::NEG_INFINITY;
        for &[a, b] in &self.children {
            let (cost, merged) = network.merge(&legs[a as usize], &legs[b as usize]);
            flops = log2_add(flops, cost);
            largest = largest.max(network.size_of(&merged));
            legs.push(merged);
        }
        (legs, TreeCost { log2_flops: flops, log2_largest: largest })
    }

    pub fn cost(&self, network: &Network) -> TreeCost {
        self.evaluate(network).1
    }

    /// opt_einsum's path: each step the positions (i < j) of the two operands in the current
    /// operand list, which then drops them and appends their result.
    pub fn linear_path(&self) -> Vec<[usize; 2]> {
        let mut operands: Vec<u32> = (0..self.leaves as u32).collect();
        let mut path = Vec::with_capacity(self.children.len());
        for (k, &[a, b]) in self.children.iter().enumerate() {
            let i = operands.iter().position(|&x| x == a).expect("operand is live");
            let j = operands.iter().position(|&x| x == b).expect("operand is live");
            let (i, j) = (i.min(j), i.max(j));
            operands.remove(j);
            operands.remove(i);
            operands.push((self.leaves + k) as u32);
            path.push([i, j]);
        }
        path
    }

    /// The tree as nested pairs of leaf ids, e.g. [[0, 1], [2, [3, 4]]].
    pub fn nested(&self) -> Value {
        if self.children.is_empty() {
            return json!(0);
        }
        let mut built: Vec<Value> = (0..self.leaves).map(|t| json!(t)).collect();
        for &[a, b] in &self.children {
            let pair = json!([built[a as usize].take(), built[b as usize].take()]);
            built.push(pair);
        }
        built.pop().expect("a root")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logarithmic_sums_are_exact_across_magnitudes() {
        assert!((log2_add(3.0, 3.0) - 4.0).abs() < 1e-12);
        assert!((log2_add(1000.0, 0.0) - 1000.0).abs() < 1e-12);
        assert!((log2_add(f64::NEG_INFINITY, 5.0) - 5.0).abs() < 1e-12);
        assert!((log2_sub(4.0, 3.0) - 3.0).abs() < 1e-12);
        assert_eq!(log2_sub(2.0, 2.0), f64::NEG_INFINITY);
    }
}
