//! Tensor-network contraction ordering (TNCO): the pairwise contraction order of a network with
//! the fewest scalar multiplications. The cost convention is `shared/data/tnco`'s (contracting A
//! and B costs the product of the sizes of their union of indices; cotengra's
//! `contraction_cost()`, opt_einsum's `opt_cost` minus log10 2 at bond dimension 2); the objective
//! is its log10.
//!
//! Inputs: the adjacency-list text of `shared/data/tnco` (element t lists the tensors sharing an
//! index of dimension 2 with tensor t; symmetric, no self-loops, no open indices) and the einsum
//! JSON of opt_einsum and cotengra users, `{inputs: [[label, ...], ...], output: [...],
//! size_dict: {label: size}}`: any positive integer sizes, open output indices, hyperedges (an
//! index on more than two tensors). An index on one tensor only must be in the output.
//!
//! Output: `solution.path`, opt_einsum's path (pairs of positions, usable as
//! `opt_einsum.contract(..., optimize=path)` and `cotengra.ContractionTree.from_path`),
//! `solution.cost_log10`, `solution.largest_intermediate_log2` and `solution.tree` (nested pairs
//! of tensor ids, 0-based in input order). With `max_intermediate_log2` (einsum JSON) the answer
//! slices indices of its tree to meet the bound (`slicing.rs`): `solution.sliced_indices`,
//! `solution.slices`, the largest intermediate of one slice, and the cost over all slices (the
//! objective; the search itself minimises the unsliced cost, see `anneal.rs`).
//!
//! Methods: `search` (default) anneals trees by local rotations in the engine's chains
//! (`anneal.rs`, after TreeSA, Kalachev et al. 2021), each chain starting from a randomised
//! greedy tree (or the policy's rollout, when cheaper); baselines `greedy` (opt_einsum's rule),
//! `random-greedy` (`greedy.rs`) and `policy`, the learned pair scoring's rollout (`policy.rs`,
//! the model in `models/`).

pub mod anneal;
pub mod bisection;
pub mod generate;
pub mod greedy;
pub mod policy;
pub mod slicing;
pub mod tree;

use super::{Instance, Limits, Models, ProblemCode, ProblemError, ProblemInput, SolveReport, SolveRun};
use crate::problems::Solved;
use crate::search::moves::minimize_with;
use crate::search::{SearchParams, StopReason};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};
use tree::ContractionTree;

/// A tensor network: each tensor's indices, each index's size and carriers, the open indices.
/// The tensor-network limits (flags of `serve` and `solve`).
#[derive(Debug, Clone, serde::Serialize, clap::Args)]
pub struct NetworkLimits {
    /// Largest tensor network, in tensors (`tensor_network`).
    #[arg(long, env = "RLSOLVER_MAX_TENSORS", default_value_t = NetworkLimits::default().max_tensors)]
    pub max_tensors: usize,
    /// Largest tensor network, in distinct indices (`tensor_network`).
    #[arg(long, env = "RLSOLVER_MAX_INDICES", default_value_t = NetworkLimits::default().max_indices)]
    pub max_indices: usize,
}

impl Default for NetworkLimits {
    fn default() -> Self {
        NetworkLimits { max_tensors: 5_000, max_indices: 50_000 }
    }
}

#[derive(Debug, Clone)]
pub struct Network {
    /// tensors[t]: the indices of tensor t, sorted, each once.
    pub tensors: Vec<Vec<u32>>,
    /// log2 of each index's dimension.
    pub log2_sizes: Vec<f64>,
    /// How many tensors carry each index.
    pub carriers: Vec<u32>,
    /// Whether each index is open (in the output).
    pub output: Vec<bool>,
    /// Each index's label (einsum input) or "t-j" (adjacency list).
    pub labels: Vec<String>,
    /// The memory bound: log2 of the largest intermediate a slice may hold (None: unbounded).
    pub max_intermediate_log2: Option<f64>,
}

