//! Shared proxies: under `serve`, a `[[proxy]]` with `shared = true` runs as one instance for
//! every connection's chain instead of one per chain. Each chain attaches to it as to a
//! component of its own and gets a message-framed link; the hub (`hub.rs`) owns the instance
//! and keeps the chains apart inside it with the routing core's `shared_proxy::Routes` (its own
//! request ids, qualified session ids, set-up requests one connection at a time).
//!
//! For a chain the attachment fails like a component: when the instance exits, every
//! attached chain hears the reason and applies its own failure policy; `restart` attaches
//! again, which starts the instance again if it is not running. The hub never starts or
//! stops the instance itself: it asks its [`ProxySupervisor`] (the supervisor's
//! `shared_proxies.rs`), so this module knows no launch spec.

mod hub;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

use super::{Instance, StartError, Started, StopSignal, report_exit};
use acp_link::event::Event;
use acp_link::{Links, MessageSink};
use acp_remote::client::Ended;
use acp_router::shared_proxy::Connection;

/// Frames from all chains toward a shared proxy, queued before the chains' writers wait.
const CHAIN_FRAMES: usize = 64;
/// Frames from the proxy toward one chain, queued before the hub waits on that chain.
const PROXY_FRAMES: usize = 64;

/// What a hub asks of the supervisor, which alone starts and stops components.
pub trait ProxySupervisor: 'static {
    /// Starts a new instance of the proxy; its link's events and its end arrive on the
    /// event channel the hub was given. The supervisor's implementation holds the
    /// [`MainThread`](crate::runtime::MainThread) this needs.
    fn start(&mut self) -> Result<Started, StartError>;

    /// Stops `instance`, whose input is closed or which has failed: a moment to exit on its
    /// own, then SIGTERM, then SIGKILL to its process group.
    fn stop(&self, instance: Instance) -> impl Future<Output = ()> + Send + 'static;
}

enum Command {
    Attach {
        connection: Connection,
        to_chain: mpsc::Sender<Bytes>,
        ended: Ended,
    },
    Detach(Connection),
    /// A reload replaced or removed the proxy: stop the instance once no chain is attached
    /// (at once when none is).
    Retire,
    Stop,
}

/// A handle on one shared proxy: chains attach through it. Cheap to clone.
#[derive(Clone)]
pub struct SharedProxy {
    name: String,
    commands: mpsc::UnboundedSender<Command>,
    frames: mpsc::Sender<(Connection, Bytes)>,
    last_connection: Arc<AtomicU64>,
}

impl std::fmt::Debug for SharedProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedProxy")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl SharedProxy {
    /// Attaches one chain: its link to the proxy (frames flow once the hub has taken the
    /// attachment, which it does before any of them), and an instance whose end is reported
    /// on `events` with the reason the hub gave, such as the proxy's exit.
    pub(crate) fn attach(
        &self,
        links: &Links,
        events: &mpsc::Sender<Event>,
    ) -> Result<Started, StartError> {
        let connection = self.last_connection.fetch_add(1, Ordering::Relaxed) + 1;
        let (to_chain, from_proxy) = mpsc::channel(PROXY_FRAMES);
        let ended = Ended::default();
        self.commands
            .send(Command::Attach {
                connection,
                to_chain,
                ended: ended.clone(),
            })
            .map_err(|_| StartError::SharedHubStopped)?;
        let sink = ToProxy {
            connection,
            frames: self.frames.clone(),
            commands: self.commands.clone(),
        };
        let launched_at = tokio::time::Instant::now();
        let (link, done) = links.messages(from_proxy, sink);
        let id = link.id;
        let name = self.name.clone();
        let trace = links.trace().cloned();
        let (stopped_tx, stopped) = watch::channel(false);
        let events = events.clone();
        let monitor = tokio::spawn(async move {
            let _stopped = StopSignal(stopped_tx);
            done.reader_finished().await;
            let reason = ended
                .reason()
                .unwrap_or_else(|| "was detached from this chain (shared proxy)".to_string());
            report_exit(&events, trace.as_ref(), id, &name, reason, None, Vec::new()).await;
        });
        Ok(Started::of_task(link, stopped, &monitor, launched_at))
    }
}

