//! TSP-v0 and TSP-v1 as solve endpoints: the env's parameters (`edges` fixes TSP-v0's graph,
//! `coordinates` TSP-v1's points; without them the graph is drawn with the request's seed), one
//! episode walked by the shipped policy, answered with the nodes visited in order, each move's
//! reward and the return, and the routing reference's return on the same graph and start. The
//! policy reads the env's `node_features` (its observation with them on; the walk is the same
//! env's), and TSP-v1's was trained to shorten the path, whatever the request's reward sign.
//! Without a policy that loads, the reference walks, said in `solution.method`. Baselines:
//! `reference` (TSP-v0's breadth-first walk to the nearest unvisited node, TSP-v1's nearest
//! neighbour + 2-opt path).

/// The env as or-gymnasium defines it, vectorized.
pub mod env;
/// The reference policies the env is measured against.
pub mod reference;

use super::{config_from, with_policy, Endpoint, EpisodeSolve};
use crate::drl::env::VecEnv;
use crate::problems::orgym::env::OrGymConfig;
use crate::problems::orgym::tsp::env::{TspConfig, TspVecEnv, Walk, IDS};
use crate::problems::orgym::tsp::reference::reference_move;
use crate::problems::{Models, ProblemError, ProblemInput, SolveReport};
use serde_json::{json, Value};
use std::time::Instant;

/// One registry row per env id.
pub(crate) static TSP_ENVS: [Endpoint<TspEpisode>; 2] = [Endpoint::new(IDS[0].0), Endpoint::new(IDS[1].0)];

/// `policy` and the reference policies, each usable as `method`.
const BASELINES: &[&str] = &["policy", "reference"];

pub(crate) struct TspEpisode {
    id: &'static str,
    config: TspConfig,
}

/// One episode: the walk (start first) and each step's (action, reward).
pub(crate) struct Run {
    path: Vec<usize>,
    steps: Vec<(usize, f64)>,
}

impl Run {
    fn total(&self) -> f64 {
        self.steps.iter().map(|s| s.1).sum()
    }
}

impl TspEpisode {
    /// One episode of `config` (the request's, with or without node features) under `act`.
    fn run(&self, config: &TspConfig, seed: u64, act: &mut dyn FnMut(&[f32], &Walk) -> usize) -> Run {
        let mut env = TspVecEnv::new(config.clone(), 1);
        env.reset(seed);
        let mut walk = env.episode(0).clone();
        let mut row = vec![0.0; config.observation_dim()];
        let mut steps = Vec::new();
        loop {
            walk.fill(&mut row);
            let action = act(&row, &walk).min(self.config.nodes - 1);
            let (reward, terminated, truncated) = walk.step_to(&self.config, action);
            steps.push((action, reward));
            // TSP-v0 truncates at 2N steps; every TSP-v1 move visits a new node or ends the walk.
            if terminated || truncated {
                break;
            }
        }
        Run { path: walk.path.clone(), steps }
    }

    fn reference(&self, seed: u64) -> Run {
        let mut plan = None;
        self.run(&self.config, seed, &mut |_, walk| reference_move(walk, &mut plan))
    }
}

impl EpisodeSolve for TspEpisode {
    type Run = Run;
    const FALLBACK: &'static str = "reference";
    const SUMMARY: &'static str = "OR-Gym graph walk visiting every node (v0: sparse graph, uniform cost; v1: euclidean): one episode by the shipped policy, or the routing reference without one";
    const BASELINES: &'static [&'static str] = BASELINES;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "nodes": {"type": "integer", "minimum": 3, "maximum": crate::problems::orgym::tsp::env::MAX_NODES, "description": "nodes (50)"},
                "move_cost": {"type": "number", "description": "TSP-v0's reward per move (-1)"},
                "invalid_action_cost": {"type": "number", "description": "reward of a move along no edge (v0) or to a visited node (v1) (-100)"},
                "completion_bonus": {"type": "number", "description": "TSP-v0's bonus for the last new node (1000)"},
                "negate_distance": {"type": "boolean", "description": "TSP-v1: a move's reward is minus its length (the reference's is plus)"},
                "coordinates": {"type": "array", "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}, "description": "TSP-v1's points"},
                "edges": {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}, "description": "TSP-v0's adjacency lists (made two-way)"}
            }
        })
    }

    fn load(id: &'static str, input: ProblemInput<'_>) -> Result<Self, ProblemError> {
        let config = config_from(TspConfig::by_id(id).expect("registered id"), input, TspConfig::validate)?;
        Ok(TspEpisode { id, config })
    }

    fn policy_run(&self, models: &Models<'_>, seed: u64) -> Result<(Self::Run, String), String> {
        let featured = self.config.policy_observation();
        let probe = TspVecEnv::new(featured.clone(), 1);
        with_policy(models, self.id, &probe, |act| self.run(&featured, seed, &mut |row, _| act(row)[0] as usize))
    }

    fn baseline(&self, name: &str, seed: u64) -> Option<Result<Self::Run, ProblemError>> {
        Some(Ok(match name {
            "reference" => self.reference(seed),
            _ => return None,
        }))
    }

    fn report(&self, method: &str, run: Run, start: Instant, seed: u64) -> SolveReport {
        let total = run.total();
        let solution = json!({
            "method": method,
            "path": run.path,
            "actions": run.steps.iter().map(|s| s.0).collect::<Vec<_>>(),
            "rewards": run.steps.iter().map(|s| s.1).collect::<Vec<_>>(),
            "return": total,
            "reference": {"return": self.reference(seed).total()},
        });
        super::episode_report(self.id, total, solution, run.steps.len(), start, seed)
    }

    fn size_summary(&self) -> String {
        format!("{} nodes", self.config.nodes)
    }
}
