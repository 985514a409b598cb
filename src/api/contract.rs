//! What the server validates, declared in the OpenAPI document: the names fixed at build time
//! (problems, their baselines, algorithms, envs, hyperparameters and their ranges) and the
//! bounds every request must meet, so that a generated client and a fuzzer see the contract the
//! handlers enforce. Limits a server flag sets are maxima too: the checked-in document declares
//! the defaults, `GET /openapi.json` the serving process's values (`FlagLimits`).

use crate::drl;
use crate::jobs::population::PopulationLimits;
use crate::jobs::training;
use crate::problems::{self, MAX_SEED};
use serde_json::{json, Map, Value};

/// The limits server flags set, declared as maxima: the checked-in document has the defaults,
/// `GET /openapi.json` the serving process's own.
#[derive(Debug, Clone)]
pub struct FlagLimits {
    /// `--max-time-limit-s`.
    pub max_time_limit_s: f64,
    /// `--max-chains`.
    pub max_chains: usize,
    /// `--max-training-steps`.
    pub max_training_steps: usize,
}

impl Default for FlagLimits {
    fn default() -> Self {
        let (limits, training) = (problems::Limits::default(), training::TrainingLimits::default());
        FlagLimits {
            max_time_limit_s: limits.max_time_limit_s,
            max_chains: limits.max_chains,
            max_training_steps: training.max_total_steps,
        }
    }
}

/// Adds the catalog's enums and the validated bounds to `doc`, the document utoipa generates.
pub fn declare(doc: &mut Value, flags: &FlagLimits) {
    let schemas = &mut doc["components"]["schemas"];
    for p in problems::registry() {
        schemas[instance_name(p.name())] = titled(p.instance_schema(), &format!("{} instance", p.name()));
    }
    for a in drl::algorithms::all() {
        schemas[hyperparameters_name(a.name)] = own_hyperparameters(a);
    }
    let options: Vec<(&str, Value)> = option_constraints(flags).into_iter().chain(option_examples()).collect();
    for (field, extra) in &options {
        merge(&mut schemas["SolveOptions"]["properties"][field], extra);
    }
    let instance = instance_schema();
    let problem_names = json!({"type": "string", "enum": problem_names()});
    let description = schemas["SolveRequest"]["properties"]["instance"]["description"].clone();
    schemas["SolveRequest"]["properties"]["instance"] = json!({"anyOf": instance["anyOf"], "description": description});
    schemas["SolveRequest"]["example"] = json!({"instance": example_graph()});
    schemas["SolveJobRequest"]["example"] =
        json!({"problem": "maxcut", "instance": example_graph(), "options": {"time_limit_s": 0.1}});
    schemas["SolveJobRequest"]["properties"]["instance"] = json!({"anyOf": [instance, {"type": "null"}],
        "description": "The instance in the problem's JSON format; give this or `instance_text`."});
    merge(&mut schemas["SolveJobRequest"]["properties"]["problem"], &problem_names);
    // Exactly one of `instance` (not null) and `instance_text`.
    schemas["SolveJobRequest"]["oneOf"] = json!([
        {"required": ["instance"], "properties": {"instance": {"not": {"type": "null"}}, "instance_text": {"type": "null"}}},
        {"required": ["instance_text"], "properties": {"instance_text": {"type": "string"}, "instance": {"type": "null"}}}
    ]);

    let algorithms =
        json!({"type": "string", "enum": drl::algorithms::all().iter().map(|a| a.name).collect::<Vec<_>>()});
    // Every env is built once here to read its spaces; the rules below share the list.
    let envs = training::envs();
    let env = env_schema(&envs);
    for request in ["TrainingRequest", "PopulationRequest"] {
        let properties = &mut schemas[request]["properties"];
        merge(&mut properties["algorithm"], &algorithms);
        merge(&mut properties["env"], &env);
        merge(&mut properties["seed"], &json!({"maximum": MAX_SEED}));
        // The algorithm's own (`hyperparameters.<algorithm>`) by the `if`/`then` rules below.
        merge(&mut properties["hyperparameters"], &json!({"default": null}));
        schemas[request]["allOf"] = Value::Array(algorithm_rules(&envs, request == "PopulationRequest"));
    }
    schemas["TrainingRequest"]["example"] = json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "total_steps": 1000,
        "seed": 0, "eval_every": 500, "eval_episodes": 2});
    schemas["PopulationRequest"]["example"] = json!({"algorithm": "ppo_discrete", "env": "CartPole-v1", "scheme": "pbt",
        "size": 2, "total_steps": 2000, "interval_steps": 500, "eval_episodes": 2, "seed": 0,
        "explore": {"learning_rate": {"min": 0.0001, "max": 0.001, "log": true}}});
    schemas["PopulationModelRequest"]["example"] = json!({"name": "cartpole-leader", "method": "leader"});
    let training = &mut schemas["TrainingRequest"]["properties"];
    for field in ["env_config", "target_return"] {
        merge(&mut training[field], &json!({"default": null}));
    }
    merge(&mut training["total_steps"], &json!({"minimum": 1, "maximum": flags.max_training_steps}));
    merge(&mut training["eval_every"], &json!({"minimum": 1}));
    append(&mut training["total_steps"], "At most the server's `--max-training-steps`.");
    let max_eval_episodes = training::TrainingLimits::default().max_eval_episodes;
    merge(&mut training["eval_episodes"], &json!({"minimum": 1, "maximum": max_eval_episodes, "default": 10}));
    let population = &mut schemas["PopulationRequest"]["properties"];
    merge(&mut population["size"], &json!({"minimum": 2, "maximum": PopulationLimits::default().max_size}));
    merge(&mut population["interval_steps"], &json!({"minimum": 1}));
    merge(&mut population["total_steps"], &json!({"minimum": 1, "maximum": flags.max_training_steps}));
    append(&mut population["total_steps"], "At most the server's `--max-training-steps`.");
    merge(&mut population["eval_episodes"], &json!({"minimum": 1, "maximum": max_eval_episodes, "default": 10}));
    merge(&mut population["quantile"], &json!({"exclusiveMinimum": 0, "maximum": 0.5, "default": 0.25}));
    merge(&mut population["resample_probability"], &json!({"minimum": 0, "maximum": 1, "default": 0.25}));
    let mut names: Vec<&str> =
        drl::algorithms::all().iter().flat_map(|a| (a.ranges)().into_iter().map(|(name, _)| name)).collect();
    names.sort_unstable();
    names.dedup();
    merge(
        &mut population["explore"],
        &json!({"type": "object", "minProperties": 1, "propertyNames": {"enum": names},
            "additionalProperties": {"$ref": "#/components/schemas/ExploreRange"}}),
    );

    if let Some(parameters) = doc["paths"]["/v1/problems/{name}/solve"]["post"]["parameters"].as_array_mut() {
        for parameter in parameters {
            let name = parameter["name"].as_str().unwrap_or_default().to_string();
            if name == "name" {
                merge(&mut parameter["schema"], &problem_names);
                merge(&mut parameter["schema"], &json!({"example": "maxcut"}));
            }
            for (field, extra) in &options {
                if *field == name {
                    merge(&mut parameter["schema"], extra);
                }
            }
        }
    }
}

