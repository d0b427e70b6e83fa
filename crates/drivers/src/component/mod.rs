//! The kinds of component a chain runs (a child process, a WASM instance, a remote component
//! reached at a URL) and how each is started: every kind ends up as a link plus what it
//! takes to stop it. Knows no messages.
//!
//! Only the supervisor calls these; it decides when a component starts, stops or starts again.

pub mod native;
pub mod remote;
pub mod shared;
pub mod stderr_relay;
pub mod stderr_tail;
#[cfg(feature = "wasm")]
pub mod wasm;

use std::path::PathBuf;

use tokio::sync::{mpsc, watch};

use acp_link::event::{Event, ExitStatus};
use acp_link::{Link, LinkId, Links};
use acp_trace::{ComponentEvent, TraceSink};

/// Why a component could not be started at all (as opposed to starting and then ending):
/// the chain hears it as the reason the component ended.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The child process could not be spawned.
    #[error("could not start `{}`: {source}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The WebAssembly engine every WASM proxy runs on could not be set up.
    #[cfg(feature = "wasm")]
    #[error(transparent)]
    WasmEngine(#[from] wasm::EngineError),
    /// A `wasm` proxy in a conductor built without WASM support.
    #[cfg(not(feature = "wasm"))]
    #[error("{}", crate::spec::NO_WASM)]
    NoWasm,
    /// A remote component's URL and headers cannot make a request.
    #[error(transparent)]
    Remote(#[from] acp_remote::client::TargetError),
    /// A shared proxy whose hub has stopped: the server is stopping.
    #[error("is not running: the server is stopping")]
    SharedHubStopped,
    /// The chain has an agent position but the configuration names no agent.
    #[error("is not configured: add an [agent] table")]
    NoAgent,
}

/// A component just started: the link the router talks to it through, and its instance.
#[derive(Debug)]
pub struct Started {
    pub link: Link,
    pub instance: Instance,
}

/// What it takes to stop a started component and to learn that it has. Deliberately holds
/// no link handle: the router's is the only one, so the router decides when input closes.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The link of this instance (its exit is reported for it).
    pub link: LinkId,
    /// Becomes true once the component has fully stopped (process reaped, task ended).
    pub stopped: watch::Receiver<bool>,
    /// For native children: the process group to signal.
    pub process_group: Option<i32>,
    /// For WASM instances: the task running the guest, to end one that does not stop; for
    /// remote components, the task whose end drops the connection.
    pub task: Option<tokio::task::AbortHandle>,
    /// When it was launched.
    pub launched_at: tokio::time::Instant,
}

impl Started {
    /// A component whose life is a task of this process (a WASM guest; the task watching a
    /// remote or shared component's link): it has no process group, and stopping it past the
    /// grace time aborts `task`. `stopped` becomes true when the task ends.
    fn of_task(
        link: Link,
        stopped: watch::Receiver<bool>,
        task: &tokio::task::JoinHandle<()>,
        launched_at: tokio::time::Instant,
    ) -> Started {
        Started {
            instance: Instance {
                link: link.id,
                stopped,
                process_group: None,
                task: Some(task.abort_handle()),
                launched_at,
            },
            link,
        }
    }
}

impl Instance {
    pub fn has_stopped(&self) -> bool {
        *self.stopped.borrow()
    }
}

/// Marks an instance stopped when dropped, however the task that owns it ends (returns,
/// panics, or is aborted).
struct StopSignal(watch::Sender<bool>);

impl Drop for StopSignal {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

/// In a traced run, records that component `name` started (`detail`: its pid or its file).
fn trace_started(links: &Links, name: &str, detail: String) {
    if let Some(trace) = links.trace() {
        trace.component(name, ComponentEvent::Started, detail);
    }
}

/// Tells the router the instance behind `link` has ended, and why (and the trace, when the
/// run is traced).
async fn report_exit(
    events: &mpsc::Sender<Event>,
    trace: Option<&TraceSink>,
    link: LinkId,
    component: &str,
    reason: String,
    status: Option<ExitStatus>,
    stderr_tail: Vec<String>,
) {
    tracing::debug!(component = %component, %reason, "stopped");
    if let Some(trace) = trace {
        trace.component(component, ComponentEvent::Exited, reason.clone());
    }
    let exited = Event::Exited {
        link,
        reason,
        status,
        stderr_tail,
    };
    let _ = events.send(exited).await;
}
