//! Benchmarks that write markdown reports: `maxcut` (solution quality against time) and `drl`
//! (environment throughput and time to threshold, against Stable-Baselines3 and gymnasium).

pub mod drl;
pub mod maxcut;

pub use maxcut::{run_maxcut, BenchConfig};
