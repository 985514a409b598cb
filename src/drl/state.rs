//! A run's full state as one checkpoint: named tensors (weights, optimizer moments, replay
//! contents) in `state.safetensors` and the small rest (counters, generator positions, normalizer
//! statistics, env states) in `state.json`. Both are written to temporary names and renamed, the
//! JSON last, so that a crash leaves the previous checkpoint whole.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use tch::{nn, Tensor};

pub const TENSORS_FILE: &str = "state.safetensors";
pub const JSON_FILE: &str = "state.json";

#[derive(Default)]
pub struct StateDict {
    tensors: BTreeMap<String, Tensor>,
    json: serde_json::Map<String, serde_json::Value>,
}

impl StateDict {
    pub fn put_tensor(&mut self, name: impl Into<String>, tensor: &Tensor) {
        self.tensors.insert(name.into(), tensor.detach().to_device(tch::Device::Cpu).copy());
    }

    pub fn put_floats(&mut self, name: impl Into<String>, values: &[f32]) {
        self.tensors.insert(name.into(), Tensor::from_slice(values));
    }

    pub fn put_json(&mut self, name: impl Into<String>, value: serde_json::Value) {
        self.json.insert(name.into(), value);
    }

    pub fn put<T: serde::Serialize>(&mut self, name: impl Into<String>, value: &T) -> Result<()> {
        self.json.insert(name.into(), serde_json::to_value(value)?);
        Ok(())
    }

    pub fn tensor(&self, name: &str) -> Result<&Tensor> {
        self.tensors.get(name).with_context(|| format!("checkpoint lacks tensor {name}"))
    }

    pub fn floats(&self, name: &str) -> Result<Vec<f32>> {
        Ok(Vec::<f32>::try_from(self.tensor(name)?.to_kind(tch::Kind::Float).flatten(0, -1))?)
    }

    pub fn json(&self, name: &str) -> Result<&serde_json::Value> {
        self.json.get(name).with_context(|| format!("checkpoint lacks {name}"))
    }

    pub fn get<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T> {
        serde_json::from_value(self.json(name)?.clone()).with_context(|| format!("checkpoint entry {name}"))
    }

    /// Every variable of `store` under `prefix.<variable name>`.
    pub fn put_store(&mut self, prefix: &str, store: &nn::VarStore) {
        for (name, tensor) in store.variables() {
            self.put_tensor(format!("{prefix}/{name}"), &tensor);
        }
    }

    pub fn load_store(&self, prefix: &str, store: &mut nn::VarStore) -> Result<()> {
        tch::no_grad(|| {
            for (name, mut tensor) in store.variables() {
                let saved = self.tensor(&format!("{prefix}/{name}"))?;
                tensor.copy_(&saved.to_kind(tensor.kind()));
            }
            Ok(())
        })
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)?;
        let named: Vec<(&str, &Tensor)> = self.tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let (tensors_tmp, json_tmp) = (dir.join(format!("{TENSORS_FILE}.tmp")), dir.join(format!("{JSON_FILE}.tmp")));
        if named.is_empty() {
            // safetensors needs at least one entry.
            Tensor::write_safetensors(&[("empty", Tensor::zeros([1], tch::kind::FLOAT_CPU))], &tensors_tmp)?;
        } else {
            Tensor::write_safetensors(&named, &tensors_tmp)?;
        }
        std::fs::write(&json_tmp, serde_json::to_vec(&self.json)?)?;
        std::fs::rename(tensors_tmp, dir.join(TENSORS_FILE))?;
        std::fs::rename(json_tmp, dir.join(JSON_FILE))?;
        Ok(())
    }

    pub fn read(dir: &Path) -> Result<Self> {
        let tensors =
            Tensor::read_safetensors(dir.join(TENSORS_FILE)).with_context(|| format!("reading {TENSORS_FILE}"))?;
        let json = serde_json::from_slice(
            &std::fs::read(dir.join(JSON_FILE)).with_context(|| format!("reading {JSON_FILE}"))?,
        )?;
        Ok(StateDict { tensors: tensors.into_iter().collect(), json })
    }

    pub fn exists(dir: &Path) -> bool {
        dir.join(JSON_FILE).exists() && dir.join(TENSORS_FILE).exists()
    }
}
