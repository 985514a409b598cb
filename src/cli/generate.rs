//! `rlsolver generate`: a random instance of a problem that has a generator.

use anyhow::Result;
use clap::Args;
use rlsolver::problems;

#[derive(Args)]
pub struct GenerateArgs {
    /// Problem: maxcut (--nodes, --edges, --weights: Gset text), number_partitioning (--nodes
    /// numbers of --edges bits each: JSON), graph_coloring (--nodes, --edges between --colors
    /// planted colour classes plus a planted clique: DIMACS) or graph_partitioning (--nodes in
    /// two planted halves, --edges inside them and --cut across: METIS) or max_independent_set
    /// (--nodes groups of a forced model RB graph as BHOSLIB's frbN-K, optimum N: DIMACS) or
    /// tensor_network (a random circuit of --nodes qubits on a grid and --edges cycles: einsum JSON)
    /// or knapsack (--nodes items of Pisinger's --class with coefficients up to --range: his text)
    /// or tsp (--nodes cities, --class 1 uniform or 2 clustered as the DIMACS TSP Challenge's:
    /// TSPLIB text) or set_cover (--nodes rows, --edges columns, --class the density in percent,
    /// costs on 1..=--range: OR-Library's SCP text); each is the problem's own `Problem::generate`.
    problem: String,
    #[arg(long)]
    nodes: usize,
    /// Edges (number_partitioning: bits; tensor_network: cycles; max_independent_set: unused).
    #[arg(long, default_value_t = 0)]
    edges: usize,
    /// Comma-separated integer weights drawn uniformly, e.g. 1,-1.
    #[arg(long, default_value = "1", value_delimiter = ',', allow_hyphen_values = true)]
    weights: Vec<i64>,
    /// graph_coloring: the planted colour classes.
    #[arg(long, default_value_t = 8)]
    colors: usize,
    /// graph_partitioning: the edges across the planted halves.
    #[arg(long, default_value_t = 0)]
    cut: usize,
    /// knapsack: Pisinger's class (1-6, 9, 11-16; 1 uncorrelated, 3 strongly correlated, 11-16
    /// his hard classes); tsp: 1 uniform, 2 clustered; set_cover: the density in percent.
    #[arg(long, default_value_t = 1)]
    class: usize,
    /// knapsack: the coefficient range R; set_cover: the highest cost (OR-Library: 100).
    #[arg(long, default_value_t = 1000)]
    range: u64,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(args: GenerateArgs) -> Result<()> {
    let problem = problems::find(&args.problem)?;
    let spec = problems::GenerateSpec {
        nodes: args.nodes,
        edges: args.edges,
        weights: args.weights,
        colors: args.colors,
        cut: args.cut,
        class: args.class,
        range: args.range,
        seed: args.seed,
    };
    let text = problem.generate(&spec).ok_or_else(|| {
        // Which problems generate, asked with a three-node spec (cheap for every generator).
        let tiny = problems::GenerateSpec { nodes: 3, edges: 1, cut: 0, colors: 1, ..spec.clone() };
        let generators: Vec<&str> =
            problems::registry().iter().filter(|p| p.generate(&tiny).is_some()).map(|p| p.name()).collect();
        anyhow::anyhow!("{} has no generator; these do: {}", args.problem, generators.join(", "))
    })?;
    print!("{}", text.map_err(|e| anyhow::anyhow!(e))?);
    Ok(())
}
