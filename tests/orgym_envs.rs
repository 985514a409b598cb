//! The native OR-Gym knapsack environments replay trajectories recorded from or-gymnasium 0.1.0
//! (tests/fixtures/orgym/record.py): same observations (gymnasium's flattening), rewards,
//! termination and truncation, on the instance the reference drew.

use rand::SeedableRng;
use rlsolver::drl::env::VecEnv;
use rlsolver::problems::orgym::knapsack::env::{KnapsackConfig, KnapsackItems, KnapsackVecEnv, Variant};
use serde_json::Value;

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn integers(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn same(ours: &[f32], theirs: &[f64], columns: &[usize], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: observation width");
    for &c in columns {
        assert_eq!(f64::from(ours[c]), theirs[c], "{what}: column {c}");
    }
}

fn replay(variant: Variant) {
    let id = variant.id();
    let path = format!("{}/tests/fixtures/orgym/{id}.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = data["episodes"].as_array().unwrap();
    let (mut steps, mut ends) = (0, [0usize; 2]);
    for episode in episodes {
        let label = format!("{id} {} seed {}", episode["policy"], episode["seed"]);
        let instance = KnapsackItems {
            weights: integers(&episode["weights"]),
            values: integers(&episode["values"]),
            limits: episode["limits"].as_array().map(|_| integers(&episode["limits"])),
        };
        let config =
            KnapsackConfig { items: instance.weights.len(), instance: Some(instance), ..KnapsackConfig::new(variant) };
        config.validate().unwrap();
        let mut env = KnapsackVecEnv::new(config, 1);
        let online = variant == Variant::Online;
        let initial = numbers(&episode["initial_observation"]);
        if online {
            env.show(0, initial[5] as usize);
        }
        let all: Vec<usize> = (0..initial.len()).collect();
        same(&env.observations(), &initial, &all, &format!("{label} reset"));
        for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{label} step {t}");
            let batch = env.step(&[step["action"].as_f64().unwrap() as f32]);
            let flags = (step["terminated"].as_bool().unwrap(), step["truncated"].as_bool().unwrap());
            assert_eq!((batch.terminated[0], batch.truncated[0]), flags, "{at}");
            assert_eq!(f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap(), "{at}: reward");
            let theirs = numbers(&step["observation"]);
            if flags.0 || flags.1 {
                // The last observation shows an item each implementation drew for itself.
                let columns: Vec<usize> = if online { vec![0, 2, 3, 4] } else { all.clone() };
                same(&batch.final_observations, &theirs, &columns, &at);
                ends[usize::from(flags.1)] += 1;
            } else {
                if online {
                    env.show(0, theirs[5] as usize);
                }
                same(&env.observations(), &theirs, &all, &at);
            }
            steps += 1;
        }
    }
    assert!(episodes.len() >= 9 && ends.iter().sum::<usize>() == episodes.len(), "{id}: every episode ends");
    eprintln!(
        "{id}: {} episodes, {steps} steps replayed, {} terminated, {} truncated",
        episodes.len(),
        ends[0],
        ends[1]
    );
}

#[test]
fn unbounded_knapsack_matches_or_gymnasium() {
    replay(Variant::Unbounded);
}

#[test]
fn binary_knapsack_matches_or_gymnasium() {
    replay(Variant::Binary);
}

#[test]
fn bounded_knapsack_matches_or_gymnasium() {
    replay(Variant::Bounded);
}

#[test]
fn online_knapsack_matches_or_gymnasium() {
    replay(Variant::Online);
}

/// A seeded batch replays, episodes differ across envs, and the references bound every return.
#[test]
fn knapsack_envs_are_seeded_and_bounded_by_their_references() {
    use rlsolver::problems::orgym::knapsack::reference::{greedy_action, rollout};
    for variant in Variant::ALL {
        let config = KnapsackConfig::new(variant);
        let mut greedy = |obs: &[f32], dim: usize| -> Vec<f32> {
            obs.chunks(dim).map(|row| greedy_action(&config, row, 1.0)).collect()
        };
        let (returns, optima) = rollout(&config, 16, 5, &mut greedy);
        let (again, _) = rollout(&config, 16, 5, &mut greedy);
        assert_eq!(returns, again, "{variant:?}: same seed, same episodes");
        assert!(returns.windows(2).any(|w| w[0] != w[1]), "{variant:?}: envs of a batch draw different instances");
        for (r, o) in returns.iter().zip(&optima) {
            assert!(r <= o, "{variant:?}: a return {r} above the optimum {o}");
        }
        let ratio = returns.iter().sum::<f64>() / optima.iter().sum::<f64>();
        assert!(ratio > 0.5, "{variant:?}: greedy gets {ratio} of the optimum");
        eprintln!("{variant:?}: greedy {ratio:.4} of the optimum");
    }
}

/// A sparse fixture observation ({width, nonzero: [[column, value]]}) as a dense row.
fn dense(v: &Value) -> Vec<f64> {
    let mut row = vec![0.0; v["width"].as_u64().unwrap() as usize];
    for pair in v["nonzero"].as_array().unwrap() {
        row[pair[0].as_u64().unwrap() as usize] = pair[1].as_f64().unwrap();
    }
    row
}

/// BinPacking-vN replays or-gymnasium's episodes, with its plain state and with or-gym's mask;
/// the item each step shows is the reference's (the last column).
fn replay_binpacking(id: &str) {
    use rlsolver::problems::orgym::binpacking::env::{BinPackingConfig, BinPackingVecEnv};
    let path = format!("{}/tests/fixtures/orgym/{id}.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = data["episodes"].as_array().unwrap();
    let (mut steps, mut ends, mut masked) = (0, [0usize; 2], 0);
    for episode in episodes {
        let mask = episode["mask"].as_bool().unwrap();
        let label = format!("{id} {} seed {} mask {mask}", episode["policy"], episode["seed"]);
        let config = BinPackingConfig { mask, ..BinPackingConfig::by_id(id).unwrap() };
        config.validate().unwrap();
        let cap = config.bin_capacity as usize;
        let mut env = BinPackingVecEnv::new(config, 1);
        let initial = dense(&episode["initial_observation"]);
        env.show(0, *initial.last().unwrap() as u32);
        let all: Vec<usize> = (0..initial.len()).collect();
        same(&env.observations(), &initial, &all, &format!("{label} reset"));
        for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{label} step {t}");
            let batch = env.step(&[step["action"].as_f64().unwrap() as f32]);
            let flags = (step["terminated"].as_bool().unwrap(), step["truncated"].as_bool().unwrap());
            assert_eq!((batch.terminated[0], batch.truncated[0]), flags, "{at}");
            assert_eq!(f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap(), "{at}: reward");
            let theirs = dense(&step["observation"]);
            if flags.0 || flags.1 {
                // The last observation shows an item each drew for itself; the mask depends on
                // it, the bin counts do not.
                let state = if mask { 2 * cap } else { 0 };
                let columns: Vec<usize> = (state..state + cap).collect();
                same(&batch.final_observations, &theirs, &columns, &at);
                ends[usize::from(flags.1)] += 1;
            } else {
                env.show(0, *theirs.last().unwrap() as u32);
                same(&env.observations(), &theirs, &all, &at);
            }
            masked += usize::from(mask);
            steps += 1;
        }
    }
    assert!(episodes.len() >= 18 && masked > 100, "{id}: both observation kinds replayed");
    assert!(ends[0] >= 3, "{id}: impossible actions end episodes");
    eprintln!(
        "{id}: {} episodes, {steps} steps replayed, {} terminated, {} truncated",
        episodes.len(),
        ends[0],
        ends[1]
    );
}

#[test]
fn bin_packing_matches_or_gymnasium() {
    for id in rlsolver::problems::orgym::binpacking::env::IDS {
        replay_binpacking(id);
    }
}

/// Newsvendor-v0 replays or-gymnasium's episodes on the economics and demands it drew:
/// observations exactly, rewards to float32 rounding (under NumPy 2's promotion rules part of
/// the reference's reward is computed in float32).
#[test]
fn newsvendor_matches_or_gymnasium() {
    use rlsolver::problems::orgym::newsvendor::env::{Economics, NewsvendorConfig, NewsvendorVecEnv};
    let path = format!("{}/tests/fixtures/orgym/Newsvendor-v0.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = data["episodes"].as_array().unwrap();
    let (mut steps, mut clipped) = (0, 0);
    for episode in episodes {
        let label = format!("Newsvendor-v0 {} seed {}", episode["policy"], episode["seed"]);
        let economics: Economics = serde_json::from_value(episode["economics"].clone()).unwrap();
        let mut env = NewsvendorVecEnv::new(NewsvendorConfig::default(), 1);
        env.set_economics(0, economics);
        let initial = numbers(&episode["initial_observation"]);
        let all: Vec<usize> = (0..initial.len()).collect();
        same(&env.observations(), &initial, &all, &format!("{label} reset"));
        let last = episode["steps"].as_array().unwrap().len() - 1;
        for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{label} step {t}");
            let order = step["action"].as_f64().unwrap() as f32;
            let room = 4000.0 - env.episode(0).pipeline.iter().sum::<f32>();
            clipped += usize::from(order > room);
            env.force_demand(0, step["demand"].as_u64().unwrap());
            let batch = env.step(&[order]);
            assert_eq!((batch.terminated[0], batch.truncated[0]), (false, t == last), "{at}");
            let (ours, theirs) = (f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap());
            assert!((ours - theirs).abs() <= 1e-5 * theirs.abs() + 1e-3, "{at}: reward {ours} vs {theirs}");
            let row = if t == last { &batch.final_observations } else { &batch.observations };
            same(row, &numbers(&step["observation"]), &all, &at);
            steps += 1;
        }
    }
    assert!(episodes.len() >= 12 && clipped > 10, "the inventory clip is exercised ({clipped} clipped orders)");
    eprintln!("Newsvendor-v0: {} episodes, {steps} steps replayed, {clipped} orders clipped", episodes.len());
}

/// InvManagement-v0 (backlog) and -v1 (lost sales) replay or-gymnasium's episodes on the
/// demands it drew: observations exactly, rewards to rounding (the same float64 terms, summed
/// in another order).
#[test]
fn inventory_management_matches_or_gymnasium() {
    use rlsolver::problems::orgym::inventory::env::{InventoryConfig, InventoryVecEnv, IDS};
    for (id, _) in IDS {
        let path = format!("{}/tests/fixtures/orgym/{id}.json", env!("CARGO_MANIFEST_DIR"));
        let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let episodes = data["episodes"].as_array().unwrap();
        let mut steps = 0;
        for episode in episodes {
            let label = format!("{id} {} seed {}", episode["policy"], episode["seed"]);
            let mut env = InventoryVecEnv::new(InventoryConfig::by_id(id).unwrap(), 1);
            let initial = numbers(&episode["initial_observation"]);
            let all: Vec<usize> = (0..initial.len()).collect();
            same(&env.observations(), &initial, &all, &format!("{label} reset"));
            let last = episode["steps"].as_array().unwrap().len() - 1;
            for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
                let at = format!("{label} step {t}");
                let action: Vec<f32> = numbers(&step["action"]).iter().map(|&a| a as f32).collect();
                env.episode_mut(0).force_demand(step["demand"].as_u64().unwrap());
                let batch = env.step(&action);
                assert_eq!((batch.terminated[0], batch.truncated[0]), (false, t == last), "{at}");
                let (ours, theirs) = (f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap());
                assert!((ours - theirs).abs() <= 1e-6 * theirs.abs() + 1e-4, "{at}: reward {ours} vs {theirs}");
                let row = if t == last { &batch.final_observations } else { &batch.observations };
                same(row, &numbers(&step["observation"]), &all, &at);
                steps += 1;
            }
        }
        assert!(episodes.len() >= 9, "{id}: episodes recorded");
        eprintln!("{id}: {} episodes, {steps} steps replayed", episodes.len());
    }
}

