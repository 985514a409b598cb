//! Progress on the command line: one bar on stderr while `train`, `solve`, `bench` or
//! `train-policy` runs, drawn only when stderr is a terminal. The library reports through its
//! hooks (`training_hooks`, the search's `on_incumbent`), the benchmarks through the free
//! functions below; without a bar they cost one uncontended lock and do nothing, so piped runs
//! never draw one (their stdout stays the JSON alone). The bar is the terminal's, so it is the
//! process's: it lives here, in the binary, and the library holds no such state.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// What a bar counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// Env or optimizer steps out of a known total (`train`, `train-policy`): rate and ETA.
    Steps(u64),
    /// Wall time out of a limit in seconds (`solve`): the bar fills with the clock by itself.
    Seconds(f64),
    /// Rows of a report, their number unknown up front (`bench`).
    Rows,
}

/// Ends the bar (leaving its last line) when dropped.
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(bar) = BAR.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.abandon();
        }
    }
}

/// Whether a bar would be drawn: stderr is a terminal (`RLSOLVER_PROGRESS=never` turns it off).
fn wanted() -> bool {
    std::env::var("RLSOLVER_PROGRESS").as_deref() != Ok("never") && std::io::stderr().is_terminal()
}

/// Starts the process's bar when stderr is a terminal; None (and no bar) otherwise.
pub fn start(measure: Measure, what: &str) -> Option<Guard> {
    if !wanted() {
        return None;
    }
    let (bar, template) = match measure {
        Measure::Steps(total) => (
            ProgressBar::new(total),
            "{prefix} {bar:28.cyan/blue} {human_pos}/{human_len} steps · {rate} · ETA {eta} · {wide_msg}",
        ),
        Measure::Seconds(limit) => (
            ProgressBar::new((limit * 1000.0).round().max(1.0) as u64),
            "{prefix} {bar:28.cyan/blue} {elapsed_precise} of the time limit · {wide_msg}",
        ),
        Measure::Rows => {
            (ProgressBar::no_length(), "{prefix} {spinner} {pos} rows done · {elapsed_precise} · {wide_msg}")
        }
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        // Whole steps per second: indicatif's own {per_sec} prints four decimals.
        .with_key("rate", |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = write!(out, "{:.0} steps/s", state.per_sec());
        });
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(10));
    bar.set_style(style.progress_chars("=> "));
    bar.set_prefix(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    if let Measure::Seconds(_) = measure {
        // The clock moves between incumbents too; the thread ends with the bar (the guard).
        let clock = bar.clone();
        std::thread::spawn(move || {
            while !clock.is_finished() {
                let limit = clock.length().unwrap_or(u64::MAX);
                clock.set_position((clock.elapsed().as_millis() as u64).min(limit));
                std::thread::sleep(Duration::from_millis(100));
            }
        });
    }
    *BAR.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    Some(Guard)
}

/// The bar, if one is drawn (a clone: the lock is held only to copy its handle).
fn bar() -> Option<ProgressBar> {
    BAR.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn with_bar(f: impl FnOnce(&ProgressBar)) -> bool {
    bar().map(|bar| f(&bar)).is_some()
}

/// Steps done of a `Measure::Steps` bar.
pub fn position(done: u64) {
    with_bar(|bar| {
        // A run may end a batch past its budget; the bar's total follows rather than overflow.
        if bar.length().is_some_and(|total| done > total) {
            bar.set_length(done);
        }
        bar.set_position(done)
    });
}

/// The current figure: the latest evaluation, the incumbent, the row being measured.
pub fn figure(text: impl Into<String>) {
    let text = text.into();
    with_bar(|bar| bar.set_message(text));
}

/// A finished row of a report: counted, and printed as `line` does.
pub fn row_done(text: impl Into<String>) {
    with_bar(|bar| bar.inc(1));
    line(text);
}

/// A line of news: printed above the bar with a bar, on stderr as a log line without.
pub fn line(text: impl Into<String>) {
    let text = text.into();
    if !with_bar(|bar| bar.println(&text)) {
        eprintln!("{text}");
    }
}

/// Training hooks that move the bar: env steps, and the latest evaluation as its figure.
pub fn training_hooks() -> rlsolver::hooks::RunHooks {
    rlsolver::hooks::RunHooks {
        on_progress: Some(std::sync::Arc::new(|step| position(step as u64))),
        on_evaluation: Some(std::sync::Arc::new(|evaluation| figure(describe_evaluation(evaluation)))),
        cancel: None,
    }
}

/// "return 195.30 ± 4.10 at step 20000" from an evaluation (single- or multi-agent), or a
/// supervised trainer's figure ("sum rate 12.34").
fn describe_evaluation(evaluation: &serde_json::Value) -> String {
    if let Some(figure) = evaluation.get("figure").and_then(serde_json::Value::as_str) {
        return figure.to_string();
    }
    let number = |key: &str| evaluation.get(key).and_then(serde_json::Value::as_f64);
    match (number("return_mean"), number("return_std")) {
        (Some(mean), Some(std)) => format!("return {mean:.2} ± {std:.2} at step {}", evaluation["step"]),
        (Some(mean), None) => format!("return {mean:.2} at step {}", evaluation["step"]),
        _ => format!("evaluation at step {}", evaluation["step"]),
    }
}

/// Writes through the bar (above it) when there is one, so that log lines do not tear it.
#[derive(Clone, Copy, Default)]
pub struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match bar() {
            Some(bar) => bar.suspend(|| std::io::stderr().write_all(buf)).map(|_| buf.len()),
            None => std::io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_nothing_starts_and_rows_fall_back_to_lines() {
        // `cargo test` captures stderr through a pipe; run from a terminal with --nocapture, skip.
        if std::io::stderr().is_terminal() {
            return;
        }
        assert!(start(Measure::Steps(10), "train").is_none());
        assert!(BAR.lock().unwrap().is_none());
        position(5);
        figure("ignored");
        assert!(!with_bar(|_| ()), "no bar: the updates went nowhere");
    }
}
