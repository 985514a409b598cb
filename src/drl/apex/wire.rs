//! The binary formats between rollout processes and the learner: a batch of transitions (one
//! POST carries hundreds; JSON per step would cost more than the step) and the learner's
//! weights (every store of the agent, in libtorch's stream format).
//!
//! Transitions: `RLTX`, u16 version 1, u32 observation width D, u32 action width A, u32 count N,
//! then N rows of little-endian f32: observation (D), action (A), reward, next observation (D),
//! terminated (0 or 1).

use anyhow::{bail, ensure, Context, Result};
use tch::nn::VarStore;

const MAGIC: &[u8; 4] = b"RLTX";
const VERSION: u16 = 1;
const HEADER: usize = 4 + 2 + 4 + 4 + 4;
/// Rows in one batch at most (a bound checked before anything is allocated).
pub const MAX_ROWS: usize = 1 << 16;

/// Transitions in columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transitions {
    pub obs_dim: usize,
    pub action_width: usize,
    pub obs: Vec<f32>,
    pub actions: Vec<f32>,
    pub rewards: Vec<f32>,
    pub next_obs: Vec<f32>,
    pub terminated: Vec<bool>,
}

impl Transitions {
    pub fn new(obs_dim: usize, action_width: usize) -> Self {
        Transitions { obs_dim, action_width, ..Default::default() }
    }

    pub fn len(&self) -> usize {
        self.rewards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rewards.is_empty()
    }

    pub fn push(&mut self, obs: &[f32], action: &[f32], reward: f32, next_obs: &[f32], terminated: bool) {
        self.obs.extend_from_slice(obs);
        self.actions.extend_from_slice(action);
        self.rewards.push(reward);
        self.next_obs.extend_from_slice(next_obs);
        self.terminated.push(terminated);
    }

    /// Row `i`: (obs, action, reward, next obs, terminated).
    pub fn row(&self, i: usize) -> (&[f32], &[f32], f32, &[f32], bool) {
        let (d, a) = (self.obs_dim, self.action_width);
        (
            &self.obs[i * d..(i + 1) * d],
            &self.actions[i * a..(i + 1) * a],
            self.rewards[i],
            &self.next_obs[i * d..(i + 1) * d],
            self.terminated[i],
        )
    }