/// PortfolioOpt-v0 replays or-gymnasium's episodes on the prices it drew (one with a bankrupt
/// asset): observations exactly (float32), the final wealth to rounding.
#[test]
fn portfolio_matches_or_gymnasium() {
    use rlsolver::problems::orgym::portfolio::env::{PortfolioConfig, PortfolioVecEnv};
    let path = format!("{}/tests/fixtures/orgym/PortfolioOpt-v0.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = data["episodes"].as_array().unwrap();
    let (mut steps, mut capped) = (0, 0);
    for episode in episodes {
        let label = format!("PortfolioOpt-v0 {} seed {}", episode["policy"], episode["seed"]);
        let prices: Vec<Vec<f64>> = serde_json::from_value(episode["prices"].clone()).unwrap();
        let mut env = PortfolioVecEnv::new(PortfolioConfig::default(), 1);
        env.set_prices(0, prices);
        let initial = numbers(&episode["initial_observation"]);
        let all: Vec<usize> = (0..initial.len()).collect();
        same(&env.observations(), &initial, &all, &format!("{label} reset"));
        let last = episode["steps"].as_array().unwrap().len() - 1;
        for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{label} step {t}");
            let action: Vec<f32> = numbers(&step["action"]).iter().map(|&a| a as f32).collect();
            let before = env.episode(0).holdings.clone();
            let batch = env.step(&action);
            let after = &env.episode(0).holdings;
            capped += (0..3)
                .filter(|&i| t < last && action[i] > 0.0 && after[i] - before[i] < f64::from(action[i]) - 1e-9)
                .count();
            assert_eq!((batch.terminated[0], batch.truncated[0]), (false, t == last), "{at}");
            let (ours, theirs) = (f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap());
            assert!((ours - theirs).abs() <= 1e-6 * theirs.abs() + 1e-6, "{at}: reward {ours} vs {theirs}");
            let row = if t == last { &batch.final_observations } else { &batch.observations };
            same(row, &numbers(&step["observation"]), &all, &at);
            steps += 1;
        }
    }
    assert!(episodes.len() >= 16 && capped > 0, "{capped} purchases cut to the cash");
    eprintln!("PortfolioOpt-v0: {} episodes, {steps} steps replayed", episodes.len());
}

