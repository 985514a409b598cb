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
    std::fs::write(&file, "6 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 6 1\n6 1 1").unwrap();
    let output = rlsolver()
        .args(["solve", "maxcut", "--input"])
        .arg(&file)
        .args(["--time-limit", "5", "--seed", "2", "--target", "6", "--device", "cpu"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["objective"], 6.0);
    assert_eq!(report["status"], "target_reached");
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