impl Network {
    /// Checks the shape and builds the carrier counts. `tensors` holds index ids 0..sizes.len().
    pub fn new(
        tensors: Vec<Vec<u32>>,
        sizes: Vec<u64>,
        output: Vec<bool>,
        labels: Vec<String>,
        limits: &Limits,
    ) -> Result<Self, ProblemError> {
        if tensors.len() < 2 {
            return Err(ProblemError::invalid(
                "inputs",
                format!("the network has {} tensor(s): at least two are needed for a contraction", tensors.len()),
            ));
        }
        if tensors.len() > limits.tensor_network.max_tensors {
            return Err(ProblemError::too_large(
                "inputs",
                format!(
                    "{} tensors exceed this server's limit of {}",
                    tensors.len(),
                    limits.tensor_network.max_tensors
                ),
            ));
        }
        if sizes.len() > limits.tensor_network.max_indices {
            return Err(ProblemError::too_large(
                "inputs",
                format!("{} indices exceed this server's limit of {}", sizes.len(), limits.tensor_network.max_indices),
            ));
        }
        let mut carriers = vec![0u32; sizes.len()];
        for tensor in &tensors {
            tensor.iter().for_each(|&i| carriers[i as usize] += 1);
        }
        for (i, &count) in carriers.iter().enumerate() {
            if count == 1 && !output[i] {
                return Err(ProblemError::invalid(
                    "inputs",
                    format!("index '{}' appears in one tensor only and is not in the output", labels[i]),
                ));
            }
            if count == 0 && output[i] {
                return Err(ProblemError::invalid("output", format!("index '{}' is in no input tensor", labels[i])));
            }
        }
        let log2_sizes = sizes.iter().map(|&s| (s as f64).log2()).collect();
        Ok(Network { tensors, log2_sizes, carriers, output, labels, max_intermediate_log2: None })
    }

    pub fn num_tensors(&self) -> usize {
        self.tensors.len()
    }

    fn report(&self, tree: &ContractionTree, run: SolveRun) -> SolveReport {
        let slicing = self.slicing(tree);
        let objective = slicing.log2_flops() * std::f64::consts::LOG10_2;
        let sliced: Vec<&str> = slicing.indices.iter().map(|&i| self.labels[i as usize].as_str()).collect();
        let solution = json!({
            "path": tree.linear_path(),
            "cost_log10": objective,
            "largest_intermediate_log2": slicing.per_slice.log2_largest,
            "tree": tree.nested(),
            "sliced_indices": sliced,
            "slices": slicing.log2_slices.exp2(),
        });
        SolveReport::new("tensor_network", objective, objective, solution, run)
    }
}

impl Network {
    /// The tree's slicing under the bound (none without one).
    pub fn slicing(&self, tree: &ContractionTree) -> slicing::Slicing {
        match self.max_intermediate_log2 {
            Some(bound) => self.slice(tree, bound),
            None => slicing::Slicing { indices: Vec::new(), log2_slices: 0.0, per_slice: tree.cost(self) },
        }
    }
}

impl Network {
    /// The named (or default: the first) tensor_network model's scorer; Ok(None) when the
    /// registry holds none.
    fn scorer<'m>(&self, models: Models<'m>) -> Result<Option<&'m policy::PairScorer>, ProblemError> {
        let default = || models.registry.all().into_iter().find(|m| m.policy::<policy::PairScorer>().is_some());
        Ok(models.chosen::<policy::PairScorer>("tensor_network", default)?.map(|(scorer, _)| scorer))
    }
}

impl Instance for Network {
    fn solve(&self, params: &SearchParams, models: Models<'_>) -> SolveReport {
        let mut moves = anneal::TreeAnneal::new(self);
        if let Ok(Some(scorer)) = self.scorer(models) {
            moves = moves.with_policy(scorer);
        }
        let outcome = minimize_with(&moves, params);
        self.report(&outcome.solution, SolveRun::of_moves(&outcome, |energy| energy, params.seed))
    }

    fn solve_baseline(&self, name: &str, params: &SearchParams, models: Models<'_>) -> Solved {
        let start = Instant::now();
        let (tree, tries) = match name {
            "greedy" => (greedy::greedy(self), 1),
            "policy" => {
                let scorer = self.scorer(models)?.ok_or_else(|| {
                    ProblemError::invalid("model", "no tensor_network model is loaded (GET /v1/models)")
                })?;
                (policy::policy_tree(self, scorer), 1)
            }
            "random-greedy" => greedy::random_greedy(
                self,
                Duration::from_secs_f64(params.time_limit_s),
                params.seed,
                params.max_rounds,
            ),
            _ => return Err(ProblemError::invalid("method", format!("unknown baseline '{name}'"))),
        };
        let elapsed = start.elapsed();
        let objective = self.slicing(&tree).log2_flops() * std::f64::consts::LOG10_2;
        let run = SolveRun {
            rounds: tries,
            ..SolveRun::once(StopReason::Converged, elapsed, elapsed, objective, params.seed)
        };
        Ok(self.report(&tree, run))
    }