/// TSP-v0 and TSP-v1 replay or-gymnasium's episodes on the graphs and starts it drew:
/// TSP-v1's observations exactly, TSP-v0's current node and its matrix's counts every step and
/// the whole matrix every tenth step (the fixture keeps N^2 + 1 columns only there), rewards to
/// float32 rounding, terminations and truncations exactly.
#[test]
fn tsp_matches_or_gymnasium() {
    use rlsolver::problems::orgym::tsp::env::{two_way, Graph, TspConfig, TspVecEnv, IDS};
    for (id, distance_cost) in IDS {
        let path = format!("{}/tests/fixtures/orgym/{id}.json", env!("CARGO_MANIFEST_DIR"));
        let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let episodes = data["episodes"].as_array().unwrap();
        let (mut steps, mut matrices, mut ends) = (0, 0, [0usize; 2]);
        for episode in episodes {
            let label = format!("{id} {} seed {}", episode["policy"], episode["seed"]);
            let config = TspConfig::by_id(id).unwrap();
            let graph = if distance_cost {
                Graph::Euclidean(serde_json::from_value(episode["coordinates"].clone()).unwrap())
            } else {
                let lists: Vec<Vec<usize>> = serde_json::from_value(episode["edges"].clone()).unwrap();
                Graph::Sparse(two_way(config.nodes, &lists))
            };
            let mut env = TspVecEnv::new(config.clone(), 1);
            env.set_walk(0, graph, episode["start"].as_u64().unwrap() as usize);
            let dim = config.observation_dim();
            if distance_cost {
                let initial = numbers(&episode["initial_observation"]);
                same(&env.observations(), &initial, &(0..dim).collect::<Vec<_>>(), &format!("{label} reset"));
            }
            let last = episode["steps"].as_array().unwrap().len() - 1;
            for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
                let at = format!("{label} step {t}");
                let batch = env.step(&[step["action"].as_f64().unwrap() as f32]);
                let flags = (step["terminated"].as_bool().unwrap(), step["truncated"].as_bool().unwrap());
                assert_eq!((batch.terminated[0], batch.truncated[0]), flags, "{at}");
                assert_eq!(flags.0 || flags.1, t == last, "{at}: the episode ends at the fixture's last step");
                let (ours, theirs) = (f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap());
                assert!((ours - theirs).abs() <= 1e-6 * theirs.abs().max(1.0), "{at}: reward {ours} vs {theirs}");
                let row = if t == last { &batch.final_observations } else { &batch.observations };
                if distance_cost {
                    same(row, &numbers(&step["observation"]), &(0..dim).collect::<Vec<_>>(), &at);
                } else {
                    assert_eq!(f64::from(row[0]), step["current"].as_f64().unwrap(), "{at}: current node");
                    let count = |v: f32| row[1..].iter().filter(|&&x| x == v).count() as u64;
                    let counts: Vec<u64> = serde_json::from_value(step["counts"].clone()).unwrap();
                    assert_eq!(vec![count(1.0), count(-1.0)], counts, "{at}: edges to unvisited, visited");
                    if let Some(matrix) = step["matrix"].as_str() {
                        let theirs: Vec<f32> = matrix
                            .chars()
                            .map(|c| match c {
                                '1' => 1.0,
                                '-' => -1.0,
                                _ => 0.0,
                            })
                            .collect();
                        assert_eq!(&row[1..], &theirs[..], "{at}: matrix");
                        matrices += 1;
                    }
                }
                steps += 1;
            }
            ends[usize::from(batch_ended_by_limit(episode))] += 1;
        }
        assert!(episodes.len() >= 12, "{id}: episodes recorded");
        if !distance_cost {
            assert!(ends[0] > 0 && ends[1] > 0, "{id}: both completion and the time limit are replayed ({ends:?})");
        }
        eprintln!("{id}: {} episodes, {steps} steps, {matrices} whole matrices replayed", episodes.len());
    }
}

