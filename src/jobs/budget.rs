//! What a training request may make the server spend, estimated from its hyperparameters before
//! anything is allocated: the networks' parameters (`hidden` as an MLP from the joint input of all
//! agents to the output, once per network the algorithm keeps; QMIX's hypernetworks by their
//! shapes) and the memory of
//! those parameters with their gradients, optimizer moments and target copies, plus the replay
//! buffer or rollout storage. The estimate is an upper bound in spirit (the widest input, every
//! critic counted), so that a request within it cannot exhaust the host.

use crate::problems::ProblemError;
use serde_json::Value;

/// The sizes of an env that the networks' shapes depend on.
#[derive(Debug, Clone, Copy)]
pub struct EnvShape {
    pub observation_dim: usize,
    /// Discrete: the number of actions; continuous: the action's width.
    pub action_dim: usize,
    pub agents: usize,
    pub state_dim: usize,
    /// Steps of the longest episode (the env's time limit), for episode buffers.
    pub episode_steps: usize,
}

/// Caps on what one training run may allocate.
#[derive(Debug, Clone, Copy)]
pub struct ResourceLimits {
    /// Trainable parameters over all networks of the run.
    pub max_parameters: u64,
    /// Bytes of parameters, gradients, optimizer moments, target networks and replay storage.
    pub max_memory_bytes: u64,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        // Every algorithm's defaults on every env fit a quarter of these (tested in jobs::training).
        ResourceLimits { max_parameters: 20_000_000, max_memory_bytes: 4 << 30 }
    }
}

/// Hyperparameters that count experience kept in memory, and what one unit of each holds.
const STORAGE: &[(&str, Unit)] = &[
    ("buffer_size", Unit::Transition),
    ("buffer_episodes", Unit::Episode),
    ("rollout_steps", Unit::TransitionPerEnv),
    ("batch_size", Unit::Transition),
    ("batch_episodes", Unit::Episode),
];

#[derive(Clone, Copy)]
enum Unit {
    Transition,
    /// A transition of each of the batch's envs (on-policy rollouts).
    TransitionPerEnv,
    /// An episode of up to `EnvShape::episode_steps` transitions of every agent.
    Episode,
}
/// Parameter, gradient, two Adam moments, and a target copy with its own.
const BYTES_PER_PARAMETER: u64 = 4 * 4 * 2;

fn as_count(value: &Value) -> u64 {
    value.as_f64().filter(|v| v.is_finite() && *v > 0.0).map_or(0, |v| v.min(u64::MAX as f64) as u64)
}

fn mlp_parameters(input: u64, widths: &[u64], output: u64) -> u64 {
    let mut total = 0u64;
    let mut previous = input;
    for &w in widths.iter().chain(std::iter::once(&output)) {
        total = total.saturating_add(previous.saturating_add(1).saturating_mul(w));
        previous = w;
    }
    total
}

