//! acp-trace: the per-hop trace (`run --trace FILE`, `trace = "..."`): one JSON record per
//! message per link, written by a thread of its own so that routing never waits on the file;
//! and redaction (the viewer that draws a trace file is `acp-trace-view`). Knows links only by
//! the core's ids, and nothing of how a run is configured or started.
//!
//! Who records what (docs/architecture.md, "The trace"):
//!
//! - frames out: every link's write loop, as it writes ([`TraceSink::frame_out`]), for every
//!   kind of link alike;
//! - frames in: the routing core, as it takes each frame from a link (its trace points,
//!   handed to [`TraceSink::point`] by the driver), because
//!   the record of a frame in says where it went (`mapsTo`, `cancels`), which only routing
//!   decides; it is sent before anything routing it queues, so it precedes its effects;
//! - component events: the components (started, exited) and the router (failed, bypassed,
//!   restarted).
//!
//! Producers only take a timestamp, clone the frame's `Bytes` and queue an [`Item`]; the
//! trace thread ([`thread`]) classifies, pairs, redacts, formats and writes. When it falls
//! behind by more than [`BUDGET`] bytes, messages are dropped and counted, and a `dropped`
//! record says how many. With tracing off, nothing of this exists: every producer holds an
//! `Option` that is `None`.

pub mod classify;
mod header;
mod item;
mod record;
pub mod redact;
mod sink;
mod thread;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

pub use header::Component;
pub use item::{ComponentEvent, Item};
pub use redact::{PatternError, REDACTED, Redactor};
pub use sink::{TaggedItems, TaggedSinks, TraceSink, tagged_channel};

/// What the configuration asks of the trace: `trace`, `trace_payloads`, `redact`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSettings {
    /// The trace file (absolute); `None` when nothing is traced. `run --trace` sets it too.
    pub file: Option<PathBuf>,
    /// Whether records carry the whole message (`trace_payloads`, default true).
    pub payloads: bool,
    /// Regular expressions (each checked to compile) whose matches in the trace's strings
    /// are replaced by `"[redacted]"`, besides the given secrets.
    pub redact: Vec<String>,
}

impl Default for TraceSettings {
    fn default() -> Self {
        Self {
            file: None,
            payloads: true,
            redact: Vec::new(),
        }
    }
}

/// How many bytes of messages may wait for the trace thread before new ones are dropped.
pub const BUDGET: usize = 16 << 20;
/// How long the end of a run waits for the trace thread to write what is queued.
const FINISH_WAIT: Duration = Duration::from_secs(5);

/// A trace being written: the handle producers clone, and the thread writing the file.
#[derive(Debug)]
pub struct Trace {
    sink: TraceSink,
    thread: std::thread::Thread,
    done: mpsc::Receiver<()>,
}

impl Trace {
    /// Creates (or replaces) `file`, readable by its owner only, writes the header and
    /// starts the trace thread.
    pub fn start(
        file: &Path,
        settings: &TraceSettings,
        secrets: &[String],
        components: &[Component],
    ) -> Result<Trace, TraceError> {
        let redactor =
            Redactor::new(secrets, &settings.redact).map_err(|source| TraceError::Redaction {
                file: file.to_path_buf(),
                source,
            })?;
        let unwritable = |source| TraceError::Unwritable {
            file: file.to_path_buf(),
            source,
        };
        let out = create_private(file).map_err(unwritable)?;
        let (sink, items) = TraceSink::channel(BUDGET);
        let header = header::header(SystemTime::now(), components, settings.payloads);
        let state =
            thread::TraceThread::new(out, sink.shared().clone(), redactor, settings.payloads);
        let (done_tx, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("trace".to_owned())
            .spawn(move || state.run(header, items, done_tx))
            .map_err(unwritable)?;
        Ok(Trace {
            sink,
            thread: handle.thread().clone(),
            done,
        })
    }

    pub fn sink(&self) -> &TraceSink {
        &self.sink
    }

    /// Writes the `end` record after everything queued, and waits (a bounded time) for the
    /// file to be written.
    pub fn finish(self, reason: &str) {
        self.sink.end(reason.to_owned());
        self.thread.unpark();
        if self.done.recv_timeout(FINISH_WAIT).is_err() {
            tracing::warn!("the trace thread did not finish writing in time");
        }
    }
}

/// Why a trace could not be started; both name the file.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot write the trace to {}: {source}", file.display())]
    Unwritable { file: PathBuf, source: io::Error },
    #[error("cannot write the trace to {}: {source}", file.display())]
    Redaction { file: PathBuf, source: PatternError },
}

/// The trace file is readable by its owner only (mode 0600, also when it existed): it holds
/// what the editor and the agent said. Other kinds of file (a FIFO) are left as they are.
fn create_private(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    if file.metadata()?.is_file() {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}