/// Whether a recorded episode ended by its time limit (truncated and not terminated).
fn batch_ended_by_limit(episode: &Value) -> bool {
    let last = episode["steps"].as_array().unwrap().last().unwrap();
    last["truncated"].as_bool().unwrap() && !last["terminated"].as_bool().unwrap()
}

/// VMPacking-v0 and -v1 replay or-gymnasium's episodes on the demands (and v1's end steps) it
/// drew: observations exactly (the float32 loads, the clip and the mask), rewards exactly
/// (NumPy's float32 pairwise sum), overloads ending episodes.
#[test]
fn vm_packing_matches_or_gymnasium() {
    use rlsolver::problems::orgym::vmpacking::env::{VmPackingConfig, VmPackingVecEnv, IDS};
    for (id, temporary) in IDS {
        let path = format!("{}/tests/fixtures/orgym/{id}.json", env!("CARGO_MANIFEST_DIR"));
        let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let episodes = data["episodes"].as_array().unwrap();
        let (mut steps, mut overloads, mut closed) = (0, 0, 0);
        for episode in episodes {
            let label = format!("{id} {} seed {}", episode["policy"], episode["seed"]);
            let demand: Vec<[f32; 3]> = serde_json::from_value::<Vec<[f64; 3]>>(episode["demand"].clone())
                .unwrap()
                .iter()
                .map(|r| r.map(|x| x as f32))
                .collect();
            let durations: Vec<usize> =
                if temporary { serde_json::from_value(episode["durations"].clone()).unwrap() } else { Vec::new() };
            let mut env = VmPackingVecEnv::new(VmPackingConfig::by_id(id).unwrap(), 1);
            env.set_draws(0, demand, durations);
            let initial = numbers(&episode["initial_observation"]);
            let all: Vec<usize> = (0..initial.len()).collect();
            same(&env.observations(), &initial, &all, &format!("{label} reset"));
            let last = episode["steps"].as_array().unwrap().len() - 1;
            for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
                let at = format!("{label} step {t}");
                let open_before = env.episode(0).machines.iter().filter(|p| p[0] > 0.0).count();
                let batch = env.step(&[step["action"].as_f64().unwrap() as f32]);
                let flags = (step["terminated"].as_bool().unwrap(), step["truncated"].as_bool().unwrap());
                assert_eq!((batch.terminated[0], batch.truncated[0]), flags, "{at}");
                assert_eq!(f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap(), "{at}: reward");
                overloads += usize::from(flags.0);
                let row = if t == last { &batch.final_observations } else { &batch.observations };
                same(row, &numbers(&step["observation"]), &all, &at);
                if t < last {
                    let open_after = env.episode(0).machines.iter().filter(|p| p[0] > 0.0).count();
                    closed += usize::from(open_after < open_before);
                }
                steps += 1;
            }
        }
        assert!(overloads > 0, "{id}: an overload is replayed");
        assert_eq!(closed > 0, temporary, "{id}: machines close exactly when VMs end ({closed})");
        eprintln!(
            "{id}: {} episodes, {steps} steps replayed, {overloads} overloads, {closed} closings",
            episodes.len()
        );
    }
}

