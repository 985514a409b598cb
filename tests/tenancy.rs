//! Tenancy: with keys configured every /v1 request needs one; scopes decide reads
//! (`read`) and everything else (`submit`); a key sees and acts on only the jobs, populations and
//! promoted models it created, unless it has `admin`; probes and metrics stay open.

mod common;

use common::start_server;
use reqwest::blocking::{Client, RequestBuilder};
use rlsolver::api::auth::KeyEntry;
use rlsolver::api::state::ServerConfig;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

struct Api {
    c: Client,
    base: String,
}

impl Api {
    fn get(&self, key: Option<&str>, path: &str) -> reqwest::blocking::Response {
        with_key(self.c.get(format!("{}{path}", self.base)), key).send().unwrap()
    }

    fn post(&self, key: Option<&str>, path: &str, body: Value) -> reqwest::blocking::Response {
        with_key(self.c.post(format!("{}{path}", self.base)).json(&body), key).send().unwrap()
    }

    fn delete(&self, key: Option<&str>, path: &str) -> reqwest::blocking::Response {
        with_key(self.c.delete(format!("{}{path}", self.base)), key).send().unwrap()
    }

    fn ids(&self, key: &str, path: &str) -> Vec<String> {
        let list: Value = self.get(Some(key), path).json().unwrap();
        list.as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap().to_string()).collect()
    }
}