    fn size_summary(&self) -> String {
        let hyper = self.carriers.iter().filter(|&&c| c > 2).count();
        let open = self.output.iter().filter(|&&o| o).count();
        format!("tensors={} indices={} hyperedges={hyper} open={open}", self.num_tensors(), self.carriers.len())
    }
}

/// The adjacency list of `shared/data/tnco`: element t lists the tensors sharing a dimension-2
/// index with t. The text is one Python/JSON list of integer lists.
pub fn parse_adjacency(text: &str, limits: &Limits) -> Result<Network, ProblemError> {
    let lists: Vec<Vec<i64>> = serde_json::from_str(text.trim()).map_err(|e| {
        ProblemError::invalid("instance", format!("expected a list of integer lists (line {}): {e}", e.line()))
    })?;
    let n = lists.len();
    if n > limits.tensor_network.max_tensors {
        return Err(ProblemError::too_large(
            "instance",
            format!("{n} tensors exceed this server's limit of {}", limits.tensor_network.max_tensors),
        ));
    }
    let mut index_of: BTreeMap<(usize, usize), u32> = BTreeMap::new();
    let mut tensors = vec![Vec::new(); n];
    for (t, neighbours) in lists.iter().enumerate() {
        for &j in neighbours {
            let field = format!("instance[{t}]");
            if j < 0 || j as usize >= n {
                return Err(ProblemError::invalid(field, format!("tensor {j} is out of range 0..{n}")));
            }
            let j = j as usize;
            if j == t {
                return Err(ProblemError::invalid(field, "a tensor cannot share an index with itself"));
            }
            if neighbours.iter().filter(|&&k| k as usize == j).count() > 1 {
                return Err(ProblemError::invalid(field, format!("tensor {j} is listed twice")));
            }
            if !lists[j].contains(&(t as i64)) {
                return Err(ProblemError::invalid(field, format!("lists {j} but tensor {j} does not list {t}")));
            }
            let key = (t.min(j), t.max(j));
            let next = index_of.len() as u32;
            let index = *index_of.entry(key).or_insert(next);
            tensors[t].push(index);
        }
        tensors[t].sort_unstable();
    }
    let mut labels = vec![String::new(); index_of.len()];
    for (&(a, b), &i) in &index_of {
        labels[i as usize] = format!("{a}-{b}");
    }
    let count = labels.len();
    Network::new(tensors, vec![2; count], vec![false; count], labels, limits)
}

fn label_of(value: &Value, field: &str) -> Result<String, ProblemError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        _ => Err(ProblemError::invalid(field, "an index label must be a string or an integer")),
    }
}