/// Checks the merged hyperparameters of a run on `shape`; the error names the hyperparameter
/// that contributes most to the budget it exceeds.
pub fn check(
    hyperparameters: &Value,
    shape: EnvShape,
    num_envs: usize,
    limits: &ResourceLimits,
) -> Result<(), ProblemError> {
    let Some(fields) = hyperparameters.as_object() else { return Ok(()) };
    let agents = shape.agents.max(1) as u64;
    let joint = (shape.observation_dim.max(shape.state_dim) as u64 + shape.action_dim as u64).saturating_mul(agents);
    let networks = 2 + fields.get("critics").map_or(0, as_count);
    let mut parameters: Vec<(&str, u64)> = Vec::new();
    let hidden: Vec<u64> = match fields.get("hidden") {
        Some(Value::Array(items)) => items.iter().map(as_count).collect(),
        Some(v @ Value::Number(_)) => vec![as_count(v)],
        _ => Vec::new(),
    };
    if !hidden.is_empty() {
        let per_network = mlp_parameters(joint, &hidden, (shape.action_dim as u64).max(agents));
        parameters.push(("hidden", per_network.saturating_mul(networks).saturating_mul(agents)));
    }
    // QMIX's mixer (Rashid et al. 2018): hypernetworks from the state to the first mixing layer's
    // weights (agents x M) and to the final weights (M), one-layer hypernetworks for the biases.
    if let (Some(m), Some(h)) = (fields.get("mixing_embed").map(as_count), fields.get("hypernet_embed").map(as_count)) {
        let state = shape.state_dim as u64;
        let mixer = mlp_parameters(state, &[h], agents.saturating_mul(m))
            .saturating_add(mlp_parameters(state, &[h], m))
            .saturating_add(mlp_parameters(state, &[], m))
            .saturating_add(mlp_parameters(state, &[m], 1));
        parameters.push((if h >= m { "hypernet_embed" } else { "mixing_embed" }, mixer));
    }
    let total_parameters = parameters.iter().fold(0u64, |t, p| t.saturating_add(p.1));
    if total_parameters > limits.max_parameters {
        let (name, _) = parameters.iter().max_by_key(|p| p.1).expect("a width");
        return Err(ProblemError::invalid(
            format!("hyperparameters.{name}"),
            format!(
                "the networks would hold about {total_parameters} parameters, over this server's limit of {} \
                 (--max-training-parameters)",
                limits.max_parameters
            ),
        ));
    }
    // f32 observation and next observation, action, reward and done of every agent, and the state
    // (MADDPG's replay holds 4 * (2 * 54 + 15 + 3 + 1) = 508 bytes a transition on simple_spread;
    // this counts the state on top, for the episode buffers that keep it).
    let per_agent = 2 * shape.observation_dim as u64 + shape.action_dim as u64 + 2;
    let transition_bytes = 4 * (per_agent * agents + shape.state_dim as u64);
    let mut memory: Vec<(&str, u64)> = vec![("hidden", total_parameters.saturating_mul(BYTES_PER_PARAMETER))];
    for &(name, unit) in STORAGE {
        let Some(count) = fields.get(name).map(as_count) else { continue };
        let per_unit = match unit {
            Unit::Transition => transition_bytes,
            Unit::TransitionPerEnv => transition_bytes.saturating_mul(num_envs.max(1) as u64),
            Unit::Episode => transition_bytes.saturating_mul(shape.episode_steps.max(1) as u64),
        };
        memory.push((name, count.saturating_mul(per_unit)));
    }
    let total_memory = memory.iter().fold(0u64, |t, m| t.saturating_add(m.1));
    if total_memory > limits.max_memory_bytes {
        let (name, _) = memory.iter().max_by_key(|m| m.1).expect("parameters");
        return Err(ProblemError::invalid(
            format!("hyperparameters.{name}"),
            format!(
                "the run would need about {} MiB, over this server's limit of {} MiB (--max-training-memory-mb)",
                total_memory >> 20,
                limits.max_memory_bytes >> 20
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CARTPOLE: EnvShape =
        EnvShape { observation_dim: 4, action_dim: 2, agents: 1, state_dim: 0, episode_steps: 500 };

    fn field(result: Result<(), ProblemError>) -> String {
        result.unwrap_err().field().unwrap().to_string()
    }

    #[test]
    fn ordinary_networks_pass_and_huge_ones_name_the_field() {
        let limits = ResourceLimits::default();
        assert!(check(&json!({"hidden": [256, 256], "buffer_size": 100000}), CARTPOLE, 1, &limits).is_ok());
        assert!(check(&json!({"hidden": [256, 256], "critics": 10}), CARTPOLE, 1, &limits).is_ok());
        assert_eq!(field(check(&json!({"hidden": [100000, 100000]}), CARTPOLE, 1, &limits)), "hyperparameters.hidden");
        assert_eq!(
            field(check(&json!({"hidden": [64], "buffer_size": 1_000_000_000u64}), CARTPOLE, 1, &limits)),
            "hyperparameters.buffer_size"
        );
    }

    #[test]
    fn the_parameter_count_of_an_mlp_is_exact() {
        // 4 -> 3 -> 2: (4 + 1) * 3 + (3 + 1) * 2.
        assert_eq!(mlp_parameters(4, &[3], 2), 23);
    }
}