/// VehicleRouting-v0 replays or-gymnasium's episodes with the random part of every update (the
/// withdrawn and the new orders) presented: observations exactly (float32), rewards to float32
/// rounding, including expiries that take the vehicle's seats for good.
#[test]
fn vehicle_routing_matches_or_gymnasium() {
    use rlsolver::problems::orgym::vehicle_routing::env::{
        Dispatch, Draws, Order, VehicleRoutingConfig, VehicleRoutingVecEnv,
    };
    let path = format!("{}/tests/fixtures/orgym/VehicleRouting-v0.json", env!("CARGO_MANIFEST_DIR"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let episodes = data["episodes"].as_array().unwrap();
    let draws = |v: &Value| Draws {
        timeouts: serde_json::from_value(v["timeouts"].clone()).unwrap(),
        new_orders: v["new_orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| {
                let o = &pair[1];
                let order = Order {
                    status: o["status"].as_u64().unwrap() as u8,
                    restaurant: o["restaurant"].as_u64().unwrap() as usize,
                    delivery: (o["delivery"][0].as_i64().unwrap(), o["delivery"][1].as_i64().unwrap()),
                    time: o["time"].as_u64().unwrap() as u32,
                    value: o["value"].as_f64().unwrap(),
                };
                (pair[0].as_u64().unwrap() as usize, order)
            })
            .collect(),
    };
    let cell = |v: &Value| (v[0].as_i64().unwrap(), v[1].as_i64().unwrap());
    let (mut steps, mut seats_lost, mut expiries) = (0, 0, 0);
    for episode in episodes {
        let label = format!("VehicleRouting-v0 {} seed {}", episode["policy"], episode["seed"]);
        let config = VehicleRoutingConfig::default();
        let mut env = VehicleRoutingVecEnv::new(config.clone(), 1);
        let restaurants = [cell(&episode["restaurants"][0]), cell(&episode["restaurants"][1])];
        let mut start = Dispatch::placed(&config, restaurants, cell(&episode["driver"]));
        start.force(draws(episode));
        start.update_orders(&config, &mut rand_chacha::ChaCha8Rng::seed_from_u64(0));
        *env.episode_mut(0) = start;
        let initial = numbers(&episode["initial_observation"]);
        let all: Vec<usize> = (0..initial.len()).collect();
        same(&env.observations(), &initial, &all, &format!("{label} reset"));
        for (t, step) in episode["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{label} step {t}");
            env.episode_mut(0).force(draws(step));
            let batch = env.step(&[step["action"].as_f64().unwrap() as f32]);
            assert!(!batch.terminated[0] && !batch.truncated[0], "{at}");
            let (ours, theirs) = (f64::from(batch.rewards[0]), step["reward"].as_f64().unwrap());
            assert!((ours - theirs).abs() <= 1e-6 * theirs.abs().max(1.0), "{at}: reward {ours} vs {theirs}");
            expiries += usize::from(theirs <= -50.0);
            same(&batch.observations, &numbers(&step["observation"]), &all, &at);
            steps += 1;
        }
        seats_lost += 4 - env.episode(0).capacity as usize;
    }
    assert!(expiries > 0 && seats_lost > 0, "expiries ({expiries}) and lost seats ({seats_lost}) are replayed");
    eprintln!(
        "VehicleRouting-v0: {} episodes, {steps} steps, {expiries} expiries, {seats_lost} seats lost",
        episodes.len()
    );
}