/// opt_einsum's / cotengra's `{inputs, output, size_dict}`.
pub fn parse_einsum(value: &Value, limits: &Limits) -> Result<Network, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    let inputs = object
        .get("inputs")
        .and_then(Value::as_array)
        .ok_or_else(|| ProblemError::invalid("inputs", "expected a list of index lists"))?;
    if inputs.len() > limits.tensor_network.max_tensors {
        return Err(ProblemError::too_large(
            "inputs",
            format!("{} tensors exceed this server's limit of {}", inputs.len(), limits.tensor_network.max_tensors),
        ));
    }
    let size_dict = object
        .get("size_dict")
        .and_then(Value::as_object)
        .ok_or_else(|| ProblemError::invalid("size_dict", "expected an object from index label to size"))?;
    let mut ids: HashMap<String, u32> = HashMap::new();
    let (mut labels, mut sizes) = (Vec::new(), Vec::new());
    let mut id_of = |label: String, field: &str| -> Result<u32, ProblemError> {
        if let Some(&id) = ids.get(&label) {
            return Ok(id);
        }
        let size = size_dict
            .get(&label)
            .ok_or_else(|| ProblemError::invalid("size_dict", format!("no size for index '{label}' ({field})")))?;
        let size = size.as_u64().filter(|&s| s >= 1).ok_or_else(|| {
            ProblemError::invalid(format!("size_dict.{label}"), format!("size {size} must be a positive integer"))
        })?;
        let id = labels.len() as u32;
        ids.insert(label.clone(), id);
        labels.push(label);
        sizes.push(size);
        Ok(id)
    };
    let mut tensors = Vec::with_capacity(inputs.len());
    for (t, input) in inputs.iter().enumerate() {
        let field = format!("inputs[{t}]");
        let list = input.as_array().ok_or_else(|| ProblemError::invalid(&field, "expected a list of index labels"))?;
        let mut tensor = Vec::with_capacity(list.len());
        for label in list {
            let label = label_of(label, &field)?;
            let id = id_of(label.clone(), &field)?;
            if tensor.contains(&id) {
                return Err(ProblemError::invalid(
                    field,
                    format!("index '{label}' appears twice (traces are not supported)"),
                ));
            }
            tensor.push(id);
        }
        tensor.sort_unstable();
        tensors.push(tensor);
    }
    let mut output_ids = Vec::new();
    if let Some(output) = object.get("output") {
        let list =
            output.as_array().ok_or_else(|| ProblemError::invalid("output", "expected a list of index labels"))?;
        for label in list {
            let label = label_of(label, "output")?;
            let id = *ids
                .get(&label)
                .ok_or_else(|| ProblemError::invalid("output", format!("index '{label}' is in no input tensor")))?;
            if output_ids.contains(&id) {
                return Err(ProblemError::invalid("output", format!("index '{label}' is listed twice")));
            }
            output_ids.push(id);
        }
    }
    let mut output = vec![false; labels.len()];
    output_ids.iter().for_each(|&i| output[i as usize] = true);
    let bound = match object.get("max_intermediate_log2") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_f64().filter(|b| b.is_finite() && *b >= 0.0).ok_or_else(|| {
            ProblemError::invalid("max_intermediate_log2", "must be a non-negative number (log2 of elements)")
        })?),
    };
    let mut network = Network::new(tensors, sizes, output, labels, limits)?;
    if let Some(bound) = bound {
        let open: f64 = (0..network.output.len()).filter(|&i| network.output[i]).map(|i| network.log2_sizes[i]).sum();
        if open > bound + 1e-9 {
            return Err(ProblemError::invalid(
                "max_intermediate_log2",
                format!("the output alone holds 2^{open} elements; no slicing of summed indices meets 2^{bound}"),
            ));
        }
    }
    network.max_intermediate_log2 = bound;
    Ok(network)
}

/// A network from either input format (what the registry row's `load` serves).
pub fn load(input: ProblemInput<'_>, limits: &Limits) -> Result<Network, ProblemError> {
    match input {
        ProblemInput::Text(text) => parse_adjacency(text, limits),
        ProblemInput::Json(value) => parse_einsum(value, limits),
    }
}

/// The registry row.
pub struct TensorNetwork;

impl ProblemCode for TensorNetwork {
    /// einsum JSON: a random circuit of `nodes` qubits on a grid and `edges` cycles.
    fn generate(&self, spec: &super::GenerateSpec) -> Option<Result<String, String>> {
        let network = generate::random_circuit(spec.nodes, spec.edges, spec.seed);
        Some(serde_json::to_string(&network).map(|text| text + "\n").map_err(|e| e.to_string()))
    }

    fn instance_schema(&self) -> Value {
        json!({
            "type": "object",
            "required": ["inputs", "size_dict"],
            "properties": {
                "inputs": {"type": "array", "items": {"type": "array", "items": {"type": ["string", "integer"]}}, "description": "each tensor's index labels"},
                "output": {"type": "array", "items": {"type": ["string", "integer"]}, "description": "the open indices (default: none, a scalar)"},
                "size_dict": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
                "max_intermediate_log2": {"type": "number", "minimum": 0, "description": "memory bound: log2 of the largest intermediate per slice; indices are sliced to meet it"}
            }
        })
    }

    fn load(&self, input: ProblemInput<'_>, limits: &Limits) -> Result<Box<dyn Instance>, ProblemError> {
        Ok(Box::new(load(input, limits)?))
    }

    fn policy_loader(&self) -> Option<crate::models::PolicyLoader> {
        Some(policy::load)
    }
}
