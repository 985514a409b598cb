//! The OR-Gym knapsack policies and solve endpoints: masked, size-independent PPO policies, the
//! shipped policies against the exact optimum on unseen episodes, and every solve's answer
//! re-scored from its own decisions by functions written here.

use rlsolver::drl::agents::Agent;
use rlsolver::drl::algorithms::{self, EnvSpec, Learner};
use rlsolver::drl::env::VecEnv;
use rlsolver::problems::orgym::knapsack::env::{KnapsackConfig, KnapsackVecEnv, Variant};
use rlsolver::problems::{find, solve, Limits, ProblemError, ProblemInput, SolveOptions};
use serde_json::{json, Value};
use std::sync::Arc;
use tch::Tensor;

fn spec(env: &dyn VecEnv, id: &str) -> EnvSpec {
    EnvSpec {
        id: id.into(),
        observation_dim: env.observation_dim(),
        action_space: env.action_space(),
        agents: 1,
        state_dim: 0,
        episode_limit: 0,
        layout: env.layout(),
    }
}

fn ppo_for(env: &dyn VecEnv, id: &str) -> Box<dyn rlsolver::drl::agents::OnPolicyAgent> {
    let algorithm = algorithms::find("ppo_discrete").unwrap();
    let config = algorithm.configure(&json!({})).unwrap();
    match (algorithm.build)(&config, &spec(env, id), tch::Device::Cpu, 3).unwrap() {
        Learner::Single(Agent::OnPolicy(agent)) => agent,
        _ => panic!("ppo_discrete is on-policy"),
    }
}

/// An untrained masked policy samples only allowed items, on 200 items and on 37 with the same
/// kind of network (its weights do not depend on the item count).
#[test]
fn masked_item_policies_draw_only_allowed_actions_at_any_size() {
    for items in [200, 37] {
        let config = KnapsackConfig { items, ..KnapsackConfig::new(Variant::Bounded) };
        let mut env = KnapsackVecEnv::new(config, 16);
        let mut agent = ppo_for(&env, "Knapsack-v2");
        let dim = env.observation_dim();
        let mut obs = env.reset(4);
        let mut checked = 0;
        for _ in 0..40 {
            let input = Tensor::from_slice(&obs).view([16, dim as i64]);
            let (actions, log_probs, _) = agent.act(&input, true);
            let actions: Vec<f32> = actions.flatten(0, -1).try_into().unwrap();
            let log_probs: Vec<f32> = log_probs.try_into().unwrap();
            for (row, (&a, &lp)) in obs.chunks(dim).zip(actions.iter().zip(&log_probs)) {
                if row[..items].iter().any(|&m| m > 0.5) {
                    assert!(row[a as usize] > 0.5, "{items} items: sampled masked item {a}");
                    assert!(lp.is_finite() && lp > -30.0, "{items} items: log pi {lp} of an allowed item");
                    checked += 1;
                }
            }
            obs = env.step(&actions).observations;
        }
        assert!(checked > 300, "{items} items: only {checked} decisions checked");
    }
}

fn registry() -> Arc<rlsolver::models::ModelRegistry> {
    Arc::new(rlsolver::models::ModelRegistry::load_dir(
        &rlsolver::models::default_dir(),
        rlsolver::problems::policy_loaders,
    ))
}

/// Each body is refused before any work with an error naming `field`, a 413 exactly when
/// `too_large`.
fn expect_field_errors(
    problem: &dyn rlsolver::problems::Problem,
    models: &Arc<rlsolver::models::ModelRegistry>,
    cases: &[(Value, &str, bool)],
) {
    for (body, field, too_large) in cases {
        let error = solve(problem, ProblemInput::Json(body), &SolveOptions::default(), &Limits::default(), models)
            .expect_err(&body.to_string());
        assert_eq!(error.field(), Some(*field), "{body}: {error}");
        assert_eq!(matches!(error, ProblemError::TooLarge { .. }), *too_large, "{body}: {error}");
    }
}

/// The value and weight of a solve's `counts`, from the instance alone; fails on a limit broken.
fn rescore(instance: &Value, counts: &[u64], variant: Variant) -> (u64, u64) {
    let number = |key: &str, i: usize| instance[key][i].as_u64().unwrap();
    let (mut value, mut weight) = (0, 0);
    for (i, &c) in counts.iter().enumerate() {
        let most = match variant {
            Variant::Binary => 1,
            Variant::Bounded => number("limits", i),
            _ => u64::MAX,
        };
        assert!(c <= most, "item {i} taken {c} times, at most {most}");
        value += c * number("values", i);
        weight += c * number("weights", i);
    }
    (value, weight)
}

/// The best value by enumeration of a tiny instance (each item 0..=limit times).
fn brute_force(weights: &[u64], values: &[u64], limits: &[u64], capacity: u64) -> u64 {
    let mut counts = vec![0u64; weights.len()];
    let mut best = 0;
    loop {
        let w: u64 = counts.iter().zip(weights).map(|(c, w)| c * w).sum();
        if w <= capacity {
            best = best.max(counts.iter().zip(values).map(|(c, v)| c * v).sum());
        }
        let Some(i) = (0..counts.len()).find(|&i| counts[i] < limits[i]) else { return best };
        counts[i] += 1;
        counts[..i].fill(0);
    }
}

/// The optimum of a drawn instance by dynamic programming over the capacity, written here: each
/// item at most once (Binary), `limits[i]` times (Bounded, one 0/1 pass per copy) or any number
/// of times (Unbounded).
fn dp_optimum(instance: &Value, variant: Variant, capacity: usize) -> u64 {
    let column = |key: &str| -> Vec<u64> {
        instance[key].as_array().map(|a| a.iter().map(|x| x.as_u64().unwrap()).collect()).unwrap_or_default()
    };
    let (weights, values, limits) = (column("weights"), column("values"), column("limits"));
    let mut best = vec![0u64; capacity + 1];
    for (i, (&w, &v)) in weights.iter().zip(&values).enumerate() {
        let w = w as usize;
        if variant == Variant::Unbounded {
            for c in w..=capacity {
                best[c] = best[c].max(best[c - w] + v);
            }
            continue;
        }
        let copies = if variant == Variant::Bounded { limits[i] } else { 1 };
        for _ in 0..copies {
            for c in (w..=capacity).rev() {
                best[c] = best[c].max(best[c - w] + v);
            }
        }
    }
    best[capacity]
}

