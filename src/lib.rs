//! rlsolver: near-optimal solutions for combinatorial and continuous optimization problems, found
//! by learned policies plus parallel Hamiltonian-regularized search for minimum-energy states.

pub mod api;
pub mod drl;
pub mod hooks;
pub mod jobs;
pub mod models;
pub mod policies;
pub mod problems;
pub mod program;
pub mod search;
pub mod seed;
pub mod store;
pub mod suggest;
pub mod supervised;
