//! The deep-RL library, ElegantRL's Net-Agent-Env-Run split: `env` steps batches of environments.

pub mod env;
