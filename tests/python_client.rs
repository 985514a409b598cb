//! A Python client generated from the checked-in `openapi/openapi.json` by openapi-python-client
//! (`make client-tools` installs it into .venv; `make test` does so first) solves a Max-Cut
//! instance and runs a training job against the live server. A schema that lies about a
//! response fails here: the generated models parse every response.

mod common;

use common::start_server;
use rlsolver::api::state::ServerConfig;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn a_generated_python_client_solves_max_cut_and_runs_a_training_job() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join(".venv/bin");
    if !bin.join("openapi-python-client").exists() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true but .venv lacks openapi-python-client (make client-tools)"
        );
        eprintln!("skipping: .venv/bin/openapi-python-client is missing (make client-tools)");
        return;
    }
    let out = std::env::temp_dir().join(format!("rlsolver-python-client-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let generated = Command::new(bin.join("openapi-python-client"))
        .args(["generate", "--meta", "none", "--path"])
        .arg(root.join("openapi/openapi.json"))
        .arg("--output-path")
        .arg(out.join("rlsolver_client"))
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        out.join("rlsolver_client/client.py").exists(),
        "generation failed: {}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let base = start_server(ServerConfig::default());
    let run = Command::new(bin.join("python"))
        .arg(root.join("tests/fixtures/client/use_client.py"))
        .arg(&out)
        .arg(&base)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "client script failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let result: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(result["cut"], 4.0, "{result}");
    assert_eq!(result["job_state"], "succeeded", "{result}");
    assert_eq!(result["evaluations"], 2, "{result}");
    let _ = std::fs::remove_dir_all(&out);
}
