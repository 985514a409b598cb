//! A rollout process: reads the learner's configuration, builds the same agent, steps its own
//! batch of envs with exploration, and streams the transitions in binary batches; whenever the
//! learner's answer carries a newer weights version, it fetches and loads the weights. It stops
//! when the learner is done.

use super::wire::{self, Transitions};
use super::ApexConfig;
use crate::drl::run::{obs_tensor, to_vec};
use anyhow::{bail, Context, Result};
use std::time::Duration;

/// What the rollout did.
#[derive(Debug, Clone, Default)]
pub struct RolloutSummary {
    pub env_steps: usize,
    pub batches: usize,
    pub weight_loads: usize,
}

/// Runs until the learner at `url` (e.g. `http://127.0.0.1:8090`) is done; `name` tells the
/// learner's count which rollout sent what, and seeds this rollout's envs apart from the others;
/// `key`: the learner's API key, when it has keys configured.
pub fn run(url: &str, name: &str, key: Option<&str>, envs: &crate::drl::env::Envs) -> Result<RolloutSummary> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(key) = key {
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {key}").parse()?);
    }
    let client =
        reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).default_headers(headers).build()?;
    let url = url.trim_end_matches('/');
    let status: serde_json::Value = retry(|| client.get(format!("{url}/v1/learner")).send())?.json()?;
    let config = ApexConfig {
        envs: envs.clone(),
        ..serde_json::from_value(status["config"].clone()).context("the learner's config")?
    };
    let (mut agent, num_envs) = super::learner::build(&config)?;
    let mut env = envs.make_configured(&config.env, num_envs, &serde_json::Value::Null)?;
    let (dim, width) = (env.observation_dim(), env.action_space().width());
    let seed = config.seed
        ^ name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let mut obs = env.reset(seed);
    let mut version = 0u64;
    let mut summary = RolloutSummary::default();
    let mut batch = Transitions::new(dim, width);
    let fetch = |agent: &mut Box<dyn crate::drl::agents::OffPolicyAgent>| -> Result<u64> {
        let response = client.get(format!("{url}/v1/learner/weights")).send()?.error_for_status()?;
        let version =
            response.headers().get("x-weights-version").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
        wire::load_weights(&response.bytes()?, agent.var_stores())?;
        Ok(version.unwrap_or(0))
    };
    version = version.max(fetch(&mut agent)?);
    summary.weight_loads += 1;
    loop {
        let actions = to_vec(&agent.act(&obs_tensor(&obs, dim, tch::Device::Cpu), true));
        let result = env.step(&actions);
        for i in 0..env.num_envs() {
            let done = result.terminated[i] || result.truncated[i];
            let next = if done { &result.final_observations } else { &result.observations };
            batch.push(
                &obs[i * dim..(i + 1) * dim],
                &actions[i * width..(i + 1) * width],
                result.rewards[i],
                &next[i * dim..(i + 1) * dim],
                result.terminated[i],
            );
        }
        obs = result.observations;
        summary.env_steps += env.num_envs();
        agent.on_env_steps(summary.env_steps);
        if batch.len() < config.send_every() {
            continue;
        }
        let body = std::mem::replace(&mut batch, Transitions::new(dim, width)).encode();
        let answer = loop {
            let response = client
                .post(format!("{url}/v1/learner/transitions"))
                .header("content-type", "application/octet-stream")
                .header("x-rollout", name)
                .body(body.clone())
                .send()?;
            match response.status().as_u16() {
                200 => break response.json::<serde_json::Value>()?,
                503 => std::thread::sleep(Duration::from_millis(20)),
                other => bail!("the learner refused a batch ({other}): {}", response.text().unwrap_or_default()),
            }
        };
        summary.batches += 1;
        if answer["done"].as_bool() == Some(true) {
            break;
        }
        if answer["weights_version"].as_u64().is_some_and(|v| v > version) {
            version = fetch(&mut agent)?;
            summary.weight_loads += 1;
        }
    }
    Ok(summary)
}

/// The learner may still be starting: retry a request for a few seconds.
fn retry(
    mut send: impl FnMut() -> reqwest::Result<reqwest::blocking::Response>,
) -> Result<reqwest::blocking::Response> {
    let mut last = None;
    for _ in 0..50 {
        match send() {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => last = Some(anyhow::anyhow!("the learner answered {}", response.status())),
            Err(error) => last = Some(error.into()),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Err(last.expect("tried").context("reaching the learner"))
}
