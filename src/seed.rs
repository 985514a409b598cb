//! Seeded randomness shared by the search, the problems and the deep-RL code. libtorch's
//! process-wide generator, drawn from under a lock: what every policy's initial weights are made
//! with, so that equal seeds give equal weights while other runs share the process (the search's
//! Ising policy, the problems' supervised policies and the deep-RL agents). And counter-based
//! uniforms on tensors, which need no generator at all.

use std::sync::Mutex;

static TORCH_SEED: Mutex<()> = Mutex::new(());

/// Runs `build` with libtorch's generator seeded by `seed`, holding the process-wide lock so that
/// no other build draws in between.
pub fn seeded<T>(seed: u64, build: impl FnOnce() -> T) -> T {
    let _guard = TORCH_SEED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    tch::manual_seed(seed as i64);
    build()
}

/// Uniform numbers in [0, 1) from a counter-based hash (splitmix64 finalizer) of
/// (seed, counter, element index): seeded, identical on every device, and free of torch's
/// process-global generator, so concurrent solves stay reproducible.
pub fn hashed_uniform(index: &tch::Tensor, seed: u64, counter: u64) -> tch::Tensor {
    let offset = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(counter.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut z = index + offset as i64;
    z = z.bitwise_xor_tensor(&z.bitwise_right_shift_tensor_scalar(30)) * (0xBF58_476D_1CE4_E5B9u64 as i64);
    z = z.bitwise_xor_tensor(&z.bitwise_right_shift_tensor_scalar(27)) * (0x94D0_49BB_1331_11EBu64 as i64);
    z = z.bitwise_xor_tensor(&z.bitwise_right_shift_tensor_scalar(31));
    z.bitwise_and((1i64 << 24) - 1).to_kind(tch::Kind::Float) / (1u64 << 24) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind, Tensor};

    fn draw(seed: u64) -> Vec<f32> {
        seeded(seed, || Vec::<f32>::try_from(Tensor::randn([64], (Kind::Float, Device::Cpu))).unwrap())
    }

    #[test]
    fn builds_racing_on_other_threads_draw_what_they_draw_alone() {
        let alone: Vec<Vec<f32>> = (0..8).map(draw).collect();
        std::thread::scope(|scope| {
            for (seed, expected) in alone.iter().enumerate() {
                scope.spawn(move || {
                    for _ in 0..20 {
                        assert_eq!(&draw(seed as u64), expected, "seed {seed}");
                    }
                });
            }
        });
        assert_ne!(alone[0], alone[1]);
    }
}
