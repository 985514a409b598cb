//! "Did you mean" for unknown names (algorithms, envs, problems, methods): the closest valid
//! name by edit distance (strsim, the crate clap uses for the same purpose), after folding case
//! and `-` to `_`, since `ppo-discrete` for `ppo_discrete` is the usual slip.

/// The closest of `candidates` to `name`, when it is close enough to be the intended one.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let fold = |s: &str| s.to_lowercase().replace('-', "_");
    let wanted = fold(name);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&wanted, &fold(c)), c))
        .filter(|(distance, c)| *distance <= (c.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// `unknown <kind> '<name>' (did you mean '<closest>'? one of: ...)`.
pub fn unknown<'a>(kind: &str, name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let all: Vec<&str> = candidates.into_iter().collect();
    match closest(name, all.iter().copied()) {
        Some(hint) => format!("unknown {kind} '{name}' (did you mean '{hint}'? one of: {})", all.join(", ")),
        None => format!("unknown {kind} '{name}' (one of: {})", all.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_slips_find_their_name_and_strangers_find_none() {
        let names = ["ppo", "ppo_discrete", "a2c", "a2c_discrete", "dqn"];
        assert_eq!(closest("ppo-discrete", names), Some("ppo_discrete"));
        assert_eq!(closest("PPO", names), Some("ppo"));
        assert_eq!(closest("dnq", names), Some("dqn"));
        assert_eq!(closest("transformer", names), None);
        assert!(unknown("algorithm", "ppo-discrete", names).contains("did you mean 'ppo_discrete'?"));
    }
}
