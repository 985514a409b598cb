//! Ensembles of a population's final members, each measured against the leader on the same
//! fresh episodes. Model fusion: the parameter average of the best members that descend from
//! the leader's ancestor (weight averaging only makes sense between networks that share an
//! initialization; Wortsman et al. 2022, "model soups"), promoted only when it scores at least
//! as well as the leader. Weighted: the best members' actions averaged (or voted, for discrete
//! actions) with weights from their evaluation returns (`drl::ensemble`).

use super::population::{latest_per_member, PopulationRequest};
use crate::drl;
use crate::drl::env::Envs;
use crate::store::{relative_folder, Entry};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;
use tch::Tensor;

/// What a fusion measured.
#[derive(Debug, Clone, Serialize)]
pub struct FusionReport {
    /// The fused checkpoints, as `member/round`.
    pub members: Vec<String>,
    pub leader_score: f64,
    pub fused_score: f64,
    pub episodes: usize,
    pub seed: u64,
}

impl FusionReport {
    pub fn helps(&self) -> bool {
        self.members.len() >= 2 && self.fused_score >= self.leader_score
    }
}

/// Averages the policy weights of the leader and up to `k - 1` other members sharing its
/// ancestor into `out` (with the leader's config and observation statistics), then scores the
/// fusion and the leader on the same fresh episodes.
pub fn fuse(
    data_dir: &Path,
    request: &PopulationRequest,
    board: &[Entry],
    k: usize,
    out: &Path,
    envs: &Envs,
) -> Result<FusionReport> {
    let leader = board.first().context("an empty leaderboard")?;
    let ancestor = &leader.origin["ancestor"];
    let mut chosen: Vec<&Entry> = vec![leader];
    for entry in latest_per_member(board) {
        if chosen.len() >= k {
            break;
        }
        let same = entry.origin["ancestor"] == *ancestor;
        if same && !chosen.iter().any(|c| c.checkpoint == entry.checkpoint) {
            chosen.push(entry);
        }
    }
    let dirs = chosen.iter().map(|e| Ok(data_dir.join(relative_folder(&e.checkpoint)?))).collect::<Result<Vec<_>>>()?;
    std::fs::create_dir_all(out)?;
    for file in std::fs::read_dir(&dirs[0])? {
        let name = file?.file_name().into_string().unwrap_or_default();
        if !drl::run::is_policy_file(&name) {
            continue;
        }
        if name.ends_with(".safetensors") {
            average_file(&dirs, &name, &out.join(&name))?;
        } else {
            std::fs::copy(dirs[0].join(&name), out.join(&name))?;
        }
    }
    let (episodes, seed) = comparison(request, board);
    Ok(FusionReport {
        members: chosen.iter().map(|e| format!("{}/{}", e.member, e.round)).collect(),
        leader_score: score(&dirs[0], episodes, seed, envs)?,
        fused_score: score(out, episodes, seed, envs)?,
        episodes,
        seed,
    })
}

/// What a weighted ensemble measured.
#[derive(Debug, Clone, Serialize)]
pub struct WeightedReport {
    /// The members, as `member/round`, with their weights.
    pub members: Vec<String>,
    pub weights: Vec<f64>,
    pub leader_score: f64,
    pub ensemble_score: f64,
    pub episodes: usize,
    pub seed: u64,
}

/// Writes the weighted ensemble of the `k` best members (by their latest evaluation) into `out`
/// and scores it and the leader on the same fresh episodes.
pub fn weighted(
    data_dir: &Path,
    request: &PopulationRequest,
    board: &[Entry],
    k: usize,
    out: &Path,
    envs: &Envs,
) -> Result<WeightedReport> {
    let chosen: Vec<&Entry> = latest_per_member(board).into_iter().take(k).collect();
    let leader = board.first().context("an empty leaderboard")?;
    let scores: Vec<f64> = chosen.iter().map(|e| e.score).collect();
    let weights = drl::ensemble::weights_from_scores(&scores);
    std::fs::create_dir_all(out)?;
    for (i, entry) in chosen.iter().enumerate() {
        let dir = data_dir.join(relative_folder(&entry.checkpoint)?);
        for file in std::fs::read_dir(&dir)? {
            let name = file?.file_name().into_string().unwrap_or_default();
            if drl::run::is_policy_file(&name) {
                std::fs::copy(dir.join(&name), out.join(format!("{}{name}", drl::ensemble::member_prefix(i))))?;
            }
        }
    }
    // The promoted folder's own config.json (algorithm and env) is the best member's.
    let best = data_dir.join(relative_folder(&chosen[0].checkpoint)?);
    std::fs::copy(best.join("config.json"), out.join("config.json"))?;
    let env = envs.make_configured(&request.env, 1, &serde_json::Value::Null)?;
    let discrete_actions = match env.action_space() {
        drl::env::ActionSpace::Discrete { n } => Some(n),
        drl::env::ActionSpace::Continuous { .. } => None,
    };
    let spec = drl::ensemble::EnsembleSpec { weights: weights.clone(), discrete_actions };
    std::fs::write(out.join(drl::ensemble::ENSEMBLE_FILE), serde_json::to_string_pretty(&spec)?)?;
    let (episodes, seed) = comparison(request, board);
    Ok(WeightedReport {
        members: chosen.iter().map(|e| format!("{}/{}", e.member, e.round)).collect(),
        weights,
        leader_score: score(&data_dir.join(relative_folder(&leader.checkpoint)?), episodes, seed, envs)?,
        ensemble_score: score(out, episodes, seed, envs)?,
        episodes,
        seed,
    })
}

/// Episodes and seed of an ensemble's comparison with the leader: fresh, apart from the
/// evaluator's.
fn comparison(request: &PopulationRequest, board: &[Entry]) -> (usize, u64) {
    (request.eval_episodes().max(20), drl::run::evaluation_seed(request.seed ^ 0xF0_5E_D0_00, board.len()))
}

/// Mean return of the policy in `dir` over `episodes` episodes seeded by `seed`.
fn score(dir: &Path, episodes: usize, seed: u64, envs: &Envs) -> Result<f64> {
    Ok(drl::run::score_checkpoint(dir, episodes, seed, envs)?.0)
}

/// The element-wise mean of one weights file over `dirs`.
fn average_file(dirs: &[std::path::PathBuf], name: &str, out: &Path) -> Result<()> {
    // By tensor name: a file's order is not fixed.
    let read = |dir: &Path| -> Result<std::collections::BTreeMap<String, Tensor>> {
        Ok(Tensor::read_safetensors(dir.join(name)).with_context(|| format!("reading {name}"))?.into_iter().collect())
    };
    let mut sums = read(&dirs[0])?;
    for dir in &dirs[1..] {
        let other = read(dir)?;
        anyhow::ensure!(other.len() == sums.len(), "{name}: the members' networks differ");
        for (key, sum) in sums.iter_mut() {
            let tensor = other.get(key).with_context(|| format!("{name}: a member lacks {key}"))?;
            anyhow::ensure!(sum.size() == tensor.size(), "{name}: the members' networks differ at {key}");
            *sum = &*sum + tensor;
        }
    }
    let n = dirs.len() as f64;
    let means: Vec<(String, Tensor)> = sums.into_iter().map(|(key, sum)| (key, sum / n)).collect();
    Tensor::write_safetensors(&means, out)?;
    Ok(())
}
