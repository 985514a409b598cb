//! The listing commands: `openapi`, `algorithms` and `problems`.

use anyhow::Result;

/// The OpenAPI document with the default flag limits.
pub fn openapi() -> Result<()> {
    print!("{}", rlsolver::api::openapi::openapi_json());
    Ok(())
}

pub fn algorithms() -> Result<()> {
    for a in rlsolver::drl::algorithms::all() {
        println!(
            "{}",
            serde_json::json!({
                "name": a.name, "action_space": a.action_spaces.join("|"), "family": a.family,
                "multi_agent": a.multi_agent, "num_envs": a.num_envs, "hyperparameters": (a.defaults)(),
            })
        );
    }
    Ok(())
}

pub fn problems() -> Result<()> {
    use rlsolver::problems;
    for p in problems::registry() {
        println!("{}\t{}\t{}\t{}", p.name(), p.formats().join(","), p.baselines().join(","), p.summary());
    }
    Ok(())
}
