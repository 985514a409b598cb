//! The `rlsolver` command line: parse arguments, call the library, print JSON. Each command is a
//! module of `cli`; the benchmarks (`bench`) and the terminal's progress bar (`progress`) belong
//! to the command line, not to the library.

mod bench;
mod cli;
mod progress;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "rlsolver",
    version,
    about = "Near-optimal solutions by learned policies plus parallel minimum-energy search"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve(cli::serve::ServeArgs),
    /// Solve one instance and print the result as JSON.
    Solve(Box<cli::solve::SolveArgs>),
    /// Benchmark a problem on a folder of instances and write a markdown table.
    Bench(bench::Args),
    /// Print the OpenAPI document.
    Openapi,
    /// Write a random instance of a problem with a generator to stdout.
    Generate(cli::generate::GenerateArgs),
    /// List the registered problems.
    Problems,
    /// Train a deep-RL agent on a native environment.
    Train(cli::train::TrainArgs),
    /// Train a problem's policy network and write it to the model registry folder.
    TrainPolicy(cli::train_policy::TrainPolicyArgs),
    /// Evaluate a checkpoint written by `train --out`.
    Evaluate(cli::evaluate::EvaluateArgs),
    /// List the deep-RL algorithms with their action spaces and default hyperparameters.
    Algorithms,
}

/// A user error is one line on stderr and exit status 2: anyhow's `Debug` (what returning the
/// error from `main` prints) would add a stack backtrace whenever RUST_BACKTRACE is set.
fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", format!("{error:#}").replace('\n', " "));
            std::process::ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let _log_guard = match &cli.command {
        Command::Serve(args) => Some(args.logging()?),
        _ => {
            cli::logging::for_command_line();
            None
        }
    };
    match cli.command {
        Command::Serve(args) => cli::serve::run(args),
        Command::Solve(args) => cli::solve::run(*args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Openapi => cli::list::openapi(),
        Command::Generate(args) => cli::generate::run(args),
        Command::Problems => cli::list::problems(),
        Command::Train(args) => cli::train::run(args),
        Command::TrainPolicy(args) => cli::train_policy::run(args),
        Command::Evaluate(args) => cli::evaluate::run(args),
        Command::Algorithms => cli::list::algorithms(),
    }
}
