//! The model registry: every shipped policy lives in `models/<name>/` as `weights.safetensors`
//! plus `manifest.json` (problem, architecture, training command and seed, training data,
//! metrics at training time, sha256 of the weights). `load_dir` verifies each hash and refuses a
//! corrupt or mismatched model with a log line while keeping the rest. Deep-RL policies
//! (problem `drl`) are promoted from finished training jobs (`promote`): their folder is the
//! job's checkpoint, every file hashed in `files`, and `sha256` digests that list.
//!
//! The registry knows no policy type: each problem loads its own (`PolicyLoader`, chosen by the
//! manifest's `problem` through the `Loaders` the caller passes), and reads it back with
//! `RegisteredModel::policy::<T>()`. There is no process-wide registry: the server and the CLI
//! each load one and pass it to every solve.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use utoipa::ToSchema;

pub const WEIGHTS_FILE: &str = "weights.safetensors";
pub const MANIFEST_FILE: &str = "manifest.json";

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Manifest {
    pub name: String,
    /// Registry name of the problem it serves (e.g. `mimo`).
    pub problem: String,
    /// Architecture and sizes (for `mimo`: users, antennas, power, noise, hidden widths).
    #[schema(value_type = Object)]
    pub architecture: serde_json::Value,
    /// The command that regenerates the weights, its seed and hyperparameters.
    #[schema(value_type = Object)]
    pub training: serde_json::Value,
    /// Where the training data came from.
    pub training_data: String,
    /// Measured when it was trained.
    #[schema(value_type = Object)]
    pub metrics: serde_json::Value,
    /// Hex sha256 of `weights.safetensors`; with `files`, of the lines `name sha256` of every
    /// listed file in name order.
    pub sha256: String,
    /// Multi-file models (drl): hex sha256 of every file by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub files: std::collections::BTreeMap<String, String>,
    /// The API key (by name) that promoted it; shipped models have none and everyone sees them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// Where a promoted model came from: its manifest's `training` and `metrics`, and its owner
/// (the API key's name; None: everyone's).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    pub training: serde_json::Value,
    pub metrics: serde_json::Value,
    pub owner: Option<String>,
}

/// A loaded policy as its problem's type (problems wrap tch modules, which are not `Sync`, in a
/// `Mutex`).
pub type LoadedPolicy = Box<dyn Any + Send + Sync>;

/// Loads a model folder's policy as the type its problem uses; errors explain a mismatch.
pub type PolicyLoader = fn(&Manifest, &Path) -> Result<LoadedPolicy>;

/// The loader for a manifest's `problem` (None: no problem of that name has policies).
pub type Loaders = fn(&str) -> Option<PolicyLoader>;

/// A verified, loaded model.
pub struct RegisteredModel {
    pub manifest: Manifest,
    policy: LoadedPolicy,
}

impl RegisteredModel {
    /// The policy as `T`, when it is one.
    pub fn policy<T: 'static>(&self) -> Option<&T> {
        self.policy.downcast_ref::<T>()
    }
}

pub struct ModelRegistry {
    pub models: Vec<RegisteredModel>,
    loaders: Loaders,
    /// (folder, reason) of every model refused at load.
    pub rejected: Vec<(String, String)>,
    /// Models promoted while the server runs (kept for the life of the process).
    promoted: std::sync::RwLock<Vec<&'static RegisteredModel>>,
}

/// The digest a multi-file manifest's `sha256` holds.
fn files_digest(files: &std::collections::BTreeMap<String, String>) -> String {
    let lines: String = files.iter().map(|(name, hash)| format!("{name} {hash}\n")).collect();
    Sha256::digest(lines.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha256_hex(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

fn load_one(dir: &Path, loaders: Loaders) -> Result<RegisteredModel> {
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST_FILE)).context("manifest.json")?)
            .context("manifest.json")?;
    let weights = dir.join(WEIGHTS_FILE);
    if manifest.files.is_empty() {
        let actual = sha256_hex(&weights)?;
        if actual != manifest.sha256 {
            bail!("sha256 of {WEIGHTS_FILE} is {actual}, the manifest says {}", manifest.sha256);
        }
    } else {
        for (name, expected) in &manifest.files {
            let actual = sha256_hex(&dir.join(name))?;
            if &actual != expected {
                bail!("sha256 of {name} is {actual}, the manifest says {expected}");
            }
        }
        if files_digest(&manifest.files) != manifest.sha256 {
            bail!("sha256 does not digest the listed files");
        }
    }
    let loader =
        loaders(&manifest.problem).with_context(|| format!("no policy type for problem '{}'", manifest.problem))?;
    let policy = loader(&manifest, dir)?;
    Ok(RegisteredModel { manifest, policy })
}