fn counts_of(report: &rlsolver::problems::SolveReport) -> Vec<u64> {
    report.solution["counts"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect()
}

/// On a small given instance every method's answer re-scores to its return and fits; dp is the
/// enumerated optimum, and no method beats it.
#[test]
fn knapsack_solves_rescore_and_dp_is_optimal() {
    let models = registry();
    let (weights, values, limits) =
        (vec![5u64, 7, 3, 9, 4, 6], vec![10u64, 13, 5, 20, 7, 11], vec![2u64, 1, 3, 2, 1, 2]);
    for variant in [Variant::Unbounded, Variant::Binary, Variant::Bounded] {
        let mut instance = json!({"weights": weights, "values": values});
        if variant == Variant::Bounded {
            instance["limits"] = json!(limits);
        }
        let body = json!({"capacity": 23, "instance": instance});
        let caps: Vec<u64> = match variant {
            Variant::Unbounded => weights.iter().map(|w| 23 / w).collect(),
            Variant::Binary => vec![1; 6],
            _ => limits.clone(),
        };
        let optimum = brute_force(&weights, &values, &caps, 23);
        let problem = find(variant.id()).unwrap();
        for method in ["dp", "greedy", "random", "policy"] {
            let options = SolveOptions { method: Some(method.into()), seed: Some(2), ..Default::default() };
            let report = solve(problem, ProblemInput::Json(&body), &options, &Limits::default(), &models).unwrap();
            let (value, weight) = rescore(&instance, &counts_of(&report), variant);
            assert!(weight <= 23, "{variant:?} {method}: weight {weight} over 23");
            assert_eq!(value as f64, report.objective, "{variant:?} {method}: the counts do not give the return");
            assert_eq!(report.solution["reference"].as_f64(), Some(optimum as f64), "{variant:?}: reference");
            assert!(value <= optimum, "{variant:?} {method}: {value} above the optimum {optimum}");
            if method == "dp" {
                assert_eq!(value, optimum, "{variant:?}: dp is not optimal");
            }
        }
    }
}

/// The shipped policies answer on drawn instances of the class (seeds the training never used)
/// within 1% of the exact optimum on average, and their decisions re-score to their returns.
#[test]
fn shipped_knapsack_policies_are_within_one_percent_of_the_optimum() {
    let models = registry();
    for variant in [Variant::Unbounded, Variant::Binary, Variant::Bounded] {
        let name = format!("orgym-{}", variant.id().to_lowercase());
        if models.get(&name).is_none() {
            assert!(std::env::var("CI").is_err(), "{name} is not in models/");
            eprintln!("{name}: not shipped, skipped");
            continue;
        }
        let problem = find(variant.id()).unwrap();
        let (mut total, mut reference) = (0.0, 0.0);
        for seed in 900_001..900_009 {
            let options = SolveOptions { seed: Some(seed), ..Default::default() };
            let report = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
            assert_eq!(report.solution["method"], json!(format!("policy {name}")));
            let (value, weight) = rescore(&report.solution["instance"], &counts_of(&report), variant);
            assert!(
                weight <= 200 && value as f64 == report.objective,
                "{name} seed {seed}: re-scored {value} / {weight}"
            );
            total += report.objective;
            let optimum = dp_optimum(&report.solution["instance"], variant, 200) as f64;
            assert_eq!(
                report.solution["reference"].as_f64(),
                Some(optimum),
                "{name} seed {seed}: the reported optimum"
            );
            reference += optimum;
        }
        eprintln!("{name}: {:.2}% of the optimum", 100.0 * total / reference);
        assert!(total >= 0.99 * reference, "{name}: {total} < 99% of {reference}");
    }
}

/// Bad parameters are 4xx errors naming the field, before any work.
#[test]
fn knapsack_parameters_are_checked() {
    let models = registry();
    let problem = find("Knapsack-v2").unwrap();
    let cases = [
        (json!({"items": 5000, "capacity": 5000}), "capacity", true),
        (json!({"instance": {"weights": [0, 3], "values": [1, 2], "limits": [1, 1]}}), "instance.weights", false),
        (json!({"instance": {"weights": [1, 3], "values": [1, 2]}}), "instance.limits", false),
        (json!({"instance": {"weights": [1, 3], "values": [1], "limits": [1, 1]}}), "instance.values", false),
        (json!({"items": 0}), "items", false),
        (json!({"items": 20000, "capacity": 10}), "items", true),
        (json!({"colour": 1}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
}

/// Re-packs a bin-packing answer from its items and assignment alone: every bin within the
/// capacity, each action the level of its bin just before the item (0: a bin opened by it), and
/// the waste recomputed. Returns the waste.
fn repack(solution: &Value, capacity: u64) -> u64 {
    let numbers =
        |key: &str| -> Vec<Option<u64>> { solution[key].as_array().unwrap().iter().map(Value::as_u64).collect() };
    let (items, actions, assignment) = (numbers("items"), numbers("actions"), numbers("assignment"));
    assert_eq!(items.len(), actions.len());
    let mut loads: Vec<u64> = Vec::new();
    for (t, ((size, action), bin)) in items.iter().zip(&actions).zip(&assignment).enumerate() {
        let (size, action) = (size.unwrap(), action.unwrap());
        let Some(bin) = bin else {
            assert_eq!(t + 1, items.len(), "only the last item can be unplaced");
            continue;
        };
        let bin = *bin as usize;
        if action == 0 {
            assert_eq!(bin, loads.len(), "item {t}: a new bin gets the next number");
            loads.push(0);
        }
        assert_eq!(loads[bin], action, "item {t}: bin {bin} was at level {}, the action says {action}", loads[bin]);
        loads[bin] += size;
        assert!(loads[bin] <= capacity, "item {t}: bin {bin} overflows");
    }
    let bins = solution["bins"].as_array().unwrap();
    assert_eq!(bins.len(), loads.len(), "bins listed");
    for (b, contents) in bins.iter().enumerate() {
        let total: u64 =
            contents.as_array().unwrap().iter().map(|i| items[i.as_u64().unwrap() as usize].unwrap()).sum();
        assert_eq!(total, loads[b], "bin {b}'s contents");
    }
    loads.iter().map(|l| capacity - l).sum()
}

/// Every bin-packing method's answer re-packs to its reported waste and return, on drawn and on
/// given items; a given sequence is packed in its order.
#[test]
fn bin_packing_solves_repack() {
    let models = registry();
    let sequence: Vec<u64> = (0..60).map(|i| [2, 3, 3, 2, 2][i % 5]).collect();
    for (id, body) in [
        ("BinPacking-v0", json!({})),
        ("BinPacking-v1", json!({"step_limit": 300})),
        ("BinPacking-v4", json!({"sequence": sequence})),
        ("BinPacking-v5", json!({"item_probs": [0.1, 0.1, 0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1]})),
    ] {
        let problem = find(id).unwrap();
        let capacity = if id.ends_with(['0', '2', '4']) { 9 } else { 100 };
        for method in ["policy", "sum_of_squares", "best_fit", "random"] {
            let options = SolveOptions { method: Some(method.into()), seed: Some(5), ..Default::default() };
            let report = solve(problem, ProblemInput::Json(&body), &options, &Limits::default(), &models).unwrap();
            let solution = &report.solution;
            let waste = repack(solution, capacity);
            assert_eq!(solution["waste"].as_u64(), Some(waste), "{id} {method}: waste");
            assert_eq!(solution["failed"], json!(false), "{id} {method}: an impossible action");
            assert_eq!(report.objective, -(waste as f64), "{id} {method}: the return is minus the waste");
            let bound = solution["lower_bound_waste"].as_u64().unwrap();
            assert!(waste >= bound, "{id} {method}: waste {waste} below the bound {bound}");
            if let Some(given) = body.get("sequence") {
                assert_eq!(&solution["items"], given, "{id} {method}: the sequence's order");
            }
            if method == "sum_of_squares" {
                assert_eq!(
                    solution["reference"]["waste"].as_u64(),
                    Some(waste),
                    "{id}: the reference is sum of squares"
                );
            }
        }
    }
}

/// The shipped bin-packing policies waste no more than sum of squares on drawn episodes the
/// training never saw (the mean over 8 seeds), each answer re-packed.
#[test]
fn shipped_bin_packing_policies_match_sum_of_squares() {
    let models = registry();
    for id in rlsolver::problems::orgym::binpacking::env::IDS {
        let name = format!("orgym-{}", id.to_lowercase());
        if models.get(&name).is_none() {
            assert!(std::env::var("CI").is_err(), "{name} is not in models/");
            eprintln!("{name}: not shipped, skipped");
            continue;
        }
        let problem = find(id).unwrap();
        let capacity = if id.ends_with(['0', '2', '4']) { 9 } else { 100 };
        let (mut ours, mut reference) = (0.0, 0.0);
        for seed in 900_001..900_009 {
            let options = SolveOptions { seed: Some(seed), ..Default::default() };
            let report = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
            assert_eq!(report.solution["method"], json!(format!("policy {name}")));
            let waste = repack(&report.solution, capacity) as f64;
            assert_eq!(report.objective, -waste, "{name} seed {seed}");
            ours += waste;
            // Sum of squares on the same seed, run as its own method and re-packed here.
            let options = SolveOptions { method: Some("sum_of_squares".into()), ..options };
            let peer = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
            assert_eq!(peer.solution["items"], report.solution["items"], "{name} seed {seed}: the same items");
            let peer_waste = repack(&peer.solution, capacity) as f64;
            assert_eq!(report.solution["reference"]["waste"].as_f64(), Some(peer_waste), "{name} seed {seed}");
            reference += peer_waste;
        }
        eprintln!("{name}: waste {ours} against sum of squares' {reference}");
        assert!(ours <= reference * 1.05 + 8.0, "{name}: waste {ours} above sum of squares' {reference}");
    }
}

/// Bad bin-packing parameters are 4xx errors naming the field, before any work; a changed
/// capacity the shipped policy cannot read falls back to sum of squares, said so.
#[test]
fn bin_packing_parameters_are_checked() {
    let models = registry();
    let problem = find("BinPacking-v1").unwrap();
    let cases = [
        (json!({"bin_capacity": 5000}), "bin_capacity", true),
        (json!({"item_probs": [0.5, 0.5]}), "item_probs", false),
        (json!({"item_sizes": [1, 100], "item_probs": [0.5, 0.5]}), "item_sizes", false),
        (json!({"item_sizes": [1, 2], "item_probs": [0.7, 0.7]}), "item_probs", false),
        (json!({"sequence": [3, 0]}), "sequence", false),
        (json!({"sequence": []}), "sequence", false),
        (json!({"step_limit": 1_000_000}), "step_limit", true),
        (json!({"colour": 1}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
    let body = json!({"bin_capacity": 50, "step_limit": 80});
    let report =
        solve(problem, ProblemInput::Json(&body), &SolveOptions::default(), &Limits::default(), &models).unwrap();
    let method = report.solution["method"].as_str().unwrap();
    assert!(method.starts_with("sum_of_squares"), "{method}");
    assert_eq!(report.objective, -(repack(&report.solution, 50) as f64));
}

/// Re-plays a newsvendor answer from its economics, orders and demands alone (the order placed
/// L steps earlier arrives, the rest expires; or-gym's reward as written) and returns the
/// re-scored return; fails when an order breaks the inventory cap.
fn replay_newsvendor(solution: &Value, lead: usize, max_inventory: f64) -> f64 {
    let e = &solution["economics"];
    let x = |k: &str| e[k].as_f64().unwrap();
    let (p, c, h, k) = (x("price"), x("cost"), x("holding_cost"), x("lost_sales_penalty"));
    let list =
        |key: &str| -> Vec<f64> { solution[key].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
    let (orders, demands) = (list("orders"), list("demands"));
    let mut total = 0.0;
    for t in 0..orders.len() {
        let pipeline: f64 = (t.saturating_sub(lead)..t).map(|s| orders[s]).sum();
        assert!(orders[t] >= 0.0 && pipeline + orders[t] <= max_inventory + 1e-3, "step {t}: order over the cap");
        let on_hand = if lead == 0 {
            orders[t]
        } else if t >= lead {
            orders[t - lead]
        } else {
            0.0
        };
        let (excess, short) = ((on_hand - demands[t]).max(0.0), (demands[t] - on_hand).max(0.0));
        total += p * on_hand.min(demands[t]) - excess * c * orders[t] - excess * h - short * k;
    }
    total
}

/// Every newsvendor method's answer re-plays to its return on the same demands; the optimal
/// policy beats the others on average and its realized mean is near its expectation.
#[test]
fn newsvendor_solves_replay_and_the_optimum_is_best() {
    let models = registry();
    let problem = find("Newsvendor-v0").unwrap();
    for body in [json!({}), json!({"lead_time": 2, "mu_max": 50}), json!({"lead_time": 0, "step_limit": 12})] {
        let lead = body.get("lead_time").and_then(Value::as_u64).unwrap_or(5) as usize;
        let mut totals = std::collections::BTreeMap::<&str, f64>::new();
        let mut expected = 0.0;
        for seed in 0..12 {
            let mut demands = None;
            for method in ["policy", "optimal", "critical_fractile", "zero"] {
                let options = SolveOptions { method: Some(method.into()), seed: Some(seed), ..Default::default() };
                let report = solve(problem, ProblemInput::Json(&body), &options, &Limits::default(), &models).unwrap();
                let replayed = replay_newsvendor(&report.solution, lead, 4000.0);
                let tolerance = 1e-6 * replayed.abs().max(1.0);
                assert!(
                    (replayed - report.objective).abs() <= tolerance,
                    "{body} {method} seed {seed}: {replayed} vs {}",
                    report.objective
                );
                let d = report.solution["demands"].clone();
                assert_eq!(demands.get_or_insert_with(|| d.clone()), &d, "{body} {method}: the same demands");
                *totals.entry(method).or_default() += report.objective;
                if method == "optimal" {
                    expected += report.solution["reference"]["expected_return"].as_f64().unwrap();
                }
            }
        }
        let optimal = totals["optimal"];
        for (method, total) in &totals {
            assert!(
                *total <= optimal + 1e-6 * optimal.abs() || *method == "policy",
                "{body}: {method} {total} beats the optimum {optimal}"
            );
        }
        let spread = 0.1 * expected.abs() + 1.0;
        assert!((optimal - expected).abs() <= spread, "{body}: realized {optimal} far from expected {expected}");
        eprintln!("{body}: {totals:?}, optimal expected {expected:.0}");
    }
}

/// The shipped newsvendor policy earns at least half of the optimal policy's return on drawn
/// economics the training never saw (the mean over 8 seeds; 62% on its 200 validation
/// episodes) and more than the textbook critical fractile, each answer re-played.
#[test]
fn shipped_newsvendor_policy_earns_most_of_the_optimum() {
    let models = registry();
    if models.get("orgym-newsvendor-v0").is_none() {
        assert!(std::env::var("CI").is_err(), "orgym-newsvendor-v0 is not in models/");
        eprintln!("orgym-newsvendor-v0: not shipped, skipped");
        return;
    }
    let problem = find("Newsvendor-v0").unwrap();
    let (mut ours, mut optimal, mut fractile) = (0.0, 0.0, 0.0);
    for seed in 900_001..900_009 {
        let options = SolveOptions { seed: Some(seed), ..Default::default() };
        let report = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
        assert_eq!(report.solution["method"], json!("policy orgym-newsvendor-v0"));
        let replayed = replay_newsvendor(&report.solution, 5, 4000.0);
        assert!((replayed - report.objective).abs() <= 1e-6 * replayed.abs().max(1.0), "seed {seed}");
        ours += report.objective;
        // The optimal and critical-fractile policies on the same seed's demands, each run as its
        // own method and re-played here.
        let peer = |method: &str| -> f64 {
            let options = SolveOptions { method: Some(method.into()), seed: Some(seed), ..Default::default() };
            let run = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
            assert_eq!(run.solution["demands"], report.solution["demands"], "{method} seed {seed}: the same demands");
            replay_newsvendor(&run.solution, 5, 4000.0)
        };
        let (best, critical) = (peer("optimal"), peer("critical_fractile"));
        let reported = &report.solution["reference"];
        assert!((reported["return"].as_f64().unwrap() - best).abs() <= 1e-6 * best.abs().max(1.0), "seed {seed}");
        optimal += best;
        fractile += critical;
    }
    eprintln!("orgym-newsvendor-v0: {ours:.0} against the optimal policy's {optimal:.0} (fractile {fractile:.0})");
    assert!(ours >= 0.5 * optimal && ours > fractile, "orgym-newsvendor-v0: {ours} vs {optimal} (fractile {fractile})");
}

/// Bad newsvendor parameters are 4xx errors naming the field, before any work.
#[test]
fn newsvendor_parameters_are_checked() {
    let models = registry();
    let problem = find("Newsvendor-v0").unwrap();
    let economics = json!({"price": 10, "cost": 4, "holding_cost": 1, "lost_sales_penalty": 2, "mean_demand": 30});
    let mut negative = economics.clone();
    negative["cost"] = json!(-1);
    let mut huge = economics.clone();
    huge["mean_demand"] = json!(1e9);
    let cases = [
        (json!({"lead_time": 500}), "lead_time", true),
        (json!({"step_limit": 0}), "step_limit", false),
        (json!({"step_limit": 10_000_000}), "step_limit", true),
        (json!({"mu_max": -3}), "mu_max", false),
        (json!({"instance": negative}), "instance.cost", false),
        (json!({"instance": huge}), "instance.mean_demand", true),
        (json!({"instance": {"price": 1}}), "instance", false),
        (json!({"colour": 1}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
    // Economics beyond the optimal policy's DP: `method=optimal` is a 422 on `method`.
    let large =
        json!({"instance": {"price": 10, "cost": 4, "holding_cost": 1, "lost_sales_penalty": 2, "mean_demand": 3000}});
    let optimal = SolveOptions { method: Some("optimal".into()), ..Default::default() };
    let error =
        solve(problem, ProblemInput::Json(&large), &optimal, &Limits::default(), &models).expect_err("DP too large");
    assert_eq!(error.field(), Some("method"), "{error}");
    assert!(error.to_string().contains("DP"), "{error}");
    // The other methods answer such economics, re-played, against the critical fractile.
    for method in ["zero", "critical_fractile", "policy"] {
        let options = SolveOptions { method: Some(method.into()), seed: Some(4), ..Default::default() };
        let report = solve(problem, ProblemInput::Json(&large), &options, &Limits::default(), &models)
            .unwrap_or_else(|e| panic!("{method} at mean demand 3000: {e}"));
        let replayed = replay_newsvendor(&report.solution, 5, 4000.0);
        assert!((replayed - report.objective).abs() <= 1e-6 * replayed.abs().max(1.0), "{method}");
        let reference = &report.solution["reference"];
        assert_eq!(reference["method"], json!("critical_fractile"), "{method}");
        assert!(reference.get("expected_return").is_none(), "{method}: {reference}");
        assert!(reference["return"].as_f64().is_some_and(f64::is_finite), "{method}: {reference}");
    }
}

/// Re-simulates an inventory answer from its orders and demands alone with or-gym's default
/// chain (stages 0-2 and a factory; capacities 100, 90, 80; lead times 3, 5, 10) and returns
/// the re-scored discounted return; checks each period's shipments on the way.
fn replay_inventory(solution: &Value, backlog: bool) -> f64 {
    let (capacity, lead, m) = ([100.0, 90.0, 80.0], [3usize, 5, 10], 3);
    let (price, cost, penalty, holding) =
        ([2.0, 1.5, 1.0, 0.75], [1.5, 1.0, 0.75, 0.5], [0.1, 0.075, 0.05, 0.025], [0.15, 0.1, 0.05, 0.0]);
    let orders: Vec<Vec<f64>> = solution["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
        .collect();
    let demands: Vec<f64> = solution["demands"].as_array().unwrap().iter().map(|d| d.as_f64().unwrap()).collect();
    let (mut stock, mut owed, mut shipments) = (vec![100.0, 100.0, 200.0], vec![0.0; 4], Vec::<Vec<f64>>::new());
    let mut total = 0.0;
    for (n, order) in orders.iter().enumerate() {
        let wanted: Vec<f64> = (0..m).map(|i| order[i] + owed[i + 1]).collect();
        let shipped: Vec<f64> =
            (0..m).map(|i| wanted[i].min(capacity[i]).min(if i < 2 { stock[i + 1] } else { f64::INFINITY })).collect();
        assert_eq!(solution["shipped"][n], json!(shipped), "period {n}: shipments");
        shipments.push(shipped.clone());
        for i in 0..m {
            if n >= lead[i] {
                stock[i] += shipments[n - lead[i]][i];
            }
        }
        let demand = demands[n] + owed[0];
        let sales = [stock[0].min(demand), shipped[0], shipped[1], shipped[2]];
        for i in 0..m {
            stock[i] -= sales[i];
        }
        let unmet = [demand - sales[0], wanted[0] - sales[1], wanted[1] - sales[2], wanted[2] - sales[3]];
        owed = if backlog { unmet.to_vec() } else { vec![0.0; 4] };
        let bought = [shipped[0], shipped[1], shipped[2], shipped[2]];
        let held = [stock[0], stock[1], stock[2], 0.0];
        let profit: f64 = (0..4)
            .map(|i| price[i] * sales[i] - cost[i] * bought[i] - penalty[i] * unmet[i] - holding[i] * held[i])
            .sum();
        total += 0.97f64.powi(n as i32) * profit;
    }
    total
}

/// Every inventory method's answer re-simulates to its return on the same demands; the tuned
/// base stock beats ordering nothing; the shipped policies (when present) stay near it.
#[test]
fn inventory_solves_replay_and_policies_reach_base_stock() {
    let models = registry();
    for (id, backlog) in rlsolver::problems::orgym::inventory::env::IDS {
        let problem = find(id).unwrap();
        let mut totals = std::collections::BTreeMap::<String, f64>::new();
        for seed in 0..6 {
            for method in ["policy", "base_stock", "shrinking_horizon_lp", "zero"] {
                let options = SolveOptions { method: Some(method.into()), seed: Some(seed), ..Default::default() };
                let report =
                    solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
                if method == "shrinking_horizon_lp" {
                    let lp = report.solution["reference"]["shrinking_horizon_lp_return"].as_f64().unwrap();
                    assert!((lp - report.objective).abs() < 1e-9, "{id}: the reference is the same episode");
                }
                let replayed = replay_inventory(&report.solution, backlog);
                assert!(
                    (replayed - report.objective).abs() <= 1e-6 * replayed.abs().max(1.0),
                    "{id} {method} seed {seed}: {replayed} vs {}",
                    report.objective
                );
                let label = report.solution["method"].as_str().unwrap().to_string();
                *totals.entry(if method == "policy" { label } else { method.to_string() }).or_default() +=
                    report.objective;
            }
        }
        eprintln!("{id}: {totals:?}");
        assert!(totals["base_stock"] > totals["zero"], "{id}: {totals:?}");
        // The LP re-plans with the clock: 27% (v0) and 20% (v1) above the base stock in the bench.
        assert!(totals["shrinking_horizon_lp"] > 1.1 * totals["base_stock"], "{id}: {totals:?}");
        let name = format!("policy orgym-{}", id.to_lowercase());
        // The bench's measured ratios: v1 1.024 (the bar: at least the base stock), v0 0.855 (it
        // misses; README). These floors catch a policy that got worse.
        let floor = if backlog { 0.8 } else { 0.97 };
        match totals.get(&name) {
            Some(policy) => assert!(*policy >= floor * totals["base_stock"], "{id}: {totals:?}"),
            None => assert!(std::env::var("CI").is_err(), "{id}: no shipped policy in models/"),
        }
    }
}

/// Bad inventory parameters are 4xx errors naming the field, before any work.
#[test]
fn inventory_parameters_are_checked() {
    let models = registry();
    let problem = find("InvManagement-v1").unwrap();
    let cases = [
        (json!({"lead_time": [1, 2]}), "lead_time", false),
        (json!({"lead_time": [1, 2, 500]}), "lead_time", true),
        (json!({"discount": 0}), "discount", false),
        (json!({"periods": 5000}), "periods", true),
        (json!({"demand": [1, 2, 3]}), "demand", false),
        (json!({"initial_inventory": vec![1; 11]}), "initial_inventory", true),
        (json!({"capacity": [100, 0, 80]}), "capacity", false),
        (json!({"colour": 1}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
}

/// Re-trades a portfolio answer from its prices and executed trades alone (or-gym's default
/// costs, asset order within a period): no sale beyond the holding, no purchase beyond the
/// cash, no trade beyond 2000 shares; returns the final wealth at the last period's prices.
fn replay_portfolio(solution: &Value) -> f64 {
    let prices: Vec<Vec<f64>> = serde_json::from_value(solution["prices"].clone()).unwrap();
    let trades: Vec<Vec<f64>> = serde_json::from_value(solution["trades"].clone()).unwrap();
    let (buy, sell) = ([0.045, 0.025, 0.035], [0.04, 0.02, 0.03]);
    let (mut cash, mut holdings) = (100.0f64, [0.0f64; 3]);
    for (t, row) in trades.iter().enumerate() {
        for (i, &x) in row.iter().enumerate() {
            assert!(x.abs() <= 2000.0 + 1e-9, "period {t} asset {i}: {x} shares");
            holdings[i] += x;
            cash -= if x > 0.0 { prices[i][t] * x * (1.0 + buy[i]) } else { prices[i][t] * x * (1.0 - sell[i]) };
            assert!(
                holdings[i] >= -1e-9 && cash >= -1e-9 * cash.abs().max(1.0),
                "period {t} asset {i}: {cash} {holdings:?}"
            );
        }
    }
    let last = trades.len() - 1;
    cash + (0..3).map(|i| prices[i][last] * holdings[i]).sum::<f64>()
}

/// Every portfolio method's answer re-trades to its wealth; none beats the perfect-information
/// oracle on its prices; the shrinking-horizon LP reaches 90% of it (93.6% in the bench) and
/// the shipped policy 75% (82% on its validation episodes) over 6 drawn episodes.
#[test]
fn portfolio_solves_retrade_and_the_oracle_bounds_them() {
    let models = registry();
    let problem = find("PortfolioOpt-v0").unwrap();
    let mut totals = std::collections::BTreeMap::<String, f64>::new();
    for seed in 0..6 {
        for method in ["policy", "shrinking_horizon_lp", "oracle", "hold_cash"] {
            let options = SolveOptions { method: Some(method.into()), seed: Some(seed), ..Default::default() };
            let report = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
            let wealth = replay_portfolio(&report.solution);
            assert!(
                (wealth - report.objective).abs() <= 1e-6 * wealth.max(1.0),
                "{method} seed {seed}: {wealth} vs {report:?}"
            );
            let oracle = report.solution["reference"]["oracle_wealth"].as_f64().unwrap();
            assert!(wealth <= oracle * (1.0 + 1e-6), "{method} seed {seed}: {wealth} above the oracle's {oracle}");
            let label = report.solution["method"].as_str().unwrap().to_string();
            *totals.entry(if method == "policy" { label } else { method.to_string() }).or_default() += wealth;
            *totals.entry("oracle (LP)".into()).or_default() += oracle / 4.0;
        }
    }
    eprintln!("PortfolioOpt-v0: {totals:?}");
    let oracle = totals["oracle (LP)"];
    assert!((totals["hold_cash"] - 600.0).abs() < 1e-9, "cash is kept");
    assert!((totals["oracle"] - oracle).abs() <= 1e-5 * oracle, "the oracle's plan earns what it promises");
    assert!(totals["shrinking_horizon_lp"] >= 0.9 * oracle, "{totals:?}");
    match totals.get("policy orgym-portfolioopt-v0") {
        Some(policy) => assert!(*policy >= 0.75 * oracle, "{totals:?}"),
        None => assert!(std::env::var("CI").is_err(), "no shipped PortfolioOpt policy in models/"),
    }
}

/// On given prices where asset 0 doubles, the oracle and the LP buy it at once and earn about
/// twice the cash less costs; bad parameters are 4xx errors naming the field.
#[test]
fn portfolio_given_prices_and_parameters_are_checked() {
    let models = registry();
    let problem = find("PortfolioOpt-v0").unwrap();
    let prices = json!([[1.0, 1.5, 2.0], [1.0, 1.0, 1.0], [1.0, 0.9, 0.8]]);
    let means = json!([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]);
    for method in ["oracle", "shrinking_horizon_lp"] {
        let options = SolveOptions { method: Some(method.into()), ..Default::default() };
        let body = json!({"prices": prices, "price_means": [[1.0, 1.5, 2.0], [1.0, 1.0, 1.0], [1.0, 0.9, 0.8]]});
        let report = solve(problem, ProblemInput::Json(&body), &options, &Limits::default(), &models).unwrap();
        let expected = 100.0 / 1.045 * 2.0;
        assert!((report.objective - expected).abs() < 1e-3, "{method}: {} vs {expected}", report.objective);
        assert!((replay_portfolio(&report.solution) - report.objective).abs() < 1e-6);
    }
    let cases = [
        (json!({"prices": [[1.0, 2.0]]}), "prices", false),
        (json!({"prices": [vec![1.0; 10], vec![1.0; 10], vec![-1.0; 10]]}), "prices", false),
        (json!({"buy_cost": [0.1, 0.1]}), "buy_cost", false),
        (json!({"sell_cost": [0.1, 1.5, 0.1]}), "sell_cost", false),
        (json!({"price_std": -1}), "price_std", false),
        (json!({"price_means": vec![vec![1.0; 300]; 3]}), "price_means", true),
        (json!({"price_means": vec![vec![1.0; 40]; 30]}), "price_means", true),
        (
            json!({"price_means": means, "buy_cost": [0.0, 0.0, 0.0], "prices": [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]}),
            "prices",
            false,
        ),
        (json!({"leverage": 2}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
}

/// Re-packs a VM-packing answer from its demands and machines alone (v0: VMs never end): no
/// machine above 1 + 1e-5 in CPU or memory unless the answer says it overloaded at its last
/// step, and the return recomputed as minus the free capacity of the open machines per step.
fn repack_vms(solution: &Value, machines: usize) -> f64 {
    let demands: Vec<[f64; 2]> = serde_json::from_value(solution["demands"].clone()).unwrap();
    let chosen: Vec<usize> = serde_json::from_value(solution["machines"].clone()).unwrap();
    let overloaded = solution["overloaded"].as_bool().unwrap();
    let mut loads = vec![None::<[f64; 2]>; machines];
    let mut total = 0.0;
    for (t, &m) in chosen.iter().enumerate() {
        let load = loads[m].unwrap_or([0.0, 0.0]);
        let after = [load[0] + demands[t][0], load[1] + demands[t][1]];
        if after.iter().any(|&x| x > 1.0 + 1e-5) {
            assert!(overloaded && t == chosen.len() - 1, "step {t}: machine {m} overloaded mid-episode");
            return total - 1000.0;
        }
        loads[m] = Some(after);
        total -= loads.iter().flatten().map(|l| 2.0 - l[0] - l[1]).sum::<f64>();
    }
    total
}

/// Every VMPacking-v0 method's answer re-packs to its return (float32 in the env, so to 1e-3);
/// the references never overload; the shipped policy wastes at most 10% more free capacity
/// than best fit over 6 drawn episodes (the bench's measured ratio is in the README).
#[test]
fn vm_packing_solves_repack() {
    let models = registry();
    let problem = find("VMPacking-v0").unwrap();
    let mut totals = std::collections::BTreeMap::<String, f64>::new();
    for seed in 0..6 {
        for method in ["policy", "first_fit", "best_fit"] {
            let options = SolveOptions { method: Some(method.into()), seed: Some(seed), ..Default::default() };
            let report = solve(problem, ProblemInput::Json(&json!({})), &options, &Limits::default(), &models).unwrap();
            let repacked = repack_vms(&report.solution, 50);
            assert!(
                (repacked - report.objective).abs() <= 1e-3 * repacked.abs(),
                "{method} seed {seed}: {repacked} vs {}",
                report.objective
            );
            if method != "policy" {
                assert!(!report.solution["overloaded"].as_bool().unwrap(), "{method} seed {seed} overloaded");
            }
            let label = report.solution["method"].as_str().unwrap().to_string();
            *totals.entry(if method == "policy" { label } else { method.to_string() }).or_default() += report.objective;
        }
    }
    eprintln!("VMPacking-v0: {totals:?}");
    match totals.get("policy orgym-vmpacking-v0") {
        Some(policy) => assert!(*policy >= 1.1 * totals["best_fit"], "{totals:?}"),
        None => assert!(std::env::var("CI").is_err(), "no shipped VMPacking-v0 policy in models/"),
    }
    let given = json!({"machines": 2, "step_limit": 3, "demands": [[0.6, 0.1], [0.5, 0.1], [0.3, 0.2]]});
    let options = SolveOptions { method: Some("best_fit".into()), ..Default::default() };
    let report = solve(problem, ProblemInput::Json(&given), &options, &Limits::default(), &models).unwrap();
    assert_eq!(
        report.solution["machines"],
        json!([0, 1, 0]),
        "0.5 does not fit beside 0.6; 0.3 goes to the fuller machine"
    );
    let cases = [
        (json!({"machines": 0}), "machines", false),
        (json!({"machines": 5000}), "machines", true),
        (json!({"step_limit": 100000}), "step_limit", true),
        (json!({"demands": [[0.5, 0.1]]}), "demands", false),
        (json!({"cpu_mean": -3}), "cpu_mean", false),
        (json!({"racks": 3}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
}

/// Re-drives a vehicle-routing answer from its actions alone: the driver moves at most one grid
/// step per step, only on a move action (11-32), and stays within the 0..=5 grid; the return
/// is the rewards' sum. Returns the number of moves.
fn redrive(solution: &Value) -> usize {
    let actions: Vec<usize> = serde_json::from_value(solution["actions"].clone()).unwrap();
    let driver: Vec<(i64, i64)> = serde_json::from_value(solution["driver"].clone()).unwrap();
    let mut moves = 0;
    for t in 1..driver.len() {
        let step = (driver[t].0 - driver[t - 1].0).abs() + (driver[t].1 - driver[t - 1].1).abs();
        assert!(
            step <= 1 && (step == 0 || actions[t] >= 11),
            "step {t}: {:?} -> {:?} by {}",
            driver[t - 1],
            driver[t],
            actions[t]
        );
        assert!((0..=5).contains(&driver[t].0) && (0..=5).contains(&driver[t].1));
        moves += step as usize;
    }
    let rewards: Vec<f64> = serde_json::from_value(solution["rewards"].clone()).unwrap();
    let total: f64 = rewards.iter().sum();
    assert!((total - solution["return"].as_f64().unwrap()).abs() < 1e-9);
    moves
}

/// Every VehicleRouting-v0 method's answer re-drives (one cell per move, the return the
/// rewards' sum); the dispatcher earns more than waiting on 4 seeds, and the shipped policy
/// more than the dispatcher (its measured ratio to the dispatcher is in the README).
#[test]
fn vehicle_routing_solves_redrive() {
    let models = registry();
    let problem = find("VehicleRouting-v0").unwrap();
    let mut totals = std::collections::BTreeMap::<String, f64>::new();
    for seed in 0..4 {
        for method in ["policy", "dispatcher", "wait"] {
            let options = SolveOptions { method: Some(method.into()), seed: Some(seed), ..Default::default() };
            let body = json!({"step_limit": 1000});
            let report = solve(problem, ProblemInput::Json(&body), &options, &Limits::default(), &models).unwrap();
            let moves = redrive(&report.solution);
            if method == "wait" {
                assert_eq!((moves, report.objective), (0, 0.0), "waiting neither moves nor earns");
            }
            let label = report.solution["method"].as_str().unwrap().to_string();
            *totals.entry(if method == "policy" { label } else { method.to_string() }).or_default() += report.objective;
        }
    }
    eprintln!("VehicleRouting-v0: {totals:?}");
    assert!(totals["dispatcher"] > 0.0, "{totals:?}");
    match totals.get("policy orgym-vehiclerouting-v0") {
        // `bench orgym` measured the policy at 1.73x the dispatcher over 1,000-step episodes.
        Some(policy) => assert!(*policy > totals["dispatcher"], "{totals:?}"),
        None => assert!(std::env::var("CI").is_err(), "no shipped VehicleRouting-v0 policy in models/"),
    }
    let cases = [
        (json!({"order_prob": 1.5}), "order_prob", false),
        (json!({"step_limit": 1000000}), "step_limit", true),
        (json!({"order_probs_per_zone": [0, 0, 0, 0]}), "order_probs_per_zone", false),
        (json!({"order_reward_max": [1, 1, 1, 1]}), "order_reward_max", false),
        (json!({"drivers": 2}), "instance", false),
    ];
    expect_field_errors(problem, &models, &cases);
}

/// TSP-v0 and TSP-v1 answers re-walk, the shipped policy's and the reference's (`method`):
/// every move along an edge of the answered graph (v0) or to a new node (v1), the path visits
/// every node once it completes, and the return is the rewards' sum (v1: minus the path's
/// length recomputed from the points). The policy's walk is within reach of the reference's:
/// TSP-v0 at most 2 moves longer, TSP-v1's path at most 1.5 times as long.
#[test]
fn tsp_envs_solve_and_rewalk() {
    let models = registry();
    for (id, distance_cost) in rlsolver::problems::orgym::tsp::env::IDS {
        let problem = find(id).unwrap();
        for seed in 0..3 {
            let body = if distance_cost {
                let points: Vec<[f64; 2]> =
                    (0..20).map(|i| [(i as f64 * 0.37) % 1.0, (i as f64 * 0.61) % 1.0]).collect();
                json!({"nodes": 20, "coordinates": points, "negate_distance": true})
            } else {
                json!({"nodes": 20})
            };
            for method in [None, Some("reference")] {
                let options =
                    SolveOptions { seed: Some(seed), method: method.map(str::to_string), ..Default::default() };
                let report = solve(problem, ProblemInput::Json(&body), &options, &Limits::default(), &models).unwrap();
                let solution = &report.solution;
                let answered = solution["method"].as_str().unwrap();
                assert!(answered.starts_with(method.unwrap_or("policy orgym-tsp")), "{id}: {answered}");
                let path: Vec<usize> = serde_json::from_value(solution["path"].clone()).unwrap();
                let rewards: Vec<f64> = serde_json::from_value(solution["rewards"].clone()).unwrap();
                let mut seen = std::collections::BTreeSet::new();
                if distance_cost {
                    assert!(path.iter().all(|&n| seen.insert(n)), "{id}: a node twice in {path:?}");
                    let points = body["coordinates"].as_array().unwrap();
                    let at = |n: usize| (points[n][0].as_f64().unwrap(), points[n][1].as_f64().unwrap());
                    let length: f64 = path
                        .windows(2)
                        .map(|w| ((at(w[0]).0 - at(w[1]).0).powi(2) + (at(w[0]).1 - at(w[1]).1).powi(2)).sqrt())
                        .sum();
                    assert!((length + report.objective).abs() < 1e-9, "{id}: length {length} vs {}", report.objective);
                } else {
                    seen.extend(path.iter().copied());
                    assert!(rewards.iter().all(|&r| r == -1.0 || r == 999.0), "{id}: only valid moves, {rewards:?}");
                }
                assert_eq!(seen.len(), 20, "{id} seed {seed}: every node visited");
                assert!((rewards.iter().sum::<f64>() - report.objective).abs() < 1e-9);
                let reference = solution["reference"]["return"].as_f64().unwrap();
                if method.is_some() {
                    assert!((reference - report.objective).abs() < 1e-9);
                } else if distance_cost {
                    assert!(
                        -report.objective <= -1.5 * reference,
                        "{id}: policy {} vs reference {reference}",
                        report.objective
                    );
                } else {
                    assert!(
                        report.objective >= reference - 2.0,
                        "{id}: policy {} vs reference {reference}",
                        report.objective
                    );
                }
            }
        }
        let cases = [
            (json!({"nodes": 2}), "nodes", false),
            (json!({"nodes": 5000}), "nodes", true),
            (json!({"nodes": 4, "edges": [[1], [2], [3], [9]]}), "edges", false),
            (json!({"nodes": 3, "coordinates": [[0, 0]]}), "coordinates", false),
            (json!({"cities": 3}), "instance", false),
        ];
        expect_field_errors(problem, &models, &cases);
    }
}
