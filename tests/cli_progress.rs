//! Progress bars of the command line: drawn on stderr when it is a terminal (a
//! pseudo-terminal here, by `tests/python/pty_run.py`), absent when it is a pipe; stdout is the
//! JSON alone either way.

mod common;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rlsolver");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rlsolver-progress-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// (stdout, stderr) of `rlsolver args` with stderr on a terminal.
fn at_a_terminal(args: &[&str]) -> (String, String) {
    let helper = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/pty_run.py");
    let output =
        Command::new("python3").arg(helper).arg(BIN).args(args).env_remove("RLSOLVER_PROGRESS").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let run: Value = serde_json::from_slice(&output.stdout).unwrap();
    let (stdout, stderr) = (run["stdout"].as_str().unwrap().to_string(), run["stderr"].as_str().unwrap().to_string());
    assert_eq!(run["status"], 0, "{stderr}");
    (stdout, stderr)
}

/// (stdout, stderr) of `rlsolver args` with both on pipes.
fn piped(args: &[&str]) -> (String, String) {
    let output = Command::new(BIN).args(args).env_remove("RLSOLVER_PROGRESS").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{stderr}");
    (String::from_utf8(output.stdout).unwrap(), stderr)
}

/// The text after the last `marker` up to the next space.
fn last_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.rsplit(marker).next().filter(|_| text.contains(marker)).and_then(|rest| rest.split_whitespace().next())
}

/// 20224 -> "20,224", as the bar prints counts.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn cut_of(gset: &str, solution: &Value) -> f64 {
    let side: Vec<u64> = solution.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    gset.lines()
        .skip(1)
        .map(|l| l.split_whitespace().map(|x| x.parse::<f64>().unwrap()).collect::<Vec<_>>())
        .filter(|f| side[f[0] as usize - 1] != side[f[1] as usize - 1])
        .map(|f| f[2])
        .sum()
}

#[test]
fn solve_draws_the_clock_and_the_incumbent_at_a_terminal_and_nothing_through_a_pipe() {
    let dir = scratch("solve");
    let gset = common::random_gset(800, 4800, 5);
    let file = dir.join("g800.txt");
    std::fs::write(&file, &gset).unwrap();
    // A round budget, not only a time limit: the same seed and budget give the same answer.
    let args = [
        "solve",
        "maxcut",
        "--input",
        file.to_str().unwrap(),
        "--time-limit",
        "30",
        "--max-rounds",
        "40",
        "--seed",
        "1",
    ];

    let (stdout, stderr) = at_a_terminal(&args);
    let report: Value = serde_json::from_str(&stdout).expect("stdout is the report alone");
    let objective = report["objective"].as_f64().unwrap();
    assert_eq!(cut_of(&gset, &report["solution"]), objective);
    assert!(stderr.contains("of the time limit"), "{stderr}");
    assert!(stderr.contains('\u{1b}'), "a bar redraws with terminal escapes: {stderr}");
    // The bar's last figure is the incumbent the report returns.
    let shown: f64 = last_after(&stderr, "incumbent ").expect("an incumbent shown").parse().unwrap();
    assert_eq!(shown, objective, "{stderr}");

    let (stdout, stderr) = piped(&args);
    let again: Value = serde_json::from_str(&stdout).expect("stdout is the report alone");
    assert_eq!(again["solution"], report["solution"], "the same seed and budget give the same answer");
    assert!(!stderr.contains("of the time limit") && !stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn train_shows_steps_rate_and_the_latest_evaluation_at_a_terminal() {
    let dir = scratch("train");
    let out = dir.join("run");
    let args = [
        "train",
        "--algo",
        "ppo_discrete",
        "--env",
        "CartPole-v1",
        "--steps",
        "4096",
        "--eval-every",
        "1024",
        "--eval-episodes",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    let (stdout, stderr) = at_a_terminal(&args);
    let summary: Value = serde_json::from_str(&stdout).expect("stdout is the summary alone");
    assert!(stderr.contains("ppo_discrete CartPole-v1"), "{stderr}");
    // The bar ends at the steps the run did (its total follows a last batch past the budget).
    let done = thousands(summary["steps"].as_u64().unwrap());
    assert!(stderr.contains(&format!("{done}/{done} steps")), "{done}: {stderr}");
    assert!(stderr.contains(" steps/s"), "a rate: {stderr}");
    // The last evaluation drawn is the run's last.
    let last = summary["evaluations"].as_array().and_then(|e| e.last()).expect("evaluations in the summary");
    let shown: f64 = last_after(&stderr, "return ").unwrap().parse().unwrap();
    assert!((shown - last["return_mean"].as_f64().unwrap()).abs() < 0.006, "{shown} vs {last}");

    let (stdout, stderr) = piped(&args);
    serde_json::from_str::<Value>(&stdout).expect("stdout is the summary alone");
    assert!(!stderr.contains("steps ·") && !stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn train_policy_and_bench_show_their_steps_and_rows_at_a_terminal() {
    let dir = scratch("policy");
    let (stdout, stderr) = at_a_terminal(&[
        "train-policy",
        "mimo",
        "--users",
        "2",
        "--antennas",
        "2",
        "--steps",
        "40",
        "--batch",
        "16",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let manifest: Value = serde_json::from_str(&stdout).expect("stdout is the manifest alone");
    assert_eq!(manifest["problem"], "mimo");
    assert!(stderr.contains("train-policy mimo") && stderr.contains("40/40 steps"), "{stderr}");
    let shown: f64 = last_after(&stderr, "sum rate ").unwrap().parse().unwrap();
    let curve = manifest["metrics"]["training_curve"].as_array().unwrap();
    let last = curve.last().unwrap()[1].as_f64().unwrap();
    assert!((shown - last).abs() < 1e-3, "{shown} vs {last}");

    let instances = dir.join("gset");
    std::fs::create_dir_all(&instances).unwrap();
    std::fs::write(instances.join("tiny1.txt"), common::random_gset(100, 300, 1)).unwrap();
    std::fs::write(instances.join("tiny2.txt"), common::random_gset(100, 300, 2)).unwrap();
    let report = dir.join("bench.md");
    let args = [
        "bench",
        "maxcut",
        "--instances",
        instances.to_str().unwrap(),
        "--time-limit",
        "0.2",
        "--seeds",
        "0,1",
        "--output",
        report.to_str().unwrap(),
    ];
    let (_, stderr) = at_a_terminal(&args);
    assert!(stderr.contains("bench maxcut") && stderr.contains("rows done"), "{stderr}");
    assert!(stderr.contains("tiny2 limit 0.2 s seed 1"), "each row is printed above the bar: {stderr}");
    assert!(std::fs::read_to_string(&report).unwrap().contains("tiny2"));
    let (_, stderr) = piped(&args);
    assert!(!stderr.contains("rows done") && !stderr.contains('\u{1b}'), "{stderr}");
    assert!(stderr.contains("tiny2 limit 0.2 s seed 1"), "rows still logged without a terminal: {stderr}");
}