/// TSP's `node_features` (ours) leave the reference's observation and rewards unchanged and say
/// what they claim: TSP-v0's moves to the nearest unvisited node agree with a breadth-first
/// search on the graph recovered from the reference's matrix, and a walk by their argmin
/// completes every graph about as fast as the routing reference; TSP-v1's distances are the
/// points', and their argmin walk is the nearest-neighbour path.
#[test]
fn tsp_node_features_describe_the_walk() {
    use rlsolver::problems::orgym::tsp::env::{Graph, TspConfig, TspVecEnv};
    use rlsolver::problems::orgym::tsp::reference::reference_returns;
    let argmin = |row: &[f32], mask: usize, values: usize, n: usize| {
        (0..n).filter(|&m| row[mask + m] > 0.5).min_by(|&a, &b| row[values + a].total_cmp(&row[values + b])).unwrap()
    };
    for (id, episodes) in [("TSP-v0", 16usize), ("TSP-v1", 16)] {
        let plain = TspConfig { nodes: 30, negate_distance: true, ..TspConfig::by_id(id).unwrap() };
        let featured = TspConfig { node_features: true, ..plain.clone() };
        let (n, base) = (plain.nodes, plain.observation_dim());
        assert_eq!(featured.observation_dim(), base + 4 * n + 1);
        let mut returns = Vec::new();
        for e in 0..episodes {
            let (mut a, mut b) = (TspVecEnv::new(plain.clone(), 1), TspVecEnv::new(featured.clone(), 1));
            let (mut obs_a, mut obs_b) = (a.reset(e as u64), b.reset(e as u64));
            let (mut total, mut nearest_path) = (0.0, vec![b.episode(0).current]);
            loop {
                assert_eq!(&obs_b[..base], &obs_a[..], "{id} episode {e}: the reference's observation is kept");
                let row = &obs_b;
                if let Graph::Sparse(_) = &b.episode(0).graph {
                    // The graph and the visits as the reference's matrix shows them.
                    let edge = |r: usize, c: usize| row[1 + r * n + c] != 0.0;
                    let visited: Vec<bool> = (0..n).map(|c| (0..n).any(|r| row[1 + r * n + c] == -1.0)).collect();
                    for m in 0..n {
                        let mut depth = vec![usize::MAX; n];
                        let mut frontier = vec![m];
                        depth[m] = 0;
                        let mut found = if visited[m] { None } else { Some(0) };
                        while found.is_none() && !frontier.is_empty() {
                            let mut next = Vec::new();
                            for &u in &frontier {
                                for v in 0..n {
                                    if edge(u, v) && depth[v] == usize::MAX {
                                        depth[v] = depth[u] + 1;
                                        next.push(v);
                                    }
                                }
                            }
                            found = next.iter().find(|&&v| !visited[v]).map(|&v| depth[v]);
                            frontier = next;
                        }
                        let hops = (row[base + 2 * n + m] * n as f32).round() as usize;
                        assert_eq!(hops, found.unwrap_or(n), "{id} episode {e}: node {m}'s moves to an unvisited node");
                    }
                } else if let Graph::Euclidean(points) = &b.episode(0).graph {
                    let here = points[b.episode(0).current];
                    for (m, p) in points.iter().enumerate() {
                        let d = ((here[0] - p[0]).powi(2) + (here[1] - p[1]).powi(2)).sqrt();
                        assert!(
                            (f64::from(row[base + 2 * n + m]) - d).abs() < 1e-5,
                            "{id} episode {e}: distance to {m}"
                        );
                    }
                    let last = *nearest_path.last().unwrap();
                    if let Some(next) = (0..n).filter(|m| !nearest_path.contains(m)).min_by(|&x, &y| {
                        let d = |k: usize| (points[last][0] - points[k][0]).hypot(points[last][1] - points[k][1]);
                        d(x).total_cmp(&d(y))
                    }) {
                        nearest_path.push(next);
                    }
                }
                let action = argmin(row, base, base + 2 * n, n) as f32;
                let (sa, sb) = (a.step(&[action]), b.step(&[action]));
                assert_eq!(
                    (sa.rewards[0], sa.terminated[0], sa.truncated[0]),
                    (sb.rewards[0], sb.terminated[0], sb.truncated[0])
                );
                total += f64::from(sb.rewards[0]);
                if sb.terminated[0] || sb.truncated[0] {
                    if id == "TSP-v1" {
                        assert_eq!(b.episode(0).path.len(), 1, "auto-reset");
                    }
                    break;
                }
                if id == "TSP-v1" {
                    assert_eq!(
                        b.episode(0).path,
                        nearest_path[..b.episode(0).path.len()],
                        "{id} episode {e}: nearest neighbour"
                    );
                }
                (obs_a, obs_b) = (sa.observations, sb.observations);
            }
            returns.push(total);
        }
        let mean = returns.iter().sum::<f64>() / episodes as f64;
        let reference: f64 =
            (0..episodes as u64).map(|e| reference_returns(&plain, 1, e)[0]).sum::<f64>() / episodes as f64;
        if id == "TSP-v0" {
            assert!(returns.iter().all(|&r| r > 1000.0 - 2.0 * n as f64), "{id}: every walk completes: {returns:?}");
            assert!(mean >= reference - 2.0, "{id}: the features' walk {mean} vs the reference's {reference}");
        } else {
            // Nearest neighbour alone is longer than nearest neighbour + 2-opt, but not by half.
            assert!(mean < reference && mean > 1.5 * reference, "{id}: nearest neighbour {mean} vs 2-opt {reference}");
        }
    }
}

