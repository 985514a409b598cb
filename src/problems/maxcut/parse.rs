//! Max-Cut instance readers: Gset text (1-indexed) and JSON (0-indexed), with errors that name
//! the line or the field.

use super::MaxCutInstance;
use crate::problems::{Limits, ProblemError};
use std::collections::HashSet;

/// Checks shared by both formats; `field` names the edge for the error message.
struct EdgeChecker<'a> {
    num_nodes: usize,
    seen: HashSet<(u32, u32)>,
    edges: Vec<(u32, u32, f64)>,
    limits: &'a Limits,
}

impl<'a> EdgeChecker<'a> {
    fn new(num_nodes: usize, num_edges_hint: usize, field: &str, limits: &'a Limits) -> Result<Self, ProblemError> {
        crate::problems::graph::check_node_count(num_nodes, field, limits)?;
        Ok(EdgeChecker {
            num_nodes,
            seen: HashSet::with_capacity(num_edges_hint.min(limits.max_edges)),
            edges: Vec::with_capacity(num_edges_hint.min(limits.max_edges)),
            limits,
        })
    }

    /// `u`, `v` are 0-indexed here; `shown_base` is added back for messages (1 for Gset).
    fn push(&mut self, u: i64, v: i64, w: f64, field: &str, shown_base: i64) -> Result<(), ProblemError> {
        let n = self.num_nodes as i64;
        for node in [u, v] {
            if node < 0 || node >= n {
                return Err(ProblemError::invalid(
                    field,
                    format!("node {} is out of range {}..={}", node + shown_base, shown_base, n - 1 + shown_base),
                ));
            }
        }
        if u == v {
            return Err(ProblemError::invalid(field, format!("self-loop on node {}", u + shown_base)));
        }
        if !w.is_finite() {
            return Err(ProblemError::invalid(field, "weight must be a finite number"));
        }
        let key = (u.min(v) as u32, u.max(v) as u32);
        if !self.seen.insert(key) {
            return Err(ProblemError::invalid(
                field,
                format!("duplicate edge {{{}, {}}}", key.0 as i64 + shown_base, key.1 as i64 + shown_base),
            ));
        }
        if self.edges.len() >= self.limits.max_edges {
            return Err(ProblemError::too_large(
                field,
                format!("more than this server's limit of {} edges", self.limits.max_edges),
            ));
        }
        self.edges.push((u as u32, v as u32, w));
        Ok(())
    }

    /// Each weight is finite, but their sum can still overflow, and every energy and cut with
    /// it: the total of |w| must be finite too.
    fn finish(self) -> Result<MaxCutInstance, ProblemError> {
        let total: f64 = self.edges.iter().map(|e| e.2.abs()).sum();
        if !total.is_finite() {
            return Err(ProblemError::invalid(
                "edges",
                "the sum of the absolute edge weights overflows a 64-bit float: scale the weights down",
            ));
        }
        Ok(MaxCutInstance::new(self.num_nodes, self.edges))
    }
}

