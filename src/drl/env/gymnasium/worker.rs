//! One Python worker process of the bridge: framed binary messages over its stdin and stdout
//! (`worker.py` holds the other side), read on a thread of its own so that a hung simulator
//! costs a timeout, never a hung run.

use anyhow::{bail, Context, Result};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SCRIPT: &str = include_str!("worker.py");
/// Lines of the worker's stderr kept for error messages (a crash's traceback).
const STDERR_LINES: usize = 20;
/// The largest frame a worker may send (a corrupt length must not allocate gigabytes).
const MAX_FRAME_BYTES: usize = 1 << 30;

/// Why a worker gave no answer.
#[derive(Debug)]
pub enum Fault {
    /// The process exited or closed its pipe.
    Exited(String),
    /// No answer by the batch's deadline (`--bridge-step-timeout-s` from the batch's start).
    TimedOut,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Exited(detail) => write!(f, "the worker exited ({detail})"),
            Fault::TimedOut => write!(f, "the worker gave no answer before the step deadline"),
        }
    }
}

/// The worker script, written once per content into the temp folder (a `-c` argument would
/// show the whole script in every `ps` line).
fn script_file() -> Result<std::path::PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    SCRIPT.hash(&mut hasher);
    let path = std::env::temp_dir().join(format!("rlsolver-gymnasium-worker-{:016x}.py", hasher.finish()));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(SCRIPT) {
        // Written aside and renamed: a concurrent reader never sees half a script.
        let partial = path.with_extension(format!("{}.partial", std::process::id()));
        std::fs::write(&partial, SCRIPT).context("writing the bridge's worker script")?;
        std::fs::rename(&partial, &path).context("writing the bridge's worker script")?;
    }
    Ok(path)
}

pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    frames: Receiver<Vec<u8>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl Worker {
    /// Starts `python` on the worker script and sends it `init` (the env id, its kwargs and how
    /// many copies to make); the answer is read with `receive`.
    pub fn spawn(python: &Path, init: &serde_json::Value) -> Result<Worker> {
        let mut child = Command::new(python)
            .arg("-u")
            .arg(script_file()?)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start the Python interpreter '{}'", python.display()))?;
        let stdin = child.stdin.take().context("worker stdin")?;
        let mut stdout = child.stdout.take().context("worker stdout")?;
        let stderr = child.stderr.take().context("worker stderr")?;
        let (sender, frames) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut head = [0u8; 4];
            if stdout.read_exact(&mut head).is_err() {
                return;
            }
            let n = u32::from_le_bytes(head) as usize;
            if n > MAX_FRAME_BYTES {
                return;
            }
            let mut body = vec![0u8; n];
            if stdout.read_exact(&mut body).is_err() || sender.send(body).is_err() {
                return;
            }
        });
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr_tail.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                tracing::debug!(target: "rlsolver::gymnasium", "{line}");
                let mut tail = tail.lock().expect("stderr tail");
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
        let mut worker = Worker { child, stdin, frames, stderr_tail };
        worker.send(serde_json::to_string(init)?.as_bytes()).context("sending the env's description")?;
        Ok(worker)
    }

    pub fn send(&mut self, payload: &[u8]) -> std::io::Result<()> {
        let mut frame = Vec::with_capacity(4 + payload.len());
        frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        frame.extend_from_slice(payload);
        self.stdin.write_all(&frame)?;
        self.stdin.flush()
    }

    /// The next frame, or why none came within `timeout`.
    pub fn receive(&mut self, timeout: Duration) -> Result<Vec<u8>, Fault> {
        match self.frames.recv_timeout(timeout) {
            Ok(frame) => Ok(frame),
            Err(RecvTimeoutError::Timeout) => Err(Fault::TimedOut),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                let last = self.last_error_line();
                Err(Fault::Exited(if last.is_empty() { status } else { format!("{status}: {last}") }))
            }
        }
    }

    /// The last line of the worker's stderr (a Python traceback ends with the error).
    pub fn last_error_line(&self) -> String {
        // The drain thread may still be reading the final lines of a process that just died.
        std::thread::sleep(Duration::from_millis(20));
        self.stderr_tail.lock().expect("stderr tail").back().cloned().unwrap_or_default()
    }

    /// Sends the header request's answer back as JSON, or the worker's error.
    pub fn header(&mut self, timeout: Duration) -> Result<serde_json::Value> {
        let frame =
            self.receive(timeout).map_err(|fault| anyhow::anyhow!("the Python worker did not start: {fault}"))?;
        let header: serde_json::Value = serde_json::from_slice(&frame).context("the worker's header")?;
        if header["ok"] != serde_json::Value::Bool(true) {
            bail!("{}", header["error"].as_str().unwrap_or("the worker failed"));
        }
        Ok(header)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.send(b"Q");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