/// InvManagement's and PortfolioOpt's `planning_features` (ours) keep the reference's
/// observation and rewards and say what they claim: the periods left; the retailer's backlog
/// as total demand minus total sales, each stage's pipeline as its shipments of the last L
/// periods; the portfolio's next, best remaining and last mean prices.
#[test]
fn planning_features_describe_the_state() {
    use rand::Rng;
    use rlsolver::problems::orgym::inventory::env::{InventoryConfig, InventoryVecEnv};
    use rlsolver::problems::orgym::portfolio::env::{PortfolioConfig, PortfolioVecEnv};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for id in ["InvManagement-v0", "InvManagement-v1"] {
        let plain = InventoryConfig::by_id(id).unwrap();
        let featured = InventoryConfig { planning_features: true, ..plain.clone() };
        let (m, base) = (plain.stages(), plain.observation_dim());
        assert_eq!(featured.observation_dim(), base + 2 * m + 2);
        for seed in 0..4 {
            let (mut a, mut b) = (InventoryVecEnv::new(plain.clone(), 1), InventoryVecEnv::new(featured.clone(), 1));
            let (mut obs_a, mut obs_b) = (a.reset(seed), b.reset(seed));
            let mut chain = b.episode(0).clone();
            let mut stream = b.stream(0).clone();
            let (mut demand, mut sold, mut shipped) = (0.0, 0.0, Vec::<Vec<f64>>::new());
            for t in 0..plain.periods {
                assert_eq!(&obs_b[..base], &obs_a[..], "{id} seed {seed} period {t}");
                let features = &obs_b[base..];
                assert!((features[0] - (plain.periods - t) as f32 / plain.periods as f32).abs() < 1e-6);
                let backlog = if plain.backlog { demand - sold } else { 0.0 };
                assert!((f64::from(features[1]) - backlog).abs() < 1e-3, "{id} period {t}: backlog {features:?}");
                for i in 0..m {
                    let recent: f64 = shipped.iter().rev().take(plain.lead_time[i]).map(|s| s[i]).sum();
                    assert!((f64::from(features[2 + m + i]) - recent).abs() < 1e-3, "{id} period {t}: pipeline {i}");
                }
                let action: Vec<f32> = (0..m).map(|_| rng.gen_range(0.0..60.0)).collect();
                let log = chain.step_period(&featured, &action, &mut stream);
                (demand, sold) = (demand + log.demand as f64, sold + log.sold);
                shipped.push(log.shipped.clone());
                let (sa, sb) = (a.step(&action), b.step(&action));
                assert_eq!(sa.rewards, sb.rewards);
                assert!((f64::from(sb.rewards[0]) - log.reward).abs() < 1e-3 * log.reward.abs().max(1.0));
                (obs_a, obs_b) = (sa.observations, sb.observations);
            }
        }
    }
    let plain = KnapsackConfig::new(Variant::Online);
    let featured = KnapsackConfig { planning_features: true, ..plain.clone() };
    assert!(KnapsackConfig { planning_features: true, ..KnapsackConfig::new(Variant::Binary) }.validate().is_err());
    let (mut a, mut b) = (KnapsackVecEnv::new(plain.clone(), 1), KnapsackVecEnv::new(featured.clone(), 1));
    let (mut obs_a, mut obs_b) = (a.reset(9), b.reset(9));
    for t in 0..plain.step_limit {
        assert_eq!(&obs_b[..8], &obs_a[..], "Knapsack-v3 step {t}");
        assert_eq!(
            obs_b[8],
            (plain.step_limit - t) as f32 / plain.step_limit as f32,
            "Knapsack-v3 step {t}: items left"
        );
        // Reject everything: the episode runs to its limit.
        let (sa, sb) = (a.step(&[0.0]), b.step(&[0.0]));
        assert_eq!((sa.rewards, sa.truncated), (sb.rewards, sb.truncated.clone()));
        assert_eq!(sb.truncated[0], t + 1 == plain.step_limit);
        (obs_a, obs_b) = (sa.observations, sb.observations);
    }
    let plain = PortfolioConfig::default();
    let featured = PortfolioConfig { planning_features: true, ..plain.clone() };
    let (assets, periods, base) = (plain.assets(), plain.periods(), plain.observation_dim());
    let (mut a, mut b) = (PortfolioVecEnv::new(plain.clone(), 1), PortfolioVecEnv::new(featured.clone(), 1));
    let (mut obs_a, mut obs_b) = (a.reset(5), b.reset(5));
    for t in 0..periods - 1 {
        assert_eq!(&obs_b[..base], &obs_a[..], "PortfolioOpt period {t}");
        let features = &obs_b[base..];
        assert!((features[0] - (periods - t) as f32 / periods as f32).abs() < 1e-6);
        for i in 0..assets {
            let means = &plain.price_means[i];
            let best = means[t + 1..].iter().copied().fold(f64::MIN, f64::max);
            let expected = [means[t + 1], best, means[periods - 1]].map(|x| x as f32);
            assert_eq!(&features[1 + 3 * i..4 + 3 * i], &expected, "PortfolioOpt period {t} asset {i}");
        }
        let action: Vec<f32> = (0..assets).map(|_| rng.gen_range(-50.0..50.0)).collect();
        let (sa, sb) = (a.step(&action), b.step(&action));
        assert_eq!(sa.rewards, sb.rewards);
        (obs_a, obs_b) = (sa.observations, sb.observations);
    }
}
