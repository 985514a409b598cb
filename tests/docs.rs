//! The README and the book (`docs/src`) as a user meets them: every relative link resolves to a
//! file of the repository, every chapter of `SUMMARY.md` exists, no page speaks of how the code
//! was made, and the shell examples run. Each `curl` example (one without shell variables) runs
//! against a live server and must answer 2xx (placeholders such as `$ID` or `<id>` are left out); the cheap `rlsolver` examples (`generate`,
//! `problems`, `openapi`, `algorithms`) run with the release binary. Synopses (with `[`, `|` or
//! placeholders) and the long `train`/`bench` runs are what `make verify`/`make bench-*` run.

mod common;

use common::start_server;
use rlsolver::api::state::ServerConfig;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of the book.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut pages = vec![root().join("README.md")];
    walk(&root().join("docs/src"), &mut pages);
    pages.sort();
    pages
}

/// Targets of `[text](target)` links, without anchors; external ones left out.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or_default().trim().to_string();
        let external = ["http://", "https://", "mailto:"].iter().any(|p| target.starts_with(p));
        if !target.is_empty() && !external && !target.contains(' ') {
            links.push(target);
        }
        rest = &rest[end..];
    }
    links
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_resolves() {
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in relative_links(&text) {
            let target = page.parent().unwrap().join(&link);
            assert!(target.exists(), "{}: link to {link} resolves to nothing", page.display());
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} links checked");
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let chapters = relative_links(&summary);
    assert!(chapters.len() >= 20, "{chapters:?}");
    let listed: Vec<PathBuf> = chapters.iter().map(|c| root().join("docs/src").join(c)).collect();
    for page in pages().into_iter().filter(|p| p.starts_with(root().join("docs/src"))) {
        let name = page.file_name().unwrap();
        assert!(name == "SUMMARY.md" || listed.contains(&page), "{} is not in SUMMARY.md", page.display());
    }
}

#[test]
fn no_page_speaks_of_how_the_code_was_made() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap().to_lowercase();
        for (i, line) in text.lines().enumerate() {
            for word in ["session ", "issue "] {
                let mut rest = line;
                while let Some(at) = rest.find(word) {
                    rest = &rest[at + word.len()..];
                    let numbered = rest.chars().next().is_some_and(|c| c.is_ascii_digit());
                    assert!(!numbered, "{}:{}: {line}", page.display(), i + 1);
                }
            }
        }
    }
}

/// The shell commands of the ```sh blocks: a command continues over a trailing `\` and over an
/// open single quote; comment lines are left out.
fn shell_examples(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for block in text.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap_or_default();
        let mut current = String::new();
        for line in block.lines() {
            if current.is_empty() {
                if line.trim().is_empty() || line.trim_start().starts_with('#') {
                    continue;
                }
                current = line.to_string();
            } else {
                current = format!("{current}\n{line}");
            }
            if current.ends_with('\\') || current.matches('\'').count() % 2 == 1 {
                continue;
            }
            commands.push(std::mem::take(&mut current));
        }
    }
    commands
}

/// Without its trailing `# comment` (outside quotes).
fn without_comment(command: &str) -> String {
    let mut quoted = false;
    let mut out = String::new();
    for (i, c) in command.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '#' if !quoted && command[..i].ends_with(' ') => break,
            _ => {}
        }
        out.push(c);
    }
    out.trim_end().to_string()
}

fn runnable_rlsolver(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let cheap = matches!(words.get(1), Some(&"generate" | &"problems" | &"openapi" | &"algorithms"));
    let synopsis = command.contains('[')
        || command.contains('|')
        || words.iter().any(|w| w.chars().all(|c| c.is_ascii_uppercase()) && w.len() > 1);
    words.first() == Some(&"rlsolver") && cheap && !synopsis
}

/// `command` with each `> relative/path` redirect pointed at `work/path`'s file name.
fn redirect_into(command: &str, work: &std::path::Path) -> String {
    let mut parts = command.split("> ");
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let (target, rest) = part.split_at(part.find(char::is_whitespace).unwrap_or(part.len()));
        let target = if target.starts_with('/') || target.starts_with('&') {
            target.to_string()
        } else {
            let name = std::path::Path::new(target).file_name().map(|n| n.to_string_lossy().into_owned());
            work.join(name.unwrap_or_default()).display().to_string()
        };
        out.push_str("> ");
        out.push_str(&target);
        out.push_str(rest);
    }
    out
}

#[test]
fn a_redirect_to_a_relative_path_goes_to_the_scratch_folder() {
    let work = std::path::Path::new("/tmp/w");
    assert_eq!(redirect_into("rlsolver generate x > circuit.json", work), "rlsolver generate x > /tmp/w/circuit.json");
    assert_eq!(redirect_into("a > problems/p.json # c", work), "a > /tmp/w/p.json # c");
    assert_eq!(redirect_into("a > /dev/null", work), "a > /dev/null");
}

#[test]
fn the_shell_examples_of_the_readme_and_the_book_run() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    // An API-only replica (no job workers): a submitted job is accepted and stays queued, so no
    // training runs on past the test (libtorch threads torn down at exit can crash the process).
    let jobs = rlsolver::jobs::JobsConfig { workers: 0, ..Default::default() };
    let base = start_server(ServerConfig { jobs, ..ServerConfig::default() });
    let host = base.trim_start_matches("http://").to_string();
    let binary = root().join("target/release/rlsolver");
    let work = std::env::temp_dir().join(format!("rlsolver-docs-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let (mut ran_curl, mut ran_cli) = (0, 0);
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for command in shell_examples(&text).iter().map(|c| without_comment(c)) {
            let script = if command.starts_with("curl ") && command.contains("localhost:8080") {
                if command.contains('$') || command.contains('<') {
                    continue;
                }
                if let Some(file) = command.split('@').nth(1).and_then(|f| f.split_whitespace().next()) {
                    if !root().join(file).exists() {
                        assert!(!ci, "CI=true but {file} (shared data) is missing");
                        eprintln!("skipping (missing {file}): {command}");
                        continue;
                    }
                }
                ran_curl += 1;
                command.replacen("curl ", "curl --fail-with-body --max-time 120 ", 1).replace("localhost:8080", &host)
            } else if runnable_rlsolver(&command) {
                if !binary.exists() {
                    assert!(!ci, "CI=true but the release binary is missing");
                    continue;
                }
                ran_cli += 1;
                // Outputs the example redirects to a relative path go to a scratch folder, so a test
                // run leaves the working tree as it found it.
                let command = redirect_into(&command, &work);
                format!("{} {}", binary.display(), &command["rlsolver ".len()..])
            } else {
                continue;
            };
            let output = Command::new("bash").arg("-c").arg(&script).current_dir(root()).output().unwrap();
            assert!(
                output.status.success(),
                "{}: {command}\nstdout: {}\nstderr: {}",
                page.display(),
                String::from_utf8_lossy(&output.stdout).chars().take(2000).collect::<String>(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(ran_curl >= 15 && ran_cli >= 3, "ran {ran_curl} curl and {ran_cli} rlsolver examples");
}