    pub fn encode(&self) -> Vec<u8> {
        let row = 4 * (2 * self.obs_dim + self.action_width + 2);
        let mut out = Vec::with_capacity(HEADER + self.len() * row);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        for n in [self.obs_dim, self.action_width, self.len()] {
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
        for i in 0..self.len() {
            let (obs, action, reward, next, terminated) = self.row(i);
            let flag = f32::from(u8::from(terminated));
            let values = obs.iter().chain(action).chain([&reward]).chain(next).chain([&flag]);
            for v in values {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// Decodes a batch; every error says what is wrong (a truncated body, a bad header, a
    /// non-finite value).
    pub fn decode(bytes: &[u8]) -> Result<Transitions> {
        ensure!(bytes.len() >= HEADER, "a transition batch starts with an {HEADER}-byte header");
        ensure!(&bytes[..4] == MAGIC, "not a transition batch (the body must start with RLTX)");
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        ensure!(version == VERSION, "transition batch version {version}; this learner reads version {VERSION}");
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let (d, a, n) = (word(6), word(10), word(14));
        ensure!(
            (1..=1 << 16).contains(&d) && (1..=1 << 12).contains(&a),
            "observation width {d} or action width {a} out of range"
        );
        ensure!(n <= MAX_ROWS, "{n} transitions in one batch; at most {MAX_ROWS}");
        let row = 2 * d + a + 2;
        ensure!(
            bytes.len() == HEADER + 4 * row * n,
            "the body holds {} bytes; {n} rows of {row} floats need {}",
            bytes.len(),
            HEADER + 4 * row * n
        );
        let mut batch = Transitions::new(d, a);
        let floats: Vec<f32> =
            bytes[HEADER..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
        if let Some(at) = floats.iter().position(|v| !v.is_finite()) {
            bail!("transition {} holds a value that is not finite", at / row);
        }
        for r in floats.chunks_exact(row) {
            let terminated = match r[row - 1] {
                0.0 => false,
                1.0 => true,
                other => bail!("terminated must be 0 or 1, not {other}"),
            };
            batch.push(&r[..d], &r[d..d + a], r[d + a], &r[d + a + 1..d + a + 1 + d], terminated);
        }
        Ok(batch)
    }
}

/// Every store of an agent as one byte string: u32 count, then per store its name (u16 length,
/// UTF-8) and its tensors (u64 length, libtorch's stream format).
pub fn encode_weights(stores: &[(&str, &VarStore)]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.extend_from_slice(&(stores.len() as u32).to_le_bytes());
    for (name, store) in stores {
        let mut bytes = Vec::new();
        store.save_to_stream(&mut bytes)?;
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// Loads `encode_weights`' output into the stores of the same names.
pub fn load_weights(bytes: &[u8], stores: Vec<(&'static str, &mut VarStore)>) -> Result<()> {
    let mut at = 0;
    let mut take = |n: usize| -> Result<&[u8]> {
        let slice = bytes.get(at..at + n).context("truncated weights")?;
        at += n;
        Ok(slice)
    };
    let count = u32::from_le_bytes(take(4)?.try_into()?) as usize;
    let mut by_name = std::collections::HashMap::new();
    for _ in 0..count {
        let len = u16::from_le_bytes(take(2)?.try_into()?) as usize;
        let name = String::from_utf8(take(len)?.to_vec())?;
        let size = u64::from_le_bytes(take(8)?.try_into()?) as usize;
        by_name.insert(name, take(size)?.to_vec());
    }
    for (name, store) in stores {
        let bytes = by_name.get(name).with_context(|| format!("the weights lack store '{name}'"))?;
        store.load_from_stream(std::io::Cursor::new(bytes))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_round_trips_and_bad_bodies_are_refused_with_the_reason() {
        let mut batch = Transitions::new(2, 1);
        batch.push(&[1.0, 2.0], &[1.0], 0.5, &[3.0, 4.0], false);
        batch.push(&[3.0, 4.0], &[0.0], -1.0, &[5.0, 6.0], true);
        let bytes = batch.encode();
        assert_eq!(bytes.len(), HEADER + 2 * 4 * 7);
        assert_eq!(Transitions::decode(&bytes).unwrap(), batch);
        let reason = |b: &[u8]| Transitions::decode(b).unwrap_err().to_string();
        assert!(reason(&bytes[..10]).contains("header"));
        assert!(reason(&bytes[..bytes.len() - 4]).contains("bytes"));
        assert!(reason(b"JSON{}JSON{}JSON{}JSON{}").contains("RLTX"));
        let mut nan = bytes.clone();
        nan[HEADER..HEADER + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(reason(&nan).contains("not finite"));
        let mut flag = bytes.clone();
        let last = flag.len() - 4;
        flag[last..].copy_from_slice(&0.5f32.to_le_bytes());
        assert!(reason(&flag).contains("terminated"));
        let mut huge = bytes.clone();
        huge[14..18].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(reason(&huge).contains("at most"));
    }

    #[test]
    fn weights_round_trip_between_stores() {
        use tch::nn::Module;
        let a = VarStore::new(tch::Device::Cpu);
        let layer_a = tch::nn::linear(a.root() / "l", 3, 2, Default::default());
        let mut b = VarStore::new(tch::Device::Cpu);
        let layer_b = tch::nn::linear(b.root() / "l", 3, 2, Default::default());
        let x = tch::Tensor::ones([1, 3], (tch::Kind::Float, tch::Device::Cpu));
        assert!(layer_a.forward(&x).ne_tensor(&layer_b.forward(&x)).any().int64_value(&[]) == 1);
        let bytes = encode_weights(&[("actor", &a)]).unwrap();
        load_weights(&bytes, vec![("actor", &mut b)]).unwrap();
        assert!(layer_a.forward(&x).equal(&layer_b.forward(&x)));
        assert!(load_weights(&bytes, vec![("critic", &mut b)]).is_err());
    }
}
