//! The `rlsolver` binary as a user runs it.

mod common;

use serde_json::Value;
use std::process::Command;

fn rlsolver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rlsolver"))
}

#[test]
fn solve_prints_the_report_json_for_a_gset_file() {
    let dir = std::env::temp_dir().join(format!("rlsolver-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ring.txt");
    // An even ring of 40 (too large to enumerate, so the search runs): the maximum cut is 40,
    // and the ring's eigenvalue bound (2-regular and bipartite: n/4 * 4) proves it.
    let ring: Vec<String> = (1..=40).map(|i| format!("{i} {} 1", i % 40 + 1)).collect();
    std::fs::write(&file, format!("40 40\n{}", ring.join("\n"))).unwrap();
    let output = rlsolver()
        .args(["solve", "maxcut", "--input"])
        .arg(&file)
        .args(["--time-limit", "5", "--seed", "2", "--target", "40", "--device", "cpu"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["objective"], 40.0);
    assert_eq!(report["bound"], 40.0);
    assert_eq!(report["gap"], 0.0);
    assert_eq!(report["status"], "optimal");
    assert_eq!(report["device"], "cpu");
}

#[test]
fn solve_rejects_a_bad_file_naming_the_line() {
    let dir = std::env::temp_dir().join(format!("rlsolver-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.txt");
    std::fs::write(&file, "3 2\n1 2 1\n2 2 1\n").unwrap();
    let output = rlsolver().args(["solve", "maxcut", "--input"]).arg(&file).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3") && stderr.contains("self-loop"), "{stderr}");
}

#[test]
fn openapi_subcommand_prints_the_checked_in_document() {
    let output = rlsolver().arg("openapi").output().unwrap();
    assert!(output.status.success());
    let checked_in = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json")).unwrap();
    assert!(output.stdout == checked_in, "run `make openapi`");
}

#[test]
fn a_mistyped_algorithm_is_one_line_with_the_closest_name_even_with_backtraces_on() {
    let output = rlsolver()
        .args(["train", "--algo", "ppo-discrete", "--env", "CartPole-v1", "--steps", "10"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("did you mean 'ppo_discrete'?"), "{stderr}");
    assert!(!stderr.to_lowercase().contains("backtrace"), "{stderr}");
}

#[test]
fn problems_lists_every_problem_with_its_baselines_and_bench_names_its_targets() {
    let output = rlsolver().arg("problems").output().unwrap();
    assert!(output.status.success());
    let listed = String::from_utf8(output.stdout).unwrap();
    let rows: Vec<Vec<&str>> = listed.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), rlsolver::problems::registry().len());
    for (row, problem) in rows.iter().zip(rlsolver::problems::registry()) {
        assert_eq!((row[0], row[2]), (problem.name(), problem.baselines().join(",").as_str()));
    }
    let output = rlsolver().args(["bench", "nope"]).output().unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    for target in ["maxcut", "nphard", "tsp", "orgym", "population", "apex", "bridge", "simulators", "trading"] {
        assert!(said.contains(target), "{said}");
    }
}

#[test]
fn generate_is_each_problems_own_generator_and_names_the_ones_that_exist() {
    // A generated Gset graph has the asked size and distinct edges.
    let output =
        rlsolver().args(["generate", "maxcut", "--nodes", "30", "--edges", "60", "--seed", "4"]).output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("30 60"));
    let mut edges: Vec<(u32, u32)> = lines
        .map(|l| {
            let f: Vec<u32> = l.split_whitespace().take(2).map(|x| x.parse().unwrap()).collect();
            (f[0].min(f[1]), f[0].max(f[1]))
        })
        .collect();
    assert_eq!(edges.len(), 60);
    edges.sort_unstable();
    edges.dedup();
    assert_eq!(edges.len(), 60);
    // Every generator's output loads as its problem's instance.
    let limits = rlsolver::problems::Limits::default();
    let spec = rlsolver::problems::GenerateSpec {
        nodes: 12,
        edges: 8,
        weights: vec![1],
        colors: 3,
        cut: 2,
        class: 1,
        range: 100,
        seed: 1,
    };
    let mut generators = 0;
    for problem in rlsolver::problems::registry() {
        let Some(text) = problem.generate(&spec) else { continue };
        let text = text.unwrap();
        let json = serde_json::from_str::<Value>(&text);
        let loaded = match &json {
            Ok(json) => problem.load(rlsolver::problems::ProblemInput::Json(json), &limits),
            Err(_) => problem.load(rlsolver::problems::ProblemInput::Text(&text), &limits),
        };
        assert!(loaded.is_ok(), "{}: {text}", problem.name());
        generators += 1;
    }
    assert_eq!(generators, 9);
    let output = rlsolver().args(["generate", "mimo", "--nodes", "3"]).output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success()
            && said.contains("tensor_network")
            && said.contains("max_independent_set")
            && said.contains("knapsack")
            && said.contains("tsp")
            && said.contains("set_cover"),
        "{said}"
    );
}