/// A chain's frames to the shared proxy, tagged with its connection; dropping it (the
/// chain's link closing) detaches the chain.
struct ToProxy {
    connection: Connection,
    frames: mpsc::Sender<(Connection, Bytes)>,
    commands: mpsc::UnboundedSender<Command>,
}

impl MessageSink for ToProxy {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        self.frames
            .send((self.connection, message))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the shared proxy is gone"))
    }

    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for ToProxy {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Detach(self.connection));
    }
}

/// The shared proxies of one `serve`, by name.
#[derive(Debug, Default, Clone)]
pub struct SharedProxies {
    by_name: HashMap<String, SharedProxy>,
}

impl SharedProxies {
    /// None: every proxy runs once per chain (`run`, `doctor --probe`).
    pub fn none() -> SharedProxies {
        SharedProxies::default()
    }

    /// Starts the hub of the shared proxy `name`: it has `supervisor` start the proxy's
    /// instance at once (and again when a chain attaches after it exited), hears of the
    /// instance on `events`, and is stopped through `hubs`. Must be called inside a
    /// `LocalSet`: the hub runs on the thread that starts the instance (see `runtime.rs`).
    pub fn add(
        &mut self,
        hubs: &mut SharedHubs,
        name: &str,
        write_timeout: Duration,
        events: mpsc::Receiver<Event>,
        supervisor: impl ProxySupervisor,
    ) {
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let (frames, frames_rx) = mpsc::channel(CHAIN_FRAMES);
        let hub = hub::Hub::new(name.to_string(), supervisor, events, write_timeout);
        hubs.tasks
            .push(tokio::task::spawn_local(hub.run(commands_rx, frames_rx)));
        hubs.running.insert(name.to_string(), commands.clone());
        self.by_name.insert(
            name.to_string(),
            SharedProxy {
                name: name.to_string(),
                commands,
                frames,
                last_connection: Arc::new(AtomicU64::new(0)),
            },
        );
    }

    pub fn get(&self, name: &str) -> Option<&SharedProxy> {
        self.by_name.get(name)
    }

    /// The handle on `name`, carried over to the set a reload makes.
    pub fn keep(&mut self, name: &str, proxy: SharedProxy) {
        self.by_name.insert(name.to_string(), proxy);
    }

    /// The names of the shared proxies, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// The hubs of one `serve`'s shared proxies: the running ones by name, and those a reload
/// retired, which stop once the chains still attached to them have gone.
#[derive(Default)]
pub struct SharedHubs {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    running: HashMap<String, mpsc::UnboundedSender<Command>>,
    /// Retired hubs: only the chains still attached keep them going.
    retired: Vec<mpsc::WeakUnboundedSender<Command>>,
}

impl SharedHubs {
    /// A reload replaced or removed the shared proxy `name`: its hub takes no new chain
    /// (the reload's set of proxies no longer holds it), and stops its instance once the
    /// chains attached to it now have detached (chains opened before the reload, until they
    /// end or are reloaded themselves).
    pub fn retire(&mut self, name: &str) {
        if let Some(commands) = self.running.remove(name) {
            let _ = commands.send(Command::Retire);
            self.retired.push(commands.downgrade());
        }
    }

    /// Stops every hub, retired ones too: each closes its instance's input and waits for it
    /// to stop (after a moment, SIGTERM, then SIGKILL to its process group).
    pub async fn stop(self) {
        let retired = self.retired.iter().filter_map(|weak| weak.upgrade());
        for commands in self.running.values().cloned().chain(retired) {
            let _ = commands.send(Command::Stop);
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
