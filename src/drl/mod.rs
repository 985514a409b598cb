//! The deep-RL library, ElegantRL's Net-Agent-Env-Run split: `net` builds networks, `agents`
//! own nets and optimizers (`act`, `update`), `env` steps batches of environments, `run`
//! alternates them and evaluates. Shared pieces live once in `buffer` and `common`.

pub mod agents;
pub mod buffer;
pub mod common;
pub mod env;
pub mod hooks;
pub mod hterm;
pub mod marl;
pub mod net;
pub mod run;

/// Every algorithm's name, single-agent first.
pub fn algorithm_names() -> Vec<&'static str> {
    run::ALGORITHMS.iter().chain(marl::run::ALGORITHMS).map(|a| a.0).collect()
}