fn with_key(request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
    match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

const ALICE: &str = "alice-key";
const BOB: &str = "bob-key";
const READER: &str = "reader-key";
const ROOT: &str = "root-key";

#[test]
fn each_key_sees_and_acts_on_its_own_unless_admin() {
    let keys =
        ["alice-key read+submit alice", "bob-key read+submit bob", "reader-key read reader", "root-key admin root"];
    let config = ServerConfig {
        api_keys: keys.iter().map(|k| KeyEntry::parse(k).unwrap()).collect(),
        ..ServerConfig::default()
    };
    let api =
        Api { c: Client::builder().timeout(Duration::from_secs(60)).build().unwrap(), base: start_server(config) };

    // Rule: reads need a key too (401 without or with a wrong one); probes and metrics do not.
    for path in ["/v1/training/jobs", "/v1/solve/jobs", "/v1/populations", "/v1/models", "/v1/problems"] {
        assert_eq!(api.get(None, path).status(), 401, "{path}");
        assert_eq!(api.get(Some("guess"), path).status(), 401, "{path}");
        assert_eq!(api.get(Some(READER), path).status(), 200, "{path}");
    }
    for path in ["/health", "/ready", "/metrics", "/openapi.json"] {
        assert_eq!(api.get(None, path).status(), 200, "{path}");
    }

    // Rule: `submit` for anything but reads; a read-only key gets 403 naming the scope.
    let short = json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 2_000, "eval_every": 1_000});
    let refused = api.post(Some(READER), "/v1/training/jobs", short.clone());
    assert_eq!(refused.status(), 403);
    let refused: Value = refused.json().unwrap();
    assert_eq!(refused["field"], "authorization");
    assert!(refused["detail"].as_str().unwrap().contains("submit"), "{refused}");
    let maxcut = json!({"instance": {"num_nodes": 3, "edges": [[0, 1], [1, 2]]}, "options": {"time_limit_s": 0.2}});
    assert_eq!(api.post(Some(READER), "/v1/problems/maxcut/solve", maxcut.clone()).status(), 403);
    assert_eq!(api.post(Some(BOB), "/v1/problems/maxcut/solve", maxcut).status(), 200);

    // Rule: what a key creates is its own; listings show only its own.
    let job: Value = api.post(Some(ALICE), "/v1/training/jobs", short.clone()).json().unwrap();
    let job_id = job["id"].as_str().unwrap().to_string();
    assert_eq!(job["owner"], "alice");
    let path = format!("/v1/training/jobs/{job_id}");
    assert_eq!(api.ids(ALICE, "/v1/training/jobs"), vec![job_id.clone()]);
    assert!(api.ids(BOB, "/v1/training/jobs").is_empty());
    assert!(api.ids(READER, "/v1/training/jobs").is_empty());
    assert_eq!(api.ids(ROOT, "/v1/training/jobs"), vec![job_id.clone()], "admin sees every job");

    // Rule: another owner's job is not found, whatever the route (no existence leak).
    for suffix in ["", "/metrics", "/events", "/artifacts/config.json"] {
        assert_eq!(api.get(Some(BOB), &format!("{path}{suffix}")).status(), 404, "{suffix}");
    }
    assert_eq!(api.delete(Some(BOB), &path).status(), 404);
    let deadline = Instant::now() + Duration::from_secs(60);
    while api.get(Some(ALICE), &path).json::<Value>().unwrap()["state"] != "succeeded" {
        assert!(Instant::now() < deadline, "alice's job did not finish");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(api.get(Some(ALICE), &format!("{path}/artifacts/config.json")).status(), 200);
    assert_eq!(api.get(Some(ROOT), &format!("{path}/artifacts/config.json")).status(), 200);

    // Rule: promoting needs the job to be one's own; the promoted model is the promoter's.
    let promote = |key: &str, name: &str| api.post(Some(key), "/v1/models", json!({"job_id": job_id, "name": name}));
    assert_eq!(promote(BOB, "bobs-copy").status(), 404);
    assert_eq!(promote(ALICE, "alices-policy").status(), 201);
    let listed = |key: &str| -> Vec<String> {
        let list: Value = api.get(Some(key), "/v1/models").json().unwrap();
        list["models"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap().to_string()).collect()
    };
    assert!(listed(ALICE).contains(&"alices-policy".to_string()));
    assert!(!listed(BOB).contains(&"alices-policy".to_string()));
    assert!(listed(ROOT).contains(&"alices-policy".to_string()));
    assert_eq!(api.get(Some(BOB), "/v1/models/alices-policy").status(), 404);
    assert_eq!(api.get(Some(ALICE), "/v1/models/alices-policy").status(), 200);
    // A solve may not name another owner's model: it is as unknown as a missing one.
    let with_model =
        json!({"instance": {"num_nodes": 3, "edges": [[0, 1], [1, 2]]}, "options": {"model": "alices-policy"}});
    let detail = |key: &str| -> String {
        let body: Value = api.post(Some(key), "/v1/problems/maxcut/solve", with_model.clone()).json().unwrap();
        assert_eq!((body["status"].as_u64(), body["field"].as_str()), (Some(422), Some("model")), "{body}");
        body["detail"].as_str().unwrap().to_string()
    };
    assert!(detail(BOB).contains("no model named"));
    assert!(detail(ALICE).contains("not maxcut"), "alice's own model is found (and is not a Max-Cut policy)");
    // Shipped models (no owner) are everyone's.
    let shipped = listed(BOB);
    assert!(shipped.iter().all(|name| name != "alices-policy") && !shipped.is_empty(), "{shipped:?}");

    // Rule: populations too.
    let population = json!({"algorithm": "dqn", "env": "CartPole-v1", "scheme": "pbt", "size": 2,
        "total_steps": 400_000, "interval_steps": 200_000, "explore": {"learning_rate": {"min": 1e-4, "max": 1e-3}}});
    assert_eq!(api.post(Some(READER), "/v1/populations", population.clone()).status(), 403);
    let created: Value = api.post(Some(BOB), "/v1/populations", population).json().unwrap();
    let population_id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["owner"], "bob");
    assert_eq!(api.ids(BOB, "/v1/populations"), vec![population_id.clone()]);
    assert!(api.ids(ALICE, "/v1/populations").is_empty());
    let population_path = format!("/v1/populations/{population_id}");
    assert_eq!(api.get(Some(ALICE), &population_path).status(), 404);
    assert_eq!(api.delete(Some(ALICE), &population_path).status(), 404);
    assert_eq!(
        api.post(Some(ALICE), &format!("{population_path}/models"), json!({"name": "x", "method": "leader"})).status(),
        404
    );
    // Its member jobs carry bob's name; an admin may stop it.
    assert_eq!(api.delete(Some(ROOT), &population_path).status(), 202);
    let stopped: Value = api.get(Some(BOB), &population_path).json().unwrap();
    assert_eq!(stopped["state"], "cancelled");
}
