//! `rlsolver bench`: a report (markdown) of one benchmark, on stdout and optionally to a file;
//! the targets are the rows of `bench::BENCHES`.

use anyhow::Result;

use crate::bench::{Args, BENCHES};
use crate::progress::{self, Measure};

pub fn run(args: Args) -> Result<()> {
    let _bar = progress::start(Measure::Rows, &format!("bench {}", args.problem));
    let bench = BENCHES.iter().find(|b| b.name == args.problem).expect("clap admits only the BENCHES names");
    let output = args.output.clone();
    let report = (bench.run)(args)?;
    print!("{report}");
    if let Some(path) = output {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, &report)?;
    }
    Ok(())
}
