//! One agent-side process (the bench agent, or a conductor in front of it) driven over its
//! stdin/stdout as an editor would, with a watchdog so that a stuck chain cannot hang a run.
//! Must not know what is being measured: it sends requests and returns their answers.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use acp_wire::{Envelope, Outcome, OutgoingRequests};

use crate::messages::UPDATE_PREFIX;

/// How long one request (or a shutdown) may take before the process is killed: a hang, not
/// a slow step. The first `initialize` of a chain with a JavaScript or Python WASM proxy
/// includes compiling it (7 s on an idle 2-core machine, over 30 s on a busy one).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(120);

/// A program and its arguments.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Where the process's stderr goes (kept for error messages).
    pub stderr_log: PathBuf,
}

/// Anything that stops a benchmark step, as a message for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchError(pub String);

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

impl From<io::Error> for BenchError {
    fn from(e: io::Error) -> Self {
        BenchError(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, BenchError>;

/// What came back for one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    /// `session/update` notifications received before the response.
    pub updates: u64,
    /// The `result` as JSON text, when it was asked for.
    pub result: Option<String>,
}

pub struct Peer {
    child: Child,
    /// `None` once closed.
    input: Option<BufWriter<ChildStdin>>,
    output: BufReader<ChildStdout>,
    line: Vec<u8>,
    /// The request waiting for its response (one at a time), by the id it was sent with.
    waiting: OutgoingRequests<()>,
    stderr_log: PathBuf,
    watchdog: Watchdog,
}

impl Peer {
    /// Starts the process with piped stdin/stdout and stderr to its log file.
    pub fn spawn(launch: &Launch) -> Result<Peer> {
        let watchdog = Watchdog::start();
        let stderr = File::create(&launch.stderr_log)?;
        let mut child = Command::new(&launch.program)
            .args(&launch.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| BenchError(format!("cannot start {}: {e}", launch.program.display())))?;
        watchdog.watch(child.id());
        let input = BufWriter::with_capacity(256 * 1024, child.stdin.take().expect("piped stdin"));
        let output =
            BufReader::with_capacity(256 * 1024, child.stdout.take().expect("piped stdout"));
        Ok(Peer {
            child,
            input: Some(input),
            output,
            line: Vec::new(),
            waiting: OutgoingRequests::new(),
            stderr_log: launch.stderr_log.clone(),
            watchdog,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a request and waits for its response, counting `session/update`s on the way.
    pub fn call(&mut self, method: &str, params: &[u8]) -> Result<Reply> {
        self.exchange(method, params, false)
    }

    /// Like [`call`](Self::call), also returning the result's JSON text.
    pub fn call_for_result(&mut self, method: &str, params: &[u8]) -> Result<Reply> {
        self.exchange(method, params, true)
    }

    fn exchange(&mut self, method: &str, params: &[u8], want_result: bool) -> Result<Reply> {
        self.watchdog.arm(STEP_TIMEOUT);
        let id = self.waiting.register(());
        let id_text = id.to_string();
        let sent = match self.input.as_mut() {
            Some(input) => write_request(input, &id_text, method, params),
            None => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "input already closed",
            )),
        };
        let reply = match sent {
            Ok(()) => self.read_reply(&id_text, want_result),
            Err(e) => Err(BenchError(format!("writing `{method}`: {e}"))),
        };
        // Answered or failed: either way nothing more is waited for under this id.
        self.waiting.complete(id);
        self.watchdog.disarm();
        reply.map_err(|e| self.explain(e))
    }

    fn read_reply(&mut self, id: &str, want_result: bool) -> Result<Reply> {
        // The response the bench agent writes (and acp-conductor relays) begins exactly so.
        let response_prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":");
        let mut reply = Reply::default();
        loop {
            self.line.clear();
            if self.output.read_until(b'\n', &mut self.line)? == 0 {
                return Err(BenchError("it closed its output".to_owned()));
            }
            if self.line.starts_with(UPDATE_PREFIX) {
                reply.updates += 1;
                continue;
            }
            if !want_result && self.line.starts_with(response_prefix.as_bytes()) {
                return Ok(reply);
            }
            let frame = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            match acp_wire::parse(frame) {
                Ok(Envelope::Response { id: got, outcome }) if got.get() == id => {
                    return match outcome {
                        Outcome::Result(result) => {
                            reply.result = want_result.then(|| result.get().to_owned());
                            Ok(reply)
                        }
                        Outcome::Error(error) => {
                            Err(BenchError(format!("error response: {}", error.get())))
                        }
                    };
                }
                Ok(Envelope::Notification {
                    method: "session/update",
                    ..
                }) => reply.updates += 1,
                Ok(Envelope::Notification { .. }) => {}
                Ok(Envelope::Request { method, .. }) => {
                    return Err(BenchError(format!("unexpected request `{method}`")));
                }
                Ok(Envelope::Response { id: got, .. }) => {
                    return Err(BenchError(format!("response to unknown id {}", got.get())));
                }
                Err(invalid) => return Err(BenchError(format!("unreadable output: {invalid}"))),
            }
        }
    }

    /// Closes stdin and waits for the process to exit.
    pub fn close(mut self) -> Result<ExitStatus> {
        self.watchdog.arm(STEP_TIMEOUT);
        if let Some(input) = self.input.take() {
            // Dropping the pipe is what tells the process its input ended.
            drop(input.into_inner().map_err(|e| e.into_error())?);
        }
        let status = self.child.wait();
        self.watchdog.disarm();
        let status = status?;
        if self.watchdog.fired() {
            return Err(self.explain(BenchError(
                "it did not exit after its input closed".to_owned(),
            )));
        }
        Ok(status)
    }

    /// Adds what the process said on stderr, and whether the watchdog killed it.
    fn explain(&self, error: BenchError) -> BenchError {
        let mut message = error.0;
        if self.watchdog.fired() {
            message = format!("timed out after {STEP_TIMEOUT:?} ({message})");
        }
        let tail = stderr_tail(&self.stderr_log, 800);
        if !tail.is_empty() {
            message.push_str("; stderr: ");
            message.push_str(&tail);
        }
        BenchError(message)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.watchdog.stop();
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn write_request(
    to: &mut BufWriter<ChildStdin>,
    id: &str,
    method: &str,
    params: &[u8],
) -> io::Result<()> {
    to.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":")?;
    to.write_all(id.as_bytes())?;
    to.write_all(b",\"method\":\"")?;
    to.write_all(method.as_bytes())?;
    to.write_all(b"\",\"params\":")?;
    to.write_all(params)?;
    to.write_all(b"}\n")?;
    to.flush()
}

/// The last `max` bytes of a log file, on one line.
fn stderr_tail(path: &PathBuf, max: u64) -> String {
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Kills the watched process when an armed deadline passes.
struct Watchdog {
    state: Arc<WatchState>,
    origin: Instant,
}

struct WatchState {
    pid: AtomicU32,
    /// Nanoseconds since `origin` after which to kill; 0 when disarmed.
    deadline: AtomicU64,
    stopped: AtomicBool,
    fired: AtomicBool,
}

impl Watchdog {
    fn start() -> Watchdog {
        let origin = Instant::now();
        let state = Arc::new(WatchState {
            pid: AtomicU32::new(0),
            deadline: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            fired: AtomicBool::new(false),
        });
        let watched = Arc::clone(&state);
        thread::spawn(move || {
            while !watched.stopped.load(Ordering::Acquire) {
                thread::sleep(Duration::from_millis(50));
                let deadline = watched.deadline.load(Ordering::Acquire);
                let pid = watched.pid.load(Ordering::Acquire);
                if deadline != 0 && pid != 0 && origin.elapsed().as_nanos() as u64 > deadline {
                    watched.fired.store(true, Ordering::Release);
                    // SAFETY: kill(2) has no memory-safety preconditions. The pid is our own
                    // child's; it is reaped only by `close` (deadline armed, so a process that
                    // exits exactly as the deadline passes is the one narrow window) or by
                    // `drop` (after the watchdog is stopped).
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    return;
                }
            }
        });
        Watchdog { state, origin }
    }

    fn watch(&self, pid: u32) {
        self.state.pid.store(pid, Ordering::Release);
    }

    fn arm(&self, timeout: Duration) {
        let deadline = (self.origin.elapsed() + timeout).as_nanos() as u64;
        self.state
            .deadline
            .store(deadline.max(1), Ordering::Release);
    }

    fn disarm(&self) {
        self.state.deadline.store(0, Ordering::Release);
    }

    fn fired(&self) -> bool {
        self.state.fired.load(Ordering::Acquire)
    }

    fn stop(&self) {
        self.state.stopped.store(true, Ordering::Release);
    }
}
