//! libtorch's process-wide generator, drawn from under a lock: what every policy's initial
//! weights are made with, so that equal seeds give equal weights while other runs share the
//! process (the search's Ising policy, the problems' supervised policies and the deep-RL agents).

use std::sync::Mutex;

static TORCH_SEED: Mutex<()> = Mutex::new(());

/// Runs `build` with libtorch's generator seeded by `seed`, holding the process-wide lock so that
/// no other build draws in between.
pub fn seeded<T>(seed: u64, build: impl FnOnce() -> T) -> T {
    let _guard = TORCH_SEED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    tch::manual_seed(seed as i64);
    build()
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
