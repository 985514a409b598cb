//! Simple undirected graphs with optional node weights, read from DIMACS text (`p edge n m`,
//! `e u v`, 1-indexed, `n v w` node weights, `c` comments; the format of BHOSLIB and of the
//! DIMACS colouring and clique challenges) or JSON (`{num_nodes, edges: [[u, v], ...],
//! weights?}`, 0-indexed). Shared by the set problems and colouring; errors name the line or field.

use super::{Limits, ProblemError};
use petgraph::graph::UnGraph;
use serde_json::Value;
use std::collections::HashSet;

/// Nodes 0..num_nodes, each edge once as (u, v) with u < v, sorted.
#[derive(Debug, Clone)]
pub struct Graph {
    pub num_nodes: usize,
    pub edges: Vec<(u32, u32)>,
    /// Node weights (all positive and finite); None: every node weighs 1.
    pub weights: Option<Vec<f64>>,
}

impl Graph {
    pub fn weight(&self, node: usize) -> f64 {
        self.weights.as_ref().map_or(1.0, |w| w[node])
    }

    /// Neighbour lists (petgraph's adjacency, for the problems' local searches).
    pub fn adjacency(&self) -> Vec<Vec<u32>> {
        let graph: UnGraph<(), (), u32> = UnGraph::from_edges(self.edges.iter().copied());
        let mut lists: Vec<Vec<u32>> = (0..self.num_nodes)
            .map(|i| {
                if i < graph.node_count() {
                    graph.neighbors((i as u32).into()).map(|n| n.index() as u32).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        for list in &mut lists {
            list.sort_unstable();
        }
        lists
    }

    /// The complement graph, or a `too_large` error when it has more edges than `limits` allow.
    pub fn complement(&self, field: &str, limits: &Limits) -> Result<Graph, ProblemError> {
        let n = self.num_nodes;
        let total = n * n.saturating_sub(1) / 2;
        let missing = total - self.edges.len();
        if missing > limits.max_edges {
            return Err(ProblemError::too_large(
                field,
                format!("the complement graph has {missing} edges, above this server's limit of {}", limits.max_edges),
            ));
        }
        let present: HashSet<(u32, u32)> = self.edges.iter().copied().collect();
        let mut edges = Vec::with_capacity(missing);
        for u in 0..n as u32 {
            for v in u + 1..n as u32 {
                if !present.contains(&(u, v)) {
                    edges.push((u, v));
                }
            }
        }
        Ok(Graph { num_nodes: n, edges, weights: self.weights.clone() })
    }
}

/// A graph needs at least one node and at most `limits.max_nodes`: the check every graph reader
/// (these, Max-Cut's, partitioning's) makes before reading edges.
pub fn check_node_count(num_nodes: usize, field: &str, limits: &Limits) -> Result<(), ProblemError> {
    if num_nodes == 0 {
        return Err(ProblemError::invalid(field, "the graph needs at least one node"));
    }
    if num_nodes > limits.max_nodes {
        return Err(ProblemError::too_large(
            field,
            format!("{num_nodes} nodes exceed this server's limit of {}", limits.max_nodes),
        ));
    }
    Ok(())
}

/// Collects edges with the checks both formats share. `base` is 1 for DIMACS (ids shown as in
/// the file) and 0 for JSON.
struct Builder<'a> {
    num_nodes: usize,
    base: i64,
    seen: HashSet<(u32, u32)>,
    edges: Vec<(u32, u32)>,
    limits: &'a Limits,
}

impl<'a> Builder<'a> {
    fn new(num_nodes: usize, base: i64, field: &str, limits: &'a Limits) -> Result<Self, ProblemError> {
        check_node_count(num_nodes, field, limits)?;
        Ok(Builder { num_nodes, base, seen: HashSet::new(), edges: Vec::new(), limits })
    }

    fn node(&self, id: i64, field: &str) -> Result<u32, ProblemError> {
        let index = id - self.base;
        if index < 0 || index >= self.num_nodes as i64 {
            return Err(ProblemError::invalid(
                field,
                format!("node {id} is out of range {}..={}", self.base, self.num_nodes as i64 - 1 + self.base),
            ));
        }
        Ok(index as u32)
    }

    /// A repeated edge (DIMACS colouring files list some both ways) is kept once.
    fn push(&mut self, u: i64, v: i64, field: &str) -> Result<(), ProblemError> {
        let (u, v) = (self.node(u, field)?, self.node(v, field)?);
        if u == v {
            return Err(ProblemError::invalid(field, format!("self-loop on node {}", i64::from(u) + self.base)));
        }
        let key = (u.min(v), u.max(v));
        if self.seen.insert(key) {
            if self.edges.len() >= self.limits.max_edges {
                return Err(ProblemError::too_large(
                    field,
                    format!("more than this server's limit of {} edges", self.limits.max_edges),
                ));
            }
            self.edges.push(key);
        }
        Ok(())
    }

    fn finish(mut self, weights: Option<Vec<f64>>) -> Graph {
        self.edges.sort_unstable();
        Graph { num_nodes: self.num_nodes, edges: self.edges, weights }
    }
}

fn check_weight(weight: f64, field: &str) -> Result<f64, ProblemError> {
    if !weight.is_finite() || weight <= 0.0 {
        return Err(ProblemError::invalid(field, format!("node weight {weight} must be a positive finite number")));
    }
    Ok(weight)
}

/// The sum of the weights must be finite too, or every objective overflows.
fn check_total(weights: &Option<Vec<f64>>, field: &str) -> Result<(), ProblemError> {
    if weights.as_ref().is_some_and(|w| !w.iter().sum::<f64>().is_finite()) {
        return Err(ProblemError::invalid(field, "the node weights sum past a 64-bit float: scale them down"));
    }
    Ok(())
}

/// DIMACS text; the edge lines must number the header's m (repeats included).
pub fn parse_dimacs(text: &str, limits: &Limits) -> Result<Graph, ProblemError> {
    let mut builder: Option<(Builder, usize, usize)> = None;
    let mut weights: Option<Vec<f64>> = None;
    for (index, line) in text.lines().enumerate() {
        let field = format!("line {}", index + 1);
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(&kind) = tokens.first() else { continue };
        let integer = |token: &str, what: &str| {
            token
                .parse::<i64>()
                .map_err(|_| ProblemError::invalid(&field, format!("{what} '{token}' is not an integer")))
        };
        match kind {
            "c" => {}
            "p" => {
                if builder.is_some() {
                    return Err(ProblemError::invalid(&field, "a second `p` line"));
                }
                if tokens.len() != 4 {
                    return Err(ProblemError::invalid(
                        &field,
                        format!("expected `p edge n m`, found '{}'", line.trim()),
                    ));
                }
                let count = |token: &str, what: &str| {
                    token.parse::<usize>().map_err(|_| {
                        ProblemError::invalid(&field, format!("{what} '{token}' is not a non-negative integer"))
                    })
                };
                let (n, m) = (count(tokens[2], "number of nodes")?, count(tokens[3], "number of edges")?);
                if m > limits.max_edges.saturating_mul(2) {
                    return Err(ProblemError::too_large(
                        &field,
                        format!("{m} edges exceed this server's limit of {}", limits.max_edges),
                    ));
                }
                builder = Some((Builder::new(n, 1, &field, limits)?, m, 0));
            }
            "e" | "n" => {
                let Some((graph, declared, read)) = builder.as_mut() else {
                    return Err(ProblemError::invalid(&field, "an edge or node line before the `p edge n m` header"));
                };
                if tokens.len() != 3 {
                    let shape = if kind == "e" { "e u v" } else { "n v weight" };
                    return Err(ProblemError::invalid(&field, format!("expected `{shape}`, found '{}'", line.trim())));
                }
                if kind == "e" {
                    if *read == *declared {
                        return Err(ProblemError::invalid(
                            &field,
                            format!("more edge lines than the {declared} the header declares"),
                        ));
                    }
                    graph.push(integer(tokens[1], "node")?, integer(tokens[2], "node")?, &field)?;
                    *read += 1;
                } else {
                    let node = graph.node(integer(tokens[1], "node")?, &field)? as usize;
                    let weight = tokens[2].parse::<f64>().map_err(|_| {
                        ProblemError::invalid(&field, format!("weight '{}' is not a number", tokens[2]))
                    })?;
                    weights.get_or_insert_with(|| vec![1.0; graph.num_nodes])[node] = check_weight(weight, &field)?;
                }
            }
            other => {
                return Err(ProblemError::invalid(
                    &field,
                    format!("unknown line type '{other}' (expected c, p, e or n)"),
                ))
            }
        }
    }
    let (graph, declared, read) = builder.ok_or_else(|| ProblemError::invalid("line 1", "no `p edge n m` header"))?;
    if read != declared {
        return Err(ProblemError::invalid(
            "line 1",
            format!("the header declares {declared} edges but the file has {read} edge lines"),
        ));
    }
    check_total(&weights, "weights")?;
    Ok(graph.finish(weights))
}

/// JSON `{num_nodes, edges: [[u, v], ...], weights?: [...]}`, 0-indexed.
pub fn parse_json(value: &Value, limits: &Limits) -> Result<Graph, ProblemError> {
    let object = value.as_object().ok_or_else(|| ProblemError::invalid("instance", "expected a JSON object"))?;
    if let Some(unknown) = object.keys().find(|k| !["num_nodes", "edges", "weights"].contains(&k.as_str())) {
        return Err(ProblemError::invalid(unknown.as_str(), "unknown field; expected num_nodes, edges, weights"));
    }
    let num_nodes = object
        .get("num_nodes")
        .ok_or_else(|| ProblemError::invalid("num_nodes", "missing"))?
        .as_u64()
        .ok_or_else(|| ProblemError::invalid("num_nodes", "must be a positive integer"))?;
    let num_nodes = usize::try_from(num_nodes).unwrap_or(usize::MAX);
    let mut builder = Builder::new(num_nodes, 0, "num_nodes", limits)?;
    let edges = object
        .get("edges")
        .ok_or_else(|| ProblemError::invalid("edges", "missing"))?
        .as_array()
        .ok_or_else(|| ProblemError::invalid("edges", "must be an array of [u, v] pairs"))?;
    if edges.len() > limits.max_edges {
        return Err(ProblemError::too_large(
            "edges",
            format!("{} edges exceed this server's limit of {}", edges.len(), limits.max_edges),
        ));
    }
    for (k, edge) in edges.iter().enumerate() {
        let field = format!("edges[{k}]");
        let pair = edge
            .as_array()
            .filter(|p| p.len() == 2)
            .ok_or_else(|| ProblemError::invalid(&field, "must be a pair [u, v] of node ids"))?;
        let id = |v: &Value| v.as_i64().ok_or_else(|| ProblemError::invalid(&field, "node ids must be integers"));
        builder.push(id(&pair[0])?, id(&pair[1])?, &field)?;
    }
    let weights = match object.get("weights") {
        None | Some(Value::Null) => None,
        Some(list) => {
            let list = list
                .as_array()
                .filter(|l| l.len() == num_nodes)
                .ok_or_else(|| ProblemError::invalid("weights", format!("must be an array of {num_nodes} numbers")))?;
            let weights = list
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let field = format!("weights[{i}]");
                    check_weight(w.as_f64().ok_or_else(|| ProblemError::invalid(&field, "must be a number"))?, &field)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(weights)
        }
    };
    check_total(&weights, "weights")?;
    Ok(builder.finish(weights))
}

/// An edge (u, v), u < v.
pub type Edge = (u32, u32);

/// A random graph with a planted structure, for the generated benchmarks: nodes get the labels
/// 0..groups in equal shares (shuffled), then `within` distinct edges join nodes of one label
/// and `across` distinct edges join nodes of different labels, uniformly. With `clique`, one node
/// of each label is joined to one of every other label first (a planted k-clique: a colouring by
/// label is then optimal). Returns the sorted edges.
pub fn planted(
    num_nodes: usize,
    groups: usize,
    within: usize,
    across: usize,
    clique: bool,
    seed: u64,
) -> Result<Vec<Edge>, String> {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    if groups == 0 || groups > num_nodes {
        return Err(format!("need 1..={num_nodes} groups, got {groups}"));
    }
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut labels: Vec<u32> = (0..num_nodes).map(|i| (i % groups) as u32).collect();
    labels.shuffle(&mut rng);
    let sizes: Vec<usize> = (0..groups).map(|g| labels.iter().filter(|&&l| l as usize == g).count()).collect();
    let pairs_within: usize = sizes.iter().map(|&s| s * s.saturating_sub(1) / 2).sum();
    let pairs_across = num_nodes * num_nodes.saturating_sub(1) / 2 - pairs_within;
    // Rejection sampling stays fast below half of the pairs.
    if 2 * within > pairs_within || 2 * (across + if clique { groups * groups } else { 0 }) > pairs_across {
        return Err(format!(
            "too many edges: {within} within and {across} across, of {pairs_within} and {pairs_across} pairs (at most half)"
        ));
    }
    let mut edges: HashSet<(u32, u32)> = HashSet::new();
    if clique {
        let heads: Vec<u32> = (0..groups)
            .map(|g| labels.iter().position(|&l| l as usize == g).expect("a node per group") as u32)
            .collect();
        for (a, &u) in heads.iter().enumerate() {
            for &v in &heads[a + 1..] {
                edges.insert((u.min(v), u.max(v)));
            }
        }
    }
    for (count, same) in [(within, true), (across, false)] {
        let goal = edges.len() + count;
        while edges.len() < goal {
            let (u, v) = (rng.gen_range(0..num_nodes as u32), rng.gen_range(0..num_nodes as u32));
            if u != v && (labels[u as usize] == labels[v as usize]) == same {
                edges.insert((u.min(v), u.max(v)));
            }
        }
    }
    let mut edges: Vec<(u32, u32)> = edges.into_iter().collect();
    edges.sort_unstable();
    Ok(edges)
}

/// DIMACS text of a graph (`p edge n m`, `e u v`, 1-indexed).
pub fn to_dimacs(num_nodes: usize, edges: &[(u32, u32)]) -> String {
    let mut text = format!("p edge {num_nodes} {}\n", edges.len());
    for &(u, v) in edges {
        text.push_str(&format!("e {} {}\n", u + 1, v + 1));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimacs_reads_edges_once_and_names_the_line_of_each_error() {
        let limits = Limits::default();
        let graph = parse_dimacs("c a triangle\np edge 3 4 \ne 1 2\ne 2 3\ne 3 1\ne 2 1\n", &limits).unwrap();
        assert_eq!(graph.edges, vec![(0, 1), (0, 2), (1, 2)]);
        let error = |text: &str| parse_dimacs(text, &limits).unwrap_err().to_string();
        assert!(error("p edge 3 1\ne 1 4\n").starts_with("line 2: node 4 is out of range 1..=3"));
        assert!(error("p edge 3 2\ne 1 2\n").contains("declares 2 edges but the file has 1"));
        assert!(error("p edge 3 1\ne 1 2\ne 2 3\n").starts_with("line 3: more edge lines"));
        assert!(error("p edge 3 1\ne 2 2\n").starts_with("line 2: self-loop"));
        assert!(error("p edge 3 1\nn 2 -1\ne 1 2\n").starts_with("line 2: node weight -1"));
        assert!(error("e 1 2\n").starts_with("line 1: an edge or node line before"));
    }

    #[test]
    fn the_complement_has_every_missing_pair() {
        let graph = Graph { num_nodes: 4, edges: vec![(0, 1), (2, 3)], weights: None };
        let complement = graph.complement("instance", &Limits::default()).unwrap();
        assert_eq!(complement.edges, vec![(0, 2), (0, 3), (1, 2), (1, 3)]);
        assert_eq!(graph.adjacency(), vec![vec![1], vec![0], vec![3], vec![2]]);
    }
}
