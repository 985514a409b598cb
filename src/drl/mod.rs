//! The deep-RL library, ElegantRL's Net-Agent-Env-Run split: `net` builds networks, `agents`
//! own nets and optimizers (`act`, `update`), `env` steps batches of environments, `run` (and
//! `marl::run`) alternates them, with `monitor` evaluating and checkpointing once for both. The
//! `algorithms` table names every algorithm once; `hyper` declares hyperparameter ranges,
//! `optim` and `random` keep optimizer moments and random streams ours to save, `state` writes
//! whole-run checkpoints. Shared pieces live once in `buffer` and `common`.

pub mod agents;
pub mod algorithms;
pub mod buffer;
pub mod common;
pub mod env;
pub mod hooks;
pub mod hterm;
pub mod hyper;
pub mod marl;
pub mod monitor;
pub mod net;
pub mod optim;
pub mod random;
pub mod run;
pub mod state;

/// Every algorithm's name, single-agent first.
pub fn algorithm_names() -> Vec<&'static str> {
    algorithms::names()
}