impl ModelRegistry {
    /// No models (policies of the problems `loaders` knows can still be promoted).
    pub fn empty(loaders: Loaders) -> ModelRegistry {
        ModelRegistry { models: Vec::new(), loaders, rejected: Vec::new(), promoted: Default::default() }
    }

    /// Loads every `dir/<name>/manifest.json`; a model that fails is logged and skipped.
    pub fn load_dir(dir: &Path, loaders: Loaders) -> ModelRegistry {
        let mut registry = ModelRegistry::empty(loaders);
        let Ok(entries) = std::fs::read_dir(dir) else {
            tracing::warn!(dir = %dir.display(), "no model folder; serving without models");
            return registry;
        };
        let mut folders: Vec<PathBuf> =
            entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join(MANIFEST_FILE).exists()).collect();
        folders.sort();
        for folder in folders {
            match load_one(&folder, loaders) {
                Ok(model) => {
                    tracing::info!(model = %model.manifest.name, "model loaded");
                    registry.models.push(model);
                }
                Err(error) => {
                    tracing::error!(folder = %folder.display(), error = %format!("{error:#}"), "model refused");
                    registry.rejected.push((folder.display().to_string(), format!("{error:#}")));
                }
            }
        }
        registry
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredModel> {
        self.models
            .iter()
            .find(|m| m.manifest.name == name)
            .or_else(|| self.promoted.read().expect("registry").iter().copied().find(|m| m.manifest.name == name))
    }

    /// Every model: loaded at start, then promoted.
    pub fn all(&self) -> Vec<&RegisteredModel> {
        let promoted = self.promoted.read().expect("registry");
        self.models.iter().chain(promoted.iter().copied()).collect()
    }

    /// Every manifest: loaded at start, then promoted.
    pub fn manifests(&self) -> Vec<Manifest> {
        let promoted = self.promoted.read().expect("registry");
        self.models.iter().chain(promoted.iter().copied()).map(|m| m.manifest.clone()).collect()
    }

