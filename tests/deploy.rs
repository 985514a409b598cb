//! The Kubernetes manifests in `deploy/k8s/`. No cluster here: every manifest is
//! validated against the Kubernetes API schemas of 1.30 (kubernetes-validate, strict: unknown
//! fields are errors; installed by `make deploy-tools`, which `make test` runs), and the images,
//! ports, probes, roles and environment are checked against the binary's own flags and the
//! Dockerfile. Without the validator the test skips with the reason; under CI=true it fails.

use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("deploy/k8s"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// The venv's kubernetes-validate, or None (skipped, failing under CI=true).
fn validator() -> Option<PathBuf> {
    let path = root().join(".venv/bin/kubernetes-validate");
    if path.exists() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {} is missing (make deploy-tools)", path.display());
    }
    eprintln!("skipping: {} is missing (make deploy-tools installs it)", path.display());
    None
}

#[test]
fn every_manifest_validates_against_the_kubernetes_schemas_and_a_broken_one_does_not() {
    let Some(validate) = validator() else { return };
    let run =
        |files: &[PathBuf]| Command::new(&validate).args(["--strict", "-k", "1.30.0"]).args(files).output().unwrap();
    let files = manifests();
    assert!(files.len() >= 6, "{files:?}");
    let output = run(&files);
    let text = String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{text}");
    assert!(!text.contains("failed"), "{text}");
    // The same check rejects a misspelled field.
    let broken = std::env::temp_dir().join(format!("rlsolver-broken-{}.yaml", std::process::id()));
    let api = std::fs::read_to_string(root().join("deploy/k8s/api.yaml")).unwrap();
    std::fs::write(&broken, api.replace("containerPort:", "containerPorts:")).unwrap();
    assert!(!run(std::slice::from_ref(&broken)).status.success(), "a misspelled field passed");
    let _ = std::fs::remove_file(broken);
}

/// Every document of every manifest, as JSON (PyYAML, a dependency of the validator).
fn documents(python: &PathBuf) -> Vec<Value> {
    let script = "import json, sys, yaml\nprint(json.dumps([d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d]))";
    let output = Command::new(python).arg("-c").arg(script).args(manifests()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn manifests_agree_with_the_binary_and_the_dockerfile() {
    if validator().is_none() {
        return;
    }
    let docs = documents(&root().join(".venv/bin/python"));
    let help = Command::new(env!("CARGO_BIN_EXE_rlsolver")).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    // The variables `serve` reads: its flags' [env: NAME=] and the keys read outside clap.
    let mut known: HashSet<String> =
        help.split("[env: ").skip(1).map(|rest| rest.split(['=', ']']).next().unwrap().to_string()).collect();
    known.insert("RLSOLVER_API_KEYS".into());
    assert!(known.contains("RLSOLVER_DATABASE_URL") && known.contains("RLSOLVER_ROLE"), "{known:?}");
    let of_kind = |kind: &'static str| docs.iter().filter(move |d| d["kind"] == kind);
    let config = of_kind("ConfigMap").next().expect("a ConfigMap");
    let secret = of_kind("Secret").next().expect("a Secret");
    for key in config["data"].as_object().unwrap().keys().chain(secret["stringData"].as_object().unwrap().keys()) {
        assert!(known.contains(key), "{key} is not a variable `serve` reads");
    }
    let port: u64 = config["data"]["RLSOLVER_PORT"].as_str().unwrap().parse().unwrap();
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains(&format!("EXPOSE {port}")), "the image exposes another port");
    let models = config["data"]["RLSOLVER_MODELS_DIR"].as_str().unwrap();
    assert!(dockerfile.contains(&format!("RLSOLVER_MODELS_DIR={models}")), "the image has the models elsewhere");
    let deployments: Vec<&Value> = of_kind("Deployment").collect();
    assert!(deployments.len() >= 2);
    let mut roles = HashSet::new();
    for deployment in &deployments {
        let name = deployment["metadata"]["name"].as_str().unwrap();
        let pod = &deployment["spec"]["template"];
        assert_eq!(deployment["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"], "{name}");
        assert!(dockerfile.contains(&format!("--uid {}", pod["spec"]["securityContext"]["runAsUser"])), "{name}: uid");
        for container in pod["spec"]["containers"].as_array().unwrap() {
            assert_eq!(container["image"], "rlsolver:latest", "{name}");
            let args: Vec<&str> = container["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
            assert_eq!(args[0], "serve", "{name}");
            for flag in args.iter().filter(|a| a.starts_with("--")) {
                assert!(help.contains(&format!("{flag} ")), "{name}: serve has no {flag}");
            }
            let role = args.iter().position(|a| *a == "--role").map(|i| args[i + 1]).expect("a role");
            assert!(["all", "api", "worker", "evaluator"].contains(&role), "{name}: {role}");
            roles.insert(role.to_string());
            for var in container["env"].as_array().into_iter().flatten() {
                assert!(known.contains(var["name"].as_str().unwrap()), "{name}: {var}");
            }
            let ports = container["ports"].as_array().unwrap();
            assert_eq!(ports[0]["containerPort"], port, "{name}");
            let port_name = ports[0]["name"].as_str().unwrap();
            assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/ready", "{name}");
            assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/health", "{name}");
            for probe in ["readinessProbe", "livenessProbe"] {
                assert_eq!(container[probe]["httpGet"]["port"], port_name, "{name} {probe}");
            }
            let mounted = container["volumeMounts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["mountPath"].as_str() == config["data"]["RLSOLVER_DATA_DIR"].as_str());
            assert!(mounted, "{name}: the shared job folder is not at RLSOLVER_DATA_DIR");
        }
    }
    // Workers leave population evaluations to evaluators: both must be deployed.
    let expected = ["api", "worker", "evaluator"].map(String::from);
    assert_eq!(roles, HashSet::from(expected));
    // The shipped API keys parse as the server parses them.
    let keys = secret["stringData"]["RLSOLVER_API_KEYS"].as_str().unwrap();
    assert!(rlsolver::api::auth::load_keys(None, Some(keys)).is_ok_and(|k| !k.is_empty()), "{keys}");
    // Services select pods that exist, on a port the pods name.
    for service in of_kind("Service") {
        let selector = &service["spec"]["selector"];
        assert!(
            deployments.iter().any(|d| d["spec"]["template"]["metadata"]["labels"] == *selector),
            "{}",
            service["metadata"]["name"]
        );
    }
    // The autoscaler scales a Deployment of these manifests.
    for hpa in of_kind("HorizontalPodAutoscaler") {
        let target = hpa["spec"]["scaleTargetRef"]["name"].as_str().unwrap();
        assert!(deployments.iter().any(|d| d["metadata"]["name"] == target), "{target}");
    }
    let claims: Vec<&Value> = of_kind("PersistentVolumeClaim").collect();
    assert_eq!(claims[0]["spec"]["accessModes"][0], "ReadWriteMany", "replicas share the job folder");
}