/// Bounds and names of the solve options (`SolveOptions::to_search_params` checks them).
fn option_constraints(flags: &FlagLimits) -> Vec<(&'static str, Value)> {
    let mut methods: Vec<&str> = vec!["search"];
    for problem in problems::registry() {
        for baseline in problem.baselines() {
            if !methods.contains(baseline) {
                methods.push(baseline);
            }
        }
    }
    vec![
        ("time_limit_s", json!({"exclusiveMinimum": 0, "maximum": flags.max_time_limit_s})),
        ("seed", json!({"maximum": MAX_SEED})),
        ("chains", json!({"minimum": 1, "maximum": flags.max_chains})),
        ("max_rounds", json!({"minimum": 1})),
        ("device", json!({"pattern": "^(auto|cpu|cuda(:[0-9]+)?)$"})),
        ("backend", json!({"enum": ["auto", "native", "tensor", "bifurcation", "tempering"]})),
        ("method", json!({"enum": methods})),
    ]
}

/// The options' defaults and, where the default depends on the instance or the server, a
/// working example (for Max-Cut: `example_graph` with the shipped Ising policy).
fn option_examples() -> Vec<(&'static str, Value)> {
    vec![
        ("time_limit_s", json!({"example": 0.1})),
        ("seed", json!({"default": 0})),
        ("chains", json!({"example": 4})),
        ("target", json!({"example": 4})),
        ("device", json!({"default": "auto"})),
        ("max_rounds", json!({"example": 2})),
        ("backend", json!({"default": "auto"})),
        ("method", json!({"default": "search"})),
        ("model", json!({"example": "ising-mp-l32-h16"})),
    ]
}

/// A four-node ring, Max-Cut's JSON format.
fn example_graph() -> Value {
    json!({"num_nodes": 4, "edges": [[0, 1], [1, 2], [2, 3], [3, 0]]})
}

fn problem_names() -> Vec<&'static str> {
    problems::registry().iter().map(|p| p.name()).collect()
}

/// Any problem's JSON instance format; the problem the request names decides which applies.
fn instance_schema() -> Value {
    let formats: Vec<Value> = problems::registry().iter().map(|p| reference(&instance_name(p.name()))).collect();
    json!({"anyOf": formats})
}