    /// Lists the models promoted into `dir` by an earlier run of the server (the shipped folder
    /// stays read-only; promoted models live in the data folder). Refused ones are logged.
    pub fn load_promoted(&self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut folders: Vec<PathBuf> =
            entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join(MANIFEST_FILE).exists()).collect();
        folders.sort();
        for folder in folders {
            match load_one(&folder, self.loaders) {
                Ok(model) if self.get(&model.manifest.name).is_none() => {
                    tracing::info!(model = %model.manifest.name, "promoted model loaded");
                    self.promoted.write().expect("registry").push(Box::leak(Box::new(model)));
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::error!(folder = %folder.display(), error = %format!("{error:#}"), "promoted model refused")
                }
            }
        }
    }

    /// Promotes a training run folder as model `name` into `dir`: copies the files
    /// `is_policy_file` accepts, writes a manifest hashing every file, verifies it by loading, and
    /// lists it. `Err` explains; a taken name is `PromoteError::Exists`.
    pub fn promote(
        &self,
        run_dir: &Path,
        dir: &Path,
        name: &str,
        provenance: Provenance,
        is_policy_file: fn(&str) -> bool,
    ) -> Result<Manifest, PromoteError> {
        let Provenance { training, metrics, owner } = provenance;
        let valid = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            && !name.starts_with('.');
        if !valid {
            return Err(PromoteError::Invalid {
                field: "name",
                message: "1-64 letters, digits, '.', '_' or '-', not starting with '.'".into(),
            });
        }
        let _guard = PROMOTING.lock().expect("promote lock");
        let folder = dir.join(name);
        if self.get(name).is_some() || folder.exists() {
            return Err(PromoteError::Exists(name.into()));
        }
        let config: serde_json::Value = std::fs::read_to_string(run_dir.join("config.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| PromoteError::Invalid {
                field: "job_id",
                message: "the job has no checkpoint (config.json)".into(),
            })?;
        let mut files = std::collections::BTreeMap::new();
        let staging = dir.join(format!(".{name}.tmp"));
        let copy = || -> Result<()> {
            std::fs::create_dir_all(&staging)?;
            for entry in std::fs::read_dir(run_dir)? {
                let path = entry?.path();
                let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
                if is_policy_file(&file) {
                    std::fs::copy(&path, staging.join(&file))?;
                    files.insert(file.clone(), sha256_hex(&staging.join(&file))?);
                }
            }
            let manifest = Manifest {
                name: name.into(),
                problem: "drl".into(),
                architecture: serde_json::json!({"algorithm": config["algorithm"], "env": config["env"], "hyperparameters": config["overrides"]}),
                training,
                training_data: format!(
                    "rollouts of {} collected by the training job",
                    config["env"].as_str().unwrap_or("?")
                ),
                metrics,
                sha256: files_digest(&files),
                files: files.clone(),
                owner: owner.clone(),
            };
            std::fs::write(staging.join(MANIFEST_FILE), serde_json::to_string_pretty(&manifest)? + "\n")?;
            Ok(())
        };
        // Copied under a staging name and renamed whole, so no half-copied folder is ever listed;
        // loaded (the verification) from where it then lives, since a deep-RL policy keeps its
        // folder and rebuilds from it per solve.
        if let Err(error) = copy() {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(PromoteError::Invalid { field: "job_id", message: format!("{error:#}") });
        }
        std::fs::rename(&staging, &folder).map_err(|e| PromoteError::Io(e.into()))?;
        let model = match load_one(&folder, self.loaders) {
            Ok(model) => model,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&folder);
                return Err(PromoteError::Invalid { field: "job_id", message: format!("{error:#}") });
            }
        };
        let manifest = model.manifest.clone();
        tracing::info!(model = %name, "model promoted");
        self.promoted.write().expect("registry").push(Box::leak(Box::new(model)));
        Ok(manifest)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    #[error("a model named '{0}' exists")]
    Exists(String),
    /// The request's `field` is at fault.
    #[error("{field}: {message}")]
    Invalid { field: &'static str, message: String },
    #[error(transparent)]
    Io(anyhow::Error),
}

/// One promotion at a time (name check, copy, rename).
static PROMOTING: Mutex<()> = Mutex::new(());

/// The shipped models' folder: `RLSOLVER_MODELS_DIR`, else the crate's `models/`.
pub fn default_dir() -> PathBuf {
    std::env::var_os("RLSOLVER_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models"))
}

/// What a trained policy's manifest says besides its name and hash.
pub struct ModelRecord<'a> {
    pub problem: &'a str,
    pub architecture: serde_json::Value,
    pub training: serde_json::Value,
    pub training_data: &'a str,
    pub metrics: serde_json::Value,
}

/// Writes trained weights as `dir/<name>/` with their manifest.
pub fn write_model(dir: &Path, name: &str, store: &tch::nn::VarStore, record: ModelRecord<'_>) -> Result<Manifest> {
    let ModelRecord { problem, architecture, training, training_data, metrics } = record;
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder)?;
    store.save(folder.join(WEIGHTS_FILE))?;
    let manifest = Manifest {
        name: name.into(),
        problem: problem.into(),
        architecture,
        training,
        training_data: training_data.into(),
        metrics,
        sha256: sha256_hex(&folder.join(WEIGHTS_FILE))?,
        owner: None,
        files: Default::default(),
    };
    std::fs::write(folder.join(MANIFEST_FILE), serde_json::to_string_pretty(&manifest)? + "\n")?;
    Ok(manifest)
}
