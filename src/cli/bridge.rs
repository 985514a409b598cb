//! The flags of `gymnasium:<id>` envs (`drl::env::gymnasium`), shared by `serve` and `train`.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// How `gymnasium:<id>` envs run (`drl::env::gymnasium`).
#[derive(Args)]
pub struct BridgeArgs {
    /// The Python interpreter with gymnasium and the simulators (default: ./.venv/bin/python,
    /// which `make simulators` fills; else python3).
    #[arg(long = "python", env = "RLSOLVER_PYTHON")]
    bridge_python: Option<PathBuf>,
    /// Python worker processes per batch of bridged envs at most (default: the cores).
    #[arg(long, env = "RLSOLVER_BRIDGE_WORKERS")]
    bridge_workers: Option<usize>,
    /// Seconds a bridged env may take for one step before its worker is restarted.
    #[arg(long, env = "RLSOLVER_BRIDGE_STEP_TIMEOUT_S", default_value_t = 30.0)]
    bridge_step_timeout_s: f64,
}

impl BridgeArgs {
    /// The bridge settings these flags give (each unset one the default).
    pub fn config(&self) -> Result<rlsolver::drl::env::gymnasium::BridgeConfig> {
        use rlsolver::drl::env::gymnasium;
        anyhow::ensure!(
            self.bridge_step_timeout_s.is_finite() && self.bridge_step_timeout_s > 0.0,
            "--bridge-step-timeout-s: a positive number of seconds"
        );
        let mut config = gymnasium::BridgeConfig::default();
        if let Some(python) = &self.bridge_python {
            config.python = python.clone();
        }
        if let Some(workers) = self.bridge_workers {
            anyhow::ensure!(workers >= 1, "--bridge-workers: at least 1");
            config.max_workers = workers;
        }
        config.step_timeout = std::time::Duration::from_secs_f64(self.bridge_step_timeout_s);
        Ok(config)
    }

    /// Every env a run can make, Gymnasium's run as these flags say.
    pub fn envs(&self) -> Result<rlsolver::drl::env::Envs> {
        Ok(rlsolver::problems::envs(self.config()?))
    }
}
