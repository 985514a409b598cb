//! One module a command: its flags (clap derives, flattening the library's own config structs
//! where one exists) and its `run`.

pub mod bench;
pub mod bridge;
pub mod evaluate;
pub mod generate;
pub mod list;
pub mod logging;
pub mod serve;
pub mod solve;
pub mod train;
pub mod train_policy;
