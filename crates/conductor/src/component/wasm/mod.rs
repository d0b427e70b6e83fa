//! WASM components: a proxy compiled to a WASI command runs inside the conductor, in a
//! sandbox, with the same JSON-RPC stdio as a child process. Knows wasmtime, not messages.
//!
//! Each instance is a task of its own on the multi-thread runtime, so a guest that computes
//! holds one worker at a time and yields every epoch tick; its stdin and stdout are
//! in-process pipes read and written by the same transport tasks as a child's pipes.
//! `docs/sandbox.md` describes what a guest can and cannot do.

mod cache;
mod engine;
mod instance;
mod limits;
mod sandbox;
mod streams;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{oneshot, watch};

use super::stderr_tail::StderrTail;
use super::{Lifecycle, Running, Wiring};
use crate::config::WasmSpec;
use crate::event::Event;
use crate::transport::{self, Outbox, ReadGate};
use cache::CompileCache;
use limits::ComputeClock;
use sandbox::GuestIo;
use streams::GuestStderr;

/// Bytes queued in each direction between the transport and the guest. The transport's
/// outbox queues the rest, with its own limit and backpressure.
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

/// Starts the WASM proxy `spec` and wires its stdio into the chain. Loading (reading,
/// compiling or fetching from the cache, instantiating) happens in the instance's task: a
/// proxy that cannot be loaded reports it as how it ended, like a child that exits at once.
pub fn spawn(spec: &WasmSpec, host: &WasmHost, wiring: Wiring) -> Result<Running, String> {
    let engine = engine::shared()?;
    let clock = Arc::new(ComputeClock::new());
    let (host_stdin, guest_stdin) = streams::stdin(PIPE_BYTES, clock.clone());
    let (guest_stdout, host_stdout) = streams::stdout(PIPE_BYTES, clock.clone());
    let tail = StderrTail::default();
    let io = GuestIo {
        stdin: guest_stdin,
        stdout: guest_stdout,
        stderr: GuestStderr::new(&wiring.name, tail.clone()),
    };

    let (outbox, outbox_rx) = Outbox::new(wiring.queue_limit);
    let gate = Arc::new(ReadGate::default());
    let writer = transport::write_async(
        wiring.link,
        host_stdin,
        outbox_rx,
        wiring.events.clone(),
        wiring.write_timeout,
    );
    let (read_all_tx, read_all) = oneshot::channel::<()>();
    let reader = {
        let read = transport::read_async(
            wiring.link,
            host_stdout,
            wiring.events.clone(),
            gate.clone(),
            wiring.max_line,
        );
        async move {
            read.await;
            let _ = read_all_tx.send(());
        }
    };
    let (stopped_tx, stopped) = watch::channel(false);
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
        let _ = read_all.await;
        tracing::debug!(component = %wiring.name, %reason, "stopped");
        let _ = wiring
            .events
            .send(Event::Exited {
                link: wiring.link,
                reason,
                stderr_tail: tail.lines(),
            })
            .await;
    };
    // Three tasks, as for a child process: measured, a guest sharing its task with the
    // writer of its stdin costs more per message (each wake resumes the guest) than the
    // hand-off between tasks saves.
    tokio::spawn(writer);
    tokio::spawn(reader);
    tokio::spawn(async move {
        guest.await;
        let _ = stopped_tx.send(true);
    });
    Ok(Running {
        outbox,
        gate,
        lifecycle: Lifecycle {
            stopped,
            process_group: None,
        },
    })
}
