//! WASM components: a proxy compiled to a WASI command runs inside the conductor, in a
//! sandbox, with the same JSON-RPC stdio as a child process. Knows wasmtime, not messages.
//!
//! Each instance is a task of its own on the thread that runs the router and the links, so a
//! guest that computes holds that thread until it yields at the next epoch tick; its stdin and
//! stdout are in-process pipes, linked to the router like a child's pipes.
//! `docs/sandbox.md` describes what a guest can and cannot do.

mod cache;
mod download;
mod engine;
mod error;
mod file_bytes;
mod http;
mod instance;
mod limits;
pub mod needs;
mod network;
mod sandbox;
mod sockets;
mod streams;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::stderr_tail::StderrTail;
use super::{StartError, Started, StopSignal, report_exit, trace_started};
use crate::spec::WasmSpec;
use acp_link::Links;
use acp_link::event::Event;
use cache::CompileCache;
pub use engine::EngineError;
pub use error::{CacheError, CompileError, WasmError};
use limits::ComputeClock;
use sandbox::GuestIo;
use streams::GuestStderr;

/// Bytes queued in each direction between the link and the guest. The link's outbox
/// queues the rest, with its own limit and backpressure.
const PIPE_BYTES: usize = 256 * 1024;

/// What every WASM proxy of one run shares: where compiled code is cached.
#[derive(Debug, Clone)]
pub struct WasmHost {
    cache: CompileCache,
}

impl WasmHost {
    /// `cache_dir` is `[conductor] cache_dir` or its default; `None` compiles every time.
    pub fn new(cache_dir: Option<PathBuf>) -> Self {
        Self {
            cache: CompileCache::new(cache_dir),
        }
    }
}

/// Starts the WASM proxy `spec` with its stdin and stdout as a link; its end is reported on
/// `events`. Loading (reading, compiling or fetching from the cache, instantiating) happens
/// in the instance's task: a proxy that cannot be loaded reports it as how it ended, like a
/// child that exits at once.
pub(crate) fn spawn(
    spec: &WasmSpec,
    host: &WasmHost,
    links: &Links,
    events: &mpsc::Sender<Event>,
) -> Result<Started, StartError> {
    let launched_at = tokio::time::Instant::now();
    let engine = engine::shared()?;
    let clock = Arc::new(ComputeClock::new());
    let (host_stdin, guest_stdin) = streams::stdin(PIPE_BYTES, clock.clone());
    let (guest_stdout, host_stdout) =
        streams::stdout(PIPE_BYTES, spec.sandbox.memory, clock.clone());
    let tail = StderrTail::default();
    let io = GuestIo {
        stdin: guest_stdin,
        stdout: guest_stdout,
        stderr: GuestStderr::new(&spec.name, tail.clone()),
    };

    // Measured: a guest sharing its task with the loops of its link costs more per message
    // (each wake resumes the guest) than the hand-off between tasks saves.
    let (link, done) = links.streams(host_stdout, host_stdin);
    let id = link.id;
    let source = match &spec.download {
        Some(download) => download.url.clone(),
        None => spec.module.display().to_string(),
    };
    trace_started(links, &spec.name, format!("WASM {source}"));
    let trace = links.trace().cloned();
    let (stopped_tx, stopped) = watch::channel(false);
    let events = events.clone();
    let name = spec.name.clone();
    let spec = spec.clone();
    let cache = host.cache.clone();
    let guest = async move {
        let (stdin, stdout, stderr) = (io.stdin.clone(), io.stdout.clone(), io.stderr.clone());
        let reason = instance::run(&spec, engine, cache, io, clock).await;
        // Whatever the guest left in its stdout is still read; what was on its way in is not.
        stdout.close();
        stdin.close();
        stderr.finish();
        // Its last messages reach the router before the news that it is gone.
        done.reader_finished().await;
        report_exit(
            &events,
            trace.as_ref(),
            id,
            &name,
            reason,
            None,
            tail.lines(),
        )
        .await;
    };
    let task = tokio::spawn(async move {
        let _stopped = StopSignal(stopped_tx);
        guest.await;
    });
    Ok(Started::of_task(link, stopped, &task, launched_at))
}
