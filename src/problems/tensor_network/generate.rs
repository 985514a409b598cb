//! Random quantum-circuit tensor networks, as the Sycamore files are built: qubits on a grid,
//! each cycle one of four coupler patterns (a perfect-as-possible matching of horizontal or
//! vertical neighbours, as Sycamore's ABCD), in random order per run; every two-qubit gate is a
//! tensor whose legs join the previous and next gate on each of its qubits (dimension 2), the
//! product-state ends absorbed into the first and last gates, so the network closes to a scalar.
//! Single-qubit gates do not change the structure and are left out.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::{json, Value};

/// The couplers of pattern `k` (0..4) on a grid of `cols` columns holding `qubits` qubits.
fn pattern(k: usize, qubits: usize, cols: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for q in 0..qubits {
        let (r, c) = (q / cols, q % cols);
        let partner = if k < 2 {
            // Horizontal: columns c, c + 1 with (c + r + k) even.
            ((c + r + k).is_multiple_of(2) && c + 1 < cols).then_some(q + 1)
        } else {
            // Vertical: rows r, r + 1 with (r + c + k) even.
            (r + c + k).is_multiple_of(2).then_some(q + cols)
        };
        if let Some(p) = partner.filter(|&p| p < qubits) {
            pairs.push((q, p));
        }
    }
    pairs
}

/// The einsum JSON (`inputs`, `output` empty, `size_dict`) of a random circuit with `qubits`
/// qubits on a near-square grid and `cycles` cycles.
pub fn random_circuit(qubits: usize, cycles: usize, seed: u64) -> Value {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let cols = (qubits as f64).sqrt().ceil().max(1.0) as usize;
    let mut order: Vec<usize> = (0..4).collect();
    order.shuffle(&mut rng);
    // Each gate's legs, and the gate last applied to each qubit with the label of its open leg.
    let mut gates: Vec<Vec<String>> = Vec::new();
    let mut last: Vec<Option<usize>> = vec![None; qubits];
    let mut next_label = 0usize;
    for cycle in 0..cycles {
        for (a, b) in pattern(order[cycle % 4], qubits, cols) {
            let gate = gates.len();
            let mut legs = Vec::new();
            for q in [a, b] {
                if let Some(previous) = last[q] {
                    let label = format!("i{next_label}");
                    next_label += 1;
                    gates[previous].push(label.clone());
                    legs.push(label);
                }
                last[q] = Some(gate);
            }
            gates.push(legs);
        }
    }
    // A gate whose qubits both start and end there has no legs; such gates are scalars and dropped.
    gates.retain(|legs| !legs.is_empty());
    let size_dict: serde_json::Map<String, Value> = (0..next_label).map(|i| (format!("i{i}"), json!(2))).collect();
    json!({"inputs": gates, "output": [], "size_dict": size_dict})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_joins_two_gates_and_patterns_are_matchings() {
        for k in 0..4 {
            let pairs = pattern(k, 20, 5);
            let mut used = [0; 20];
            pairs.iter().for_each(|&(a, b)| {
                used[a] += 1;
                used[b] += 1;
            });
            assert!(used.iter().all(|&u| u <= 1), "pattern {k}");
            assert!(pairs.len() >= 6, "pattern {k}: {pairs:?}");
        }
        let network = random_circuit(20, 8, 3);
        let mut count = std::collections::HashMap::new();
        for legs in network["inputs"].as_array().unwrap() {
            let legs = legs.as_array().unwrap();
            assert!(legs.len() <= 4);
            for l in legs {
                *count.entry(l.as_str().unwrap().to_string()).or_insert(0) += 1;
            }
        }
        assert!(count.values().all(|&c| c == 2));
        assert_eq!(count.len(), network["size_dict"].as_object().unwrap().len());
    }
}
