//! VDN (Sunehag et al. 2018, "Value-decomposition networks for cooperative multi-agent
//! learning"): Q_tot = sum_i Q_i(o_i, a_i), trained end to end on the team reward. It is QMIX
//! with the sum in place of the monotonic mixing network, so the learner is `qmix::Qmix` with
//! this preset.

use super::qmix::{Mixer, QmixConfig};

/// QMIX's schedule (PyMARL, EPyMARL and PyMARL2 choices, see `QmixConfig::new`) with the sum mixer.
pub fn config() -> QmixConfig {
    QmixConfig::new(Mixer::Vdn)
}
