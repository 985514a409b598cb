//! Helpers of the agents' unit tests: a store's parameters, and one set of transitions written
//! both in the unit action box and in a wider one (TD3's and SAC's action-box tests).

use crate::drl::buffer::ReplayBuffer;
use tch::{nn, Kind, Tensor};

/// The unit box and the wide box [-3, 3] x [0, 4], as (low, high).
pub const UNIT: ([f32; 2], [f32; 2]) = ([-1.0, -1.0], [1.0, 1.0]);
pub const WIDE: ([f32; 2], [f32; 2]) = ([-3.0, 0.0], [3.0, 4.0]);

/// A unit-box action [.., 2] in the wide box's units.
pub fn to_wide(unit: &Tensor) -> Tensor {
    Tensor::stack(&[unit.select(1, 0) * 3.0, unit.select(1, 1) * 2.0 + 2.0], 1)
}

/// A store's parameters in the order of their names.
pub fn parameters(store: &nn::VarStore) -> Vec<f64> {
    let mut variables: Vec<(String, Tensor)> = store.variables().into_iter().collect();
    variables.sort_by(|a, b| a.0.cmp(&b.0));
    variables.iter().flat_map(|(_, t)| Vec::<f64>::try_from(t.flatten(0, -1).to_kind(Kind::Double)).unwrap()).collect()
}

/// The largest difference between the parameters of two stores of one shape.
pub fn largest_difference(a: &nn::VarStore, b: &nn::VarStore) -> f64 {
    parameters(a).iter().zip(parameters(b)).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// 32 transitions (3-d observations, rewards 0-2, none terminal) whose i-th action is
/// `action(i)` in the unit box: one buffer holds them in the unit box's units, the other in
/// `WIDE`'s.
pub fn twin_buffers(action: impl Fn(usize) -> [f32; 2]) -> (ReplayBuffer, ReplayBuffer) {
    let (mut unit, mut wide) = (ReplayBuffer::new(64, 3, 2, None), ReplayBuffer::new(64, 3, 2, None));
    for i in 0..32 {
        let obs = [i as f32 / 10.0, 1.0, -1.0];
        let a = action(i);
        unit.push(&obs, &a, (i % 3) as f32, &obs, false);
        wide.push(&obs, &[3.0 * a[0], 2.0 + 2.0 * a[1]], (i % 3) as f32, &obs, false);
    }
    (unit, wide)
}
