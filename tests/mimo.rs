//! MISO beamforming on the shared K = N = 8 Rayleigh set: our regularized ZF and WMMSE reproduce
//! the folder's reference averages, and the parallel gradient search seeded by them is at least
//! WMMSE on every channel and above it on average by half the gain `bench mimo` measured.

mod common;

use rlsolver::problems::mimo::beamforming::{mmse, parallel_gradient_search, sum_rate, wmmse, COMPLEX};
use std::time::Duration;
use tch::{Device, Tensor};

fn channels() -> Option<Vec<Tensor>> {
    let dir = common::shared_data("mimo", "rayleigh_k8_n8_100.json")?;
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rayleigh_k8_n8_100.json")).unwrap()).unwrap();
    let matrix = |m: &serde_json::Value| -> Tensor {
        let rows: Vec<Vec<f64>> = serde_json::from_value(m.clone()).unwrap();
        let (k, n) = (rows.len() as i64, rows[0].len() as i64);
        Tensor::from_slice(&rows.concat()).view([k, n])
    };
    Some(
        data["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Tensor::complex(&matrix(&s["re"]), &matrix(&s["im"])).to_kind(COMPLEX))
            .collect(),
    )
}

#[test]
fn baselines_reproduce_the_reference_averages_and_the_search_matches_wmmse() {
    let Some(channels) = channels() else { return };
    // The search's mean gain over WMMSE on the first 10 channels must clear half of what
    // `bench mimo` measured (+0.15 at P = 10, +0.72 at P = 100 bit/s/Hz).
    for (power, rzf_ref, wmmse_ref, min_gain) in [(10.0, 15.79, 18.50, 0.07), (100.0, 29.53, 36.45, 0.35)] {
        let (mut rzf_sum, mut wmmse_sum, mut search_sum) = (0.0, 0.0, 0.0);
        for (i, h) in channels.iter().enumerate() {
            let start = mmse(h, power, 1.0);
            let w = wmmse(h, power, 1.0, &start, 200);
            let (r_rzf, r_wmmse) =
                (sum_rate(h, &start, 1.0).double_value(&[0]), sum_rate(h, &w, 1.0).double_value(&[0]));
            rzf_sum += r_rzf;
            wmmse_sum += r_wmmse;
            if i < 10 {
                let found = parallel_gradient_search(
                    h,
                    power,
                    1.0,
                    &[w.shallow_clone(), start],
                    16,
                    i as u64,
                    Duration::from_secs(5),
                    100,
                    Device::Cpu,
                    &Default::default(),
                );
                assert!(found.rate >= r_wmmse - 1e-9, "channel {i}: search {} < WMMSE {r_wmmse}", found.rate);
                search_sum += found.rate - r_wmmse;
            }
        }
        let (rzf, wmmse_avg) = (rzf_sum / channels.len() as f64, wmmse_sum / channels.len() as f64);
        let gain = search_sum / 10.0;
        eprintln!("P = {power}: RZF {rzf:.2} (ref {rzf_ref}), WMMSE {wmmse_avg:.2} (ref {wmmse_ref}), search gain over WMMSE on 10 channels {gain:.3}");
        assert!(gain >= min_gain, "P = {power}: the search gains {gain:.3} over WMMSE, below {min_gain}");
        assert!((rzf - rzf_ref).abs() < 0.01, "RZF average {rzf} vs reference {rzf_ref}");
        assert!((wmmse_avg - wmmse_ref).abs() < 0.05, "WMMSE average {wmmse_avg} vs reference {wmmse_ref}");
    }
}

#[test]
fn the_shipped_policies_reach_95_percent_of_wmmse_on_the_shared_set() {
    use rlsolver::problems::{find, solve, Limits, ProblemInput, SolveOptions};
    let Some(dir) = common::shared_data("mimo", "rayleigh_k8_n8_100.json") else { return };
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rayleigh_k8_n8_100.json")).unwrap()).unwrap();
    let mimo = find("mimo").unwrap();
    let models = std::sync::Arc::new(rlsolver::models::ModelRegistry::load_dir(
        &rlsolver::models::default_dir(),
        rlsolver::problems::policy_loaders,
    ));
    for (power, wmmse_ref) in [(10.0, 18.50), (100.0, 36.45)] {
        let mut total = 0.0;
        for sample in data["samples"].as_array().unwrap() {
            let instance =
                serde_json::json!({"channel": {"re": sample["re"], "im": sample["im"]}, "power": power, "noise": 1.0});
            let options = SolveOptions { method: Some("policy".into()), ..Default::default() };
            total += solve(mimo, ProblemInput::Json(&instance), &options, &Limits::default(), &models)
                .expect("a shipped K = N = 8 model")
                .objective;
        }
        let average = total / 100.0;
        eprintln!("P = {power}: policy alone {average:.2} (WMMSE {wmmse_ref})");
        assert!(average >= 0.95 * wmmse_ref, "policy {average} < 95% of WMMSE {wmmse_ref} at P = {power}");
    }
}