/// Gset text: `n m`, then m lines `u v w` (1-indexed). Trailing spaces, CRLF and a missing final
/// newline are fine; blank lines only at the end.
pub fn parse_gset(text: &str, limits: &Limits) -> Result<MaxCutInstance, ProblemError> {
    let mut lines = text.lines().enumerate().map(|(i, line)| (i + 1, line.trim()));
    let (_, header) = lines.next().filter(|(_, l)| !l.is_empty()).ok_or_else(|| {
        ProblemError::invalid("line 1", "expected the header `n m` (number of nodes, number of edges)")
    })?;
    let header_fields: Vec<&str> = header.split_whitespace().collect();
    let parse_count = |token: &str, what: &str| {
        token
            .parse::<usize>()
            .map_err(|_| ProblemError::invalid("line 1", format!("{what} '{token}' is not a non-negative integer")))
    };
    if header_fields.len() != 2 {
        return Err(ProblemError::invalid("line 1", format!("expected `n m`, found '{header}'")));
    }
    let num_nodes = parse_count(header_fields[0], "number of nodes")?;
    let num_edges = parse_count(header_fields[1], "number of edges")?;
    if num_edges > limits.max_edges {
        return Err(ProblemError::too_large(
            "line 1",
            format!("{num_edges} edges exceed this server's limit of {}", limits.max_edges),
        ));
    }
    let mut checker = EdgeChecker::new(num_nodes, num_edges, "line 1", limits)?;
    let mut read = 0usize;
    let mut blank_seen_at = None;
    for (number, line) in lines {
        let field = format!("line {number}");
        if line.is_empty() {
            blank_seen_at.get_or_insert(number);
            continue;
        }
        if let Some(blank) = blank_seen_at {
            return Err(ProblemError::invalid(field, format!("edge after the blank line {blank}")));
        }
        if read == num_edges {
            return Err(ProblemError::invalid(
                field,
                format!("more edge lines than the {num_edges} the header declares"),
            ));
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.len() != 3 {
            return Err(ProblemError::invalid(field, format!("expected `u v w`, found '{line}'")));
        }
        let node = |token: &str| {
            token.parse::<i64>().map_err(|_| ProblemError::invalid(&field, format!("node '{token}' is not an integer")))
        };
        let (u, v) = (node(tokens[0])?, node(tokens[1])?);
        let w = tokens[2]
            .parse::<f64>()
            .map_err(|_| ProblemError::invalid(&field, format!("weight '{}' is not a number", tokens[2])))?;
        checker.push(u - 1, v - 1, w, &field, 1)?;
        read += 1;
    }
    if read != num_edges {
        return Err(ProblemError::invalid(
            "line 1",
            format!("the header declares {num_edges} edges but the file has {read}"),
        ));
    }
    checker.finish()
}

/// JSON: `{"num_nodes": n, "edges": [[u, v, w], ...]}` with 0-indexed nodes; w defaults to 1.
pub fn parse_json(value: &serde_json::Value, limits: &Limits) -> Result<MaxCutInstance, ProblemError> {
    let object = value
        .as_object()
        .ok_or_else(|| ProblemError::invalid("instance", "expected an object with num_nodes and edges"))?;
    if let Some(unknown) = object.keys().find(|k| !matches!(k.as_str(), "num_nodes" | "edges")) {
        return Err(ProblemError::invalid(format!("instance.{unknown}"), "unknown field"));
    }
    let num_nodes = object
        .get("num_nodes")
        .ok_or_else(|| ProblemError::invalid("num_nodes", "missing"))?
        .as_u64()
        .ok_or_else(|| ProblemError::invalid("num_nodes", "must be a positive integer"))?;
    let edges = object
        .get("edges")
        .ok_or_else(|| ProblemError::invalid("edges", "missing"))?
        .as_array()
        .ok_or_else(|| ProblemError::invalid("edges", "must be an array of [u, v, w]"))?;
    if edges.len() > limits.max_edges {
        return Err(ProblemError::too_large(
            "edges",
            format!("{} edges exceed this server's limit of {}", edges.len(), limits.max_edges),
        ));
    }
    let num_nodes = usize::try_from(num_nodes).unwrap_or(usize::MAX);
    let mut checker = EdgeChecker::new(num_nodes, edges.len(), "num_nodes", limits)?;
    for (k, edge) in edges.iter().enumerate() {
        let field = format!("edges[{k}]");
        let items = edge
            .as_array()
            .filter(|a| a.len() == 2 || a.len() == 3)
            .ok_or_else(|| ProblemError::invalid(&field, "must be [u, v] or [u, v, w]"))?;
        let node = |i: usize| {
            items[i]
                .as_i64()
                .filter(|_| items[i].is_i64() || items[i].is_u64())
                .ok_or_else(|| ProblemError::invalid(format!("{field}[{i}]"), "node must be an integer"))
        };
        let (u, v) = (node(0)?, node(1)?);
        let w = match items.get(2) {
            None => 1.0,
            Some(w) => {
                w.as_f64().ok_or_else(|| ProblemError::invalid(format!("{field}[2]"), "weight must be a number"))?
            }
        };
        checker.push(u, v, w, &field, 0)?;
    }
    checker.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limits() -> Limits {
        Limits::default()
    }

    fn field_of(result: Result<MaxCutInstance, ProblemError>) -> String {
        result.map(|_| ()).unwrap_err().field().unwrap().to_string()
    }

    #[test]
    fn gset_text_with_trailing_spaces_crlf_negative_weights_and_no_final_newline_parses() {
        let graph = parse_gset("3 3 \r\n1 2 1\r\n2 3 -1 \n1 3 2.5", &limits()).unwrap();
        assert_eq!(graph.num_nodes(), 3);
        assert_eq!(graph.edges(), &[(0, 1, 1.0), (1, 2, -1.0), (0, 2, 2.5)]);
    }

    #[test]
    fn gset_errors_name_the_offending_line() {
        let cases = [
            ("", "line 1"),
            ("3", "line 1"),
            ("3 x", "line 1"),
            ("3 2\n1 2 1\n", "line 1"),      // fewer edges than declared
            ("3 1\n1 2 1\n2 3 1", "line 3"), // more edges than declared
            ("3 1\n1 1 1", "line 2"),        // self-loop
            ("3 1\n1 4 1", "line 2"),        // out of range
            ("3 1\n0 2 1", "line 2"),        // 1-indexed
            ("3 2\n1 2 1\n2 1 1", "line 3"), // duplicate
            ("3 1\n1 2 nan", "line 2"),      // non-finite
            ("3 1\n1 2 inf", "line 2"),
            ("3 1\n1 2", "line 2"), // missing weight
            ("3 1\n1 2 1 7", "line 2"),
            ("3 2\n1 2 1\n\n2 3 1", "line 4"), // blank line inside
        ];
        for (text, line) in cases {
            assert_eq!(field_of(parse_gset(text, &limits())), line, "input {text:?}");
        }
    }

    #[test]
    fn weights_whose_total_overflows_are_rejected_naming_the_edges() {
        let value = json!({"num_nodes": 3, "edges": [[0, 1, 1e308], [1, 2, 1e308], [0, 2, 1e308]]});
        assert_eq!(field_of(parse_json(&value, &limits())), "edges");
        assert_eq!(field_of(parse_gset("3 3\n1 2 1e308\n2 3 1e308\n1 3 1e308", &limits())), "edges");
    }

    #[test]
    fn sizes_over_the_limits_are_rejected_as_too_large() {
        let small = Limits { max_nodes: 10, max_edges: 2, ..Limits::default() };
        assert!(matches!(parse_gset("11 1\n1 2 1", &small), Err(ProblemError::TooLarge { .. })));
        assert!(matches!(parse_gset("5 3\n1 2 1\n2 3 1\n3 4 1", &small), Err(ProblemError::TooLarge { .. })));
        let json = json!({"num_nodes": 11, "edges": []});
        assert!(matches!(parse_json(&json, &small), Err(ProblemError::TooLarge { .. })));
    }

    #[test]
    fn json_instances_parse_zero_indexed_with_optional_weights() {
        let graph = parse_json(&json!({"num_nodes": 3, "edges": [[0, 1, 2], [1, 2]]}), &limits()).unwrap();
        assert_eq!(graph.edges(), &[(0, 1, 2.0), (1, 2, 1.0)]);
    }

    #[test]
    fn json_errors_name_the_field() {
        let cases = [
            (json!([]), "instance"),
            (json!({"edges": []}), "num_nodes"),
            (json!({"num_nodes": -1, "edges": []}), "num_nodes"),
            (json!({"num_nodes": 0, "edges": []}), "num_nodes"),
            (json!({"num_nodes": 3}), "edges"),
            (json!({"num_nodes": 3, "edges": [[0, 3, 1]]}), "edges[0]"),
            (json!({"num_nodes": 3, "edges": [[0, 1], [1, 1]]}), "edges[1]"),
            (json!({"num_nodes": 3, "edges": [[0, 1], [1, 0]]}), "edges[1]"),
            (json!({"num_nodes": 3, "edges": [[0, 1, "x"]]}), "edges[0][2]"),
            (json!({"num_nodes": 3, "edges": [[0.5, 1]]}), "edges[0][0]"),
            (json!({"num_nodes": 3, "edges": [[0]]}), "edges[0]"),
            (json!({"num_nodes": 3, "edges": [], "extra": 1}), "instance.extra"),
        ];
        for (value, field) in cases {
            assert_eq!(field_of(parse_json(&value, &limits())), field, "input {value}");
        }
    }
}
