//! Slicing under a memory bound (`max_intermediate_log2`): fixing an index to each of its values
//! splits the contraction into that many independent ones, each on the network without the
//! index, so no intermediate carries it. The total cost is the product of the sliced sizes times
//! the sliced network's cost. Indices are chosen greedily, as cotengra's `SliceFinder` does by
//! default: while the largest intermediate exceeds the bound, slice the index of that
//! intermediate whose slicing gives the lowest total cost (ties: the lowest index).

use super::tree::{ContractionTree, TreeCost};
use super::Network;

/// A tree's slicing and its costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Slicing {
    /// The sliced indices, in the order chosen.
    pub indices: Vec<u32>,
    /// log2 of the number of slices (the product of the sliced sizes).
    pub log2_slices: f64,
    /// The cost of one slice (its largest intermediate is within the bound when one was met).
    pub per_slice: TreeCost,
}

impl Slicing {
    /// log2 of the multiplications over all slices.
    pub fn log2_flops(&self) -> f64 {
        self.log2_slices + self.per_slice.log2_flops
    }
}

impl Network {
    /// The network with `indices` at size 1 (one slice of it).
    pub fn sliced(&self, indices: &[u32]) -> Network {
        let mut network = self.clone();
        indices.iter().for_each(|&i| network.log2_sizes[i as usize] = 0.0);
        network
    }

    /// The greedy slicing of `tree` down to `bound` (log2 of the largest intermediate); stops
    /// early when no summed index is left on the largest intermediate.
    pub fn slice(&self, tree: &ContractionTree, bound: f64) -> Slicing {
        let mut indices: Vec<u32> = Vec::new();
        let mut log2_slices = 0.0;
        loop {
            let network = self.sliced(&indices);
            let (legs, cost) = tree.evaluate(&network);
            if cost.log2_largest <= bound + 1e-9 {
                return Slicing { indices, log2_slices, per_slice: cost };
            }
            let largest =
                legs.iter().max_by(|a, b| network.size_of(a).total_cmp(&network.size_of(b))).expect("a tree has nodes");
            let candidates: Vec<u32> = largest
                .iter()
                .map(|&(i, _)| i)
                .filter(|&i| !self.output[i as usize] && network.log2_sizes[i as usize] > 0.0)
                .collect();
            let scored = candidates.iter().map(|&i| {
                let mut trial = indices.clone();
                trial.push(i);
                let flops = tree.cost(&self.sliced(&trial)).log2_flops + log2_slices + self.log2_sizes[i as usize];
                (flops, i)
            });
            match scored.min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))) {
                Some((_, i)) => {
                    log2_slices += self.log2_sizes[i as usize];
                    indices.push(i);
                }
                None => return Slicing { indices, log2_slices, per_slice: cost },
            }
        }
    }
}
