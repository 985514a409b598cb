//! The dashboard (`GET /ui`) in a real browser: headless Chromium (Debian's `chromium`)
//! driven by playwright-core (`tests/ui/dashboard.mjs`, installed by `make ui-tools`). The page's
//! answers are checked against the API and re-scored here. Screenshots of every view go to
//! `target/ui-screenshots/` (or `RLSOLVER_UI_SCREENSHOTS`).

mod common;

use common::ServeProcess;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn ui_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ui")
}

/// The browser and the driver, or None with a printed reason; under CI=true their absence fails.
fn browser_tools() -> Option<PathBuf> {
    let chromium = PathBuf::from(std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()));
    let driver = ui_dir().join("node_modules/playwright-core/package.json");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let missing: Vec<&str> = [(chromium.exists(), "chromium"), (driver.exists(), "playwright-core"), (node, "node")]
        .into_iter()
        .filter_map(|(present, name)| (!present).then_some(name))
        .collect();
    if missing.is_empty() {
        return Some(chromium);
    }
    let reason = format!("{} missing: run `make ui-tools`", missing.join(", "));
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
    eprintln!("skipped: {reason}");
    None
}

/// A fresh folder of this test process under the system's temp folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rlsolver-ui-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn screenshot_dir() -> PathBuf {
    let dir = std::env::var("RLSOLVER_UI_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ui-screenshots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the browser script in `mode`; returns what the page showed.
fn drive(chromium: &Path, mode: &str, base: &str, arg: &str) -> Value {
    let output = Command::new("node")
        .arg(ui_dir().join("dashboard.mjs"))
        .args([mode, base])
        .arg(screenshot_dir())
        .arg(arg)
        .env("CHROMIUM", chromium)
        .stderr(Stdio::inherit())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no report from the browser script: {stdout}"));
    assert!(output.status.success(), "browser script failed: {report}");
    assert!(report.get("error").is_none(), "the page did not behave: {}", report["error"]);
    assert_eq!(report["foreign_requests"], serde_json::json!([]), "the page asked another origin");
    report
}

#[test]
fn the_page_solves_trains_and_cancels_in_a_real_browser() {
    let Some(chromium) = browser_tools() else { return };
    let data = scratch("open");
    let server = ServeProcess::start(&["--training-workers", "1"], data.as_path(), Stdio::null());
    let gset = common::random_gset(800, 4800, 17);
    let gset_file = data.as_path().join("upload-G800.txt");
    std::fs::write(&gset_file, &gset).unwrap();

    let started = std::time::SystemTime::now();
    let report = drive(&chromium, "open", &server.base, gset_file.to_str().unwrap());
    assert_eq!(report["console_errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["failed_responses"], serde_json::json!([]), "{report}");
    assert!(report["problems"].as_array().unwrap().iter().any(|p| p == "maxcut"), "{report}");
    assert!(report["models"].as_u64().unwrap() >= 1, "{report}");
    assert!(report["model_curve_points"].as_u64().unwrap() >= 2, "{report}");

    // The answer the page showed is the job's, and its cut re-scores from the uploaded file.
    let client = reqwest::blocking::Client::new();
    let solve_id = report["solve_job"].as_str().unwrap();
    let job: Value = client.get(format!("{}/v1/solve/jobs/{solve_id}", server.base)).send().unwrap().json().unwrap();
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(report["solve_state"], "succeeded");
    assert_eq!(job["request"]["instance_text"].as_str(), Some(gset.as_str()), "the upload went as text");
    assert_eq!(job["request"]["options"]["seed"], 3);
    // The cut, re-scored here from the uploaded file's edges.
    let (n, edges) = common::gset_edges(&gset);
    let cut = common::cut_of(&edges, &common::sides(&job["result"]["solution"]));
    assert_eq!(job["result"]["objective"].as_f64().unwrap(), cut);
    assert_eq!(report["solve_objective"].as_f64().unwrap(), cut, "the page shows the re-scored cut");
    // Two seconds of search clear the best of 8 single-flip local optima, computed here.
    let greedy = common::greedy_best_cut(n, &edges, 8, 17);
    assert!(cut > greedy, "the job's cut {cut} is no better than a local optimum's {greedy}");
    let history = job["result"]["history"].as_array().unwrap().len() as u64;
    assert!(report["incumbent_points"].as_u64().unwrap() >= 1 && history >= 1, "{report}");

    // The curve gained points while the job ran; the job was cancelled from the page.
    let training_id = report["training_job"].as_str().unwrap();
    let (first, later) =
        (report["curve_points_first"].as_u64().unwrap(), report["curve_points_later"].as_u64().unwrap());
    assert!(first >= 2 && later >= first + 2, "{report}");
    let training: Value =
        client.get(format!("{}/v1/training/jobs/{training_id}", server.base)).send().unwrap().json().unwrap();
    assert_eq!(training["state"], "cancelled", "{training}");
    assert_eq!(training["request"]["algorithm"], "ppo_discrete");
    assert_eq!(training["request"]["hyperparameters"]["learning_rate"], 0.0003);
    let config = client
        .get(format!("{}/v1/training/jobs/{training_id}/artifacts/config.json", server.base))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(report["downloaded_name"], "config.json");
    assert_eq!(
        report["downloaded_config"].as_str(),
        Some(config.as_str()),
        "the page's download is the job's artifact"
    );
    let curve: Vec<Value> =
        client.get(format!("{}/v1/training/jobs/{training_id}/metrics", server.base)).send().unwrap().json().unwrap();
    assert!(curve.len() as u64 >= later, "the page drew {later} points of a {}-point curve", curve.len());
    assert!(report["steps_shown"].as_u64().unwrap() >= curve[later as usize - 1]["step"].as_u64().unwrap());

    // The population the page watched and cancelled.
    let population_id = report["population"].as_str().unwrap();
    let population: Value =
        client.get(format!("{}/v1/populations/{population_id}", server.base)).send().unwrap().json().unwrap();
    assert_eq!(population["state"], "cancelled", "{population}");
    let shown = report["leaderboard_rows"].as_u64().unwrap();
    assert!(shown >= 1 && shown <= population["leaderboard"].as_array().unwrap().len() as u64, "{report}");

    for view in ["problems", "model", "solve", "training", "overview", "population", "populations"] {
        let path = screenshot_dir().join(format!("{view}.png"));
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert!(written >= started, "{view}.png is left from an earlier run");
        let png = std::fs::read(&path).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{view}.png is a real screenshot");
    }
}

#[test]
fn with_api_keys_the_page_asks_for_one_and_keeps_it_in_the_session() {
    let Some(chromium) = browser_tools() else { return };
    let data = scratch("keyed");
    let keys = data.as_path().join("keys.txt");
    std::fs::write(&keys, "ui-test-key read+submit viewer\n").unwrap();
    let server = ServeProcess::start(&["--api-keys-file", keys.to_str().unwrap()], data.as_path(), Stdio::null());
    let report = drive(&chromium, "keyed", &server.base, "ui-test-key");
    assert_eq!(report["prompted"], true);
    assert_eq!(report["session_storage"], "ui-test-key");
    assert_eq!(report["local_storage_keys"], 0, "the key is not kept beyond the session");
    assert_eq!(report["new_session_prompted"], true);
    let problems: Vec<Value> = reqwest::blocking::Client::new()
        .get(format!("{}/v1/problems", server.base))
        .bearer_auth("ui-test-key")
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(report["problems_after_key"].as_u64().unwrap(), problems.len() as u64);
}

#[test]
fn the_page_and_its_library_are_served_by_the_binary_and_open_without_a_key() {
    let data = scratch("served");
    let keys = data.as_path().join("keys.txt");
    std::fs::write(&keys, "k1\n").unwrap();
    let server = ServeProcess::start(&["--api-keys-file", keys.to_str().unwrap()], data.as_path(), Stdio::null());
    let client = reqwest::blocking::Client::new();
    let page = client.get(format!("{}/ui", server.base)).send().unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.contains("default-src 'self'") && csp.contains("connect-src 'self'"), "{csp}");
    let html = page.text().unwrap();
    // Every script and stylesheet is one of ours: the app's and uPlot's script and style.
    let references: Vec<&str> = html.split(['"', '\'']).filter(|s| s.ends_with(".js") || s.ends_with(".css")).collect();
    assert_eq!(references.len(), 4, "{references:?}");
    for reference in references {
        assert!(reference.starts_with("/ui/"), "{reference}");
        let asset = client.get(format!("{}{reference}", server.base)).send().unwrap();
        assert_eq!(asset.status(), 200, "{reference}");
    }
    assert!(!html.contains("http://") && !html.contains("https://"), "no other origin in the page");
    assert_eq!(client.get(format!("{}/v1/problems", server.base)).send().unwrap().status(), 401);
    let license = client.get(format!("{}/ui/vendor/LICENSE", server.base)).send().unwrap().text().unwrap();
    assert!(license.contains("MIT License") || license.contains("The MIT License"), "{license}");

    // The vendored uPlot is byte for byte the pinned npm package's (when `make ui-tools` ran).
    let vendored =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/api/ui/vendor/uPlot.iife.min.js")).unwrap();
    let served = client.get(format!("{}/ui/vendor/uPlot.iife.min.js", server.base)).send().unwrap().bytes().unwrap();
    assert_eq!(served.as_ref(), vendored.as_slice());
    let package = ui_dir().join("node_modules/uplot/dist/uPlot.iife.min.js");
    if !package.exists() {
        let reason = "tests/ui/node_modules/uplot missing: run `make ui-tools` to check the vendored copy";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
        eprintln!("skipped the identity check: {reason}");
    } else {
        assert_eq!(std::fs::read(package).unwrap(), vendored, "src/api/ui/vendor is not tests/ui's pinned uplot");
        let pinned: Value =
            serde_json::from_str(&std::fs::read_to_string(ui_dir().join("package.json")).unwrap()).unwrap();
        let installed: Value =
            serde_json::from_str(&std::fs::read_to_string(ui_dir().join("node_modules/uplot/package.json")).unwrap())
                .unwrap();
        assert_eq!(pinned["dependencies"]["uplot"], installed["version"]);
    }
}
