//! Where log lines go: the server's through a bounded, lossy queue; every other command's
//! through the progress bar.

use anyhow::Result;

fn filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,tower_http=info".into())
}

/// The server's logs: a log reader that stalls costs dropped lines (counted in /metrics), never
/// a stalled request. The guard flushes at exit.
pub fn for_server(format: &str, buffer_lines: usize) -> Result<tracing_appender::non_blocking::WorkerGuard> {
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(buffer_lines)
        .finish(std::io::stderr());
    rlsolver::api::metrics::count_dropped_log_lines(writer.error_counter());
    match format {
        "json" => tracing_subscriber::fmt().json().with_env_filter(filter()).with_writer(writer).init(),
        "text" => tracing_subscriber::fmt().with_env_filter(filter()).with_writer(writer).init(),
        other => anyhow::bail!("--log-format: text or json, not '{other}'"),
    }
    Ok(guard)
}

/// Every other command's logs: through the progress bar, when one is drawn, so that log lines
/// print above it; colours only for a terminal, so a piped stderr gets plain lines.
pub fn for_command_line() {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(crate::progress::LogWriter)
        .init();
}
