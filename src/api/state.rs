//! Shared state of every handler.

use crate::problems::Limits;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Server settings beyond the instance limits.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub limits: Limits,
    /// Largest request body in bytes.
    pub max_body_bytes: usize,
    /// Solves running at once; more get 503 with Retry-After.
    pub max_concurrent_solves: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { limits: Limits::default(), max_body_bytes: 64 << 20, max_concurrent_solves: 2 }
    }
}

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<ServerConfig>,
    pub solve_slots: Arc<Semaphore>,
    ready: Arc<AtomicBool>,
}

impl AppState {
    pub fn new(config: ServerConfig) -> Self {
        AppState {
            solve_slots: Arc::new(Semaphore::new(config.max_concurrent_solves.max(1))),
            config: Arc::new(config),
            ready: Arc::new(AtomicBool::new(true)),
        }
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// Called when shutdown starts, so that load balancers stop sending work.
    pub fn set_draining(&self) {
        self.ready.store(false, Ordering::SeqCst);
    }
}
