//! StockTrading-v0 (FinRL's env on a generated market): rewards re-scored from the closes alone,
//! the train/test split, and its env_config checked field by field over HTTP.

mod common;

use rlsolver::drl::env::stock_trading::{StockTradingConfig, StockTradingVecEnv};
use rlsolver::drl::env::VecEnv;
use serde_json::json;

/// Buys `hmax` shares of stock 0 at the first close, then holds: the summed rewards over the
/// scaling must equal 100 (p_T - p_0) minus the buy cost, computed here from the closes.
#[test]
fn rewards_match_the_assets_computed_from_closes() {
    for split in ["train", "test"] {
        let config = StockTradingConfig { stocks: 4, data_seed: 7, split: split.into(), ..Default::default() };
        let mut env = StockTradingVecEnv::new(config.clone(), 1);
        let closes = env.closes().to_vec();
        assert_eq!(closes.len(), if split == "train" { config.train_days } else { config.test_days });
        env.reset(0);
        let (mut total, mut steps) = (0.0f64, 0);
        loop {
            let action = if steps == 0 { [1.0, 0.0, 0.0, 0.0] } else { [0.0; 4] };
            let step = env.step(&action);
            total += f64::from(step.rewards[0]);
            steps += 1;
            if step.terminated[0] {
                break;
            }
        }
        assert_eq!(steps, closes.len() - 1);
        let (p0, pt) = (closes[0][0], closes[closes.len() - 1][0]);
        let expected = config.hmax * (pt - p0) - config.hmax * p0 * config.buy_cost_pct;
        let got = total / config.reward_scaling;
        // f32 rewards summed over hundreds of steps.
        assert!((got - expected).abs() < 1e-3 * (1.0 + expected.abs()) + 5.0, "{split}: {got} vs {expected}");
    }
    // Train and test are consecutive periods of one market.
    let train = StockTradingVecEnv::new(StockTradingConfig { data_seed: 7, ..Default::default() }, 1);
    let test =
        StockTradingVecEnv::new(StockTradingConfig { data_seed: 7, split: "test".into(), ..Default::default() }, 1);
    assert_eq!(train.train_closes(), test.train_closes());
    assert_ne!(train.closes()[0], test.closes()[0]);
}

#[test]
fn env_config_fields_are_checked_by_name() {
    let base = common::start_server(Default::default());
    let client = reqwest::blocking::Client::new();
    let post = |env_config: serde_json::Value| {
        client
            .post(format!("{base}/v1/training/jobs"))
            .json(&json!({"algorithm": "sac", "env": "StockTrading-v0", "total_steps": 1000, "env_config": env_config}))
            .send()
            .unwrap()
    };
    common::expect_422(post(json!({"split": "validation"})), "env_config.split", "train");
    common::expect_422(post(json!({"buy_cost_pct": 0.9})), "env_config.buy_cost_pct", "cost");
    common::expect_422(post(json!({"volume": 3})), "env_config", "volume");
    let accepted = post(json!({"stocks": 5, "data_seed": 3, "split": "test"}));
    assert_eq!(accepted.status().as_u16(), 202);
    let job: serde_json::Value = accepted.json().unwrap();
    common::cancel_training_job(&base, job["id"].as_str().unwrap());
}