/// What each algorithm takes (JSON Schema `if`/`then`, which generated clients' models ignore):
/// the envs of its action space and agent count, its own hyperparameters (for a population,
/// also the ones it explores); `env_config` only for envs that take parameters.
fn algorithm_rules(envs: &[training::EnvInfo], population: bool) -> Vec<Value> {
    let mut rules: Vec<Value> = drl::algorithms::all()
        .iter()
        .map(|a| {
            let ids: Vec<&str> = envs
                .iter()
                .filter(|e| e.multi_agent == a.multi_agent)
                .filter(|e| a.action_spaces.contains(&e.action_space["kind"].as_str().unwrap_or_default()))
                .map(|e| e.id.as_str())
                .collect();
            let env = if a.multi_agent {
                json!({"enum": ids})
            } else {
                json!({"anyOf": [{"enum": ids}, {"type": "string", "pattern": GYMNASIUM_PATTERN}]})
            };
            let names: Vec<&str> = (a.ranges)().into_iter().map(|(name, _)| name).collect();
            // Inline: schemathesis 4.32 cannot generate from a `$ref` inside `then`.
            let own = own_hyperparameters(a);
            let mut then = json!({"properties": {"env": env, "hyperparameters": {"anyOf": [own, {"type": "null"}]}}});
            if population {
                then["properties"]["explore"] = json!({"propertyNames": {"enum": names}});
            }
            json!({"if": {"properties": {"algorithm": {"const": a.name}}, "required": ["algorithm"]}, "then": then})
        })
        .collect();
    if !population {
        // The envs that take no parameters: the catalog configures none of them.
        let catalog = crate::problems::envs(Default::default());
        let fixed: Vec<&str> = envs
            .iter()
            .filter(|e| e.multi_agent || catalog.configure(&e.id, 1, &json!({})).is_none())
            .map(|e| e.id.as_str())
            .collect();
        rules.push(json!({"if": {"properties": {"env": {"enum": fixed}}, "required": ["env"]},
            "then": {"properties": {"env_config": {"type": "null"}}}}));
    }
    rules
}

/// Gymnasium's env ids (`[namespace/]name[-vN]`) after the bridge's prefix.
const GYMNASIUM_PATTERN: &str = r"^gymnasium:([A-Za-z0-9_:-]+/)?[A-Za-z0-9_:.-]+(-v[0-9]+)?$";

/// The component holding a problem's instance format (`instance.maxcut`).
fn instance_name(problem: &str) -> String {
    format!("instance.{problem}")
}

/// The component holding an algorithm's overrides (`hyperparameters.ppo`).
fn hyperparameters_name(algorithm: &str) -> String {
    format!("hyperparameters.{algorithm}")
}

fn reference(component: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{component}")})
}

/// A schema with `title` set (how generated clients name its model).
fn titled(mut schema: Value, title: &str) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.insert("title".into(), json!(title));
    }
    schema
}

/// A listed env id or `gymnasium:<id>` (any env Gymnasium can make).
fn env_schema(envs: &[training::EnvInfo]) -> Value {
    let ids: Vec<&str> = envs.iter().map(|e| e.id.as_str()).collect();
    json!({"anyOf": [{"type": "string", "enum": ids}, {"type": "string", "pattern": GYMNASIUM_PATTERN}]})
}

/// One algorithm's overrides: its hyperparameters with their ranges and defaults.
fn own_hyperparameters(a: &drl::algorithms::Algorithm) -> Value {
    let defaults = (a.defaults)();
    let mut properties = drl::hyper::ranges_schema(&(a.ranges)());
    for (name, schema) in properties.as_object_mut().into_iter().flatten() {
        let default = &defaults[name.as_str()];
        // Counts and sizes (an integer default) take integers only.
        if default.is_u64() && schema["type"] == "number" {
            schema["type"] = json!("integer");
        }
        schema["default"] = default.clone();
    }
    json!({"title": format!("{} hyperparameters", a.name), "type": "object", "additionalProperties": false,
        "properties": properties})
}

/// Adds `extra`'s keys to the schema object `into`.
fn merge(into: &mut Value, extra: &Value) {
    if !into.is_object() {
        *into = Value::Object(Map::new());
    }
    if let (Some(into), Some(extra)) = (into.as_object_mut(), extra.as_object()) {
        for (key, value) in extra {
            into.insert(key.clone(), value.clone());
        }
    }
}

/// Appends a sentence to the schema's description.
fn append(into: &mut Value, sentence: &str) {
    let description = into["description"].as_str().unwrap_or_default();
    let joined = if description.is_empty() { sentence.to_string() } else { format!("{description} {sentence}") };
    into["description"] = json!(joined);
}
