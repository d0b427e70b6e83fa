//! A router over in-memory links: every position is a [`Peer`] the test plays, components are
//! a fake that records what the router asked of it. No process, no socket, no thread.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_wire::successor::Dialect;
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::driver::{ChainLink, Components, Driver, Restarted};
use crate::spec::{FailurePolicy, TraceSettings};
use acp_link::event::Event;
use acp_link::{LinkId, LinkLimits, Links, MemoryPeer, ReadGate};
use acp_router::skipped::Skipped;
use acp_router::topology::{ChainMode, Position, Topology};
use acp_router::{
    BridgeEndpoint, BridgeForm, DialectChoice, Finish, HttpBridgeSession, LaunchKind, Launched,
    Role,
};
use acp_trace::Trace;

/// How long a test waits for something that must happen before it fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the router asked of its components.
#[derive(Default)]
pub struct Asked {
    pub initialized: Vec<(Position, String)>,
    pub bridge_opened: usize,
    pub stopped: Vec<Position>,
    pub restarted: Vec<Position>,
    /// The far ends of links made by restarts, until a test takes them.
    new_peers: Vec<(Position, Peer)>,
}

/// Components that start nothing: records the router's requests; a restart makes a new
/// in-memory link whose far end the test takes with [`Chain::restarted`].
pub struct FakeComponents {
    links: Links,
    asked: Arc<Mutex<Asked>>,
    /// The params each position was initialized with, handed back on restart.
    initialize_params: HashMap<Position, Bytes>,
    /// When the chain was made: every position was "launched" then, as native pid 1000 +
    /// its position.
    launched_at: tokio::time::Instant,
}

impl Components for FakeComponents {
    fn restart(&mut self, position: Position) -> Restarted {
        let (link, end) = self.links.memory(1024);
        let peer = Peer {
            id: link.id,
            gate: link.gate.clone(),
            end,
        };
        let mut asked = self.asked.lock().unwrap();
        asked.restarted.push(position);
        asked.new_peers.push((position, peer));
        Restarted {
            link,
            initialize_params: self.initialize_params.get(&position).cloned(),
        }
    }

    fn stop(&mut self, position: Position) {
        self.asked.lock().unwrap().stopped.push(position);
    }

    fn initialized(&mut self, position: Position, params: Bytes) {
        self.initialize_params.insert(position, params.clone());
        let params = String::from_utf8(params.to_vec()).expect("UTF-8 params");
        self.asked
            .lock()
            .unwrap()
            .initialized
            .push((position, params));
    }

    fn launched(&self, position: Position) -> Option<Launched> {
        Some(Launched {
            kind: LaunchKind::Native {
                pid: Some(1000 + position as i32),
            },
            at: self.launched_at.into_std(),
        })
    }

    fn bridge(&mut self) -> std::io::Result<BridgeEndpoint> {
        self.asked.lock().unwrap().bridge_opened += 1;
        Ok(BridgeEndpoint {
            program: "/opt/acp/acp-conductor".into(),
            socket: "/run/acp/bridge.sock".into(),
        })
    }

    fn bridge_form(&self) -> BridgeForm {
        BridgeForm::Stdio
    }

    fn http_bridge(&mut self, _server_ids: &[String]) -> std::io::Result<HttpBridgeSession> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "these components bridge over stdio only",
        ))
    }

    fn close_http_bridge(&mut self, _key: &str) {
        unreachable!("no HTTP bridge setup was ever served")
    }
}

/// The far end of one link, played by the test.
pub struct Peer {
    pub end: MemoryPeer,
    pub id: LinkId,
    /// The gate the router pauses this peer's link with.
    pub gate: Arc<ReadGate>,
}

impl Peer {
    /// Sends one JSON-RPC message, as the exact text given.
    pub fn send(&self, text: &str) {
        self.end.send(Bytes::copy_from_slice(text.as_bytes()));
    }

    /// The next line the router wrote to this peer, as text.
    pub async fn recv_text(&mut self) -> String {
        match tokio::time::timeout(PATIENCE, self.end.recv()).await {
            Ok(Some(frame)) => String::from_utf8(frame.to_vec()).expect("UTF-8 line"),
            Ok(None) => panic!("link {} closed while a message was expected", self.id.0),
            Err(_) => panic!("nothing arrived on link {} in {PATIENCE:?}", self.id.0),
        }
    }

    /// The next line the router wrote to this peer, parsed.
    pub async fn recv(&mut self) -> Value {
        let text = self.recv_text().await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}

/// A chain to build.
pub struct Spec {
    pub proxies: usize,
    pub mode: ChainMode,
    pub limits: LinkLimits,
    /// How many frames each peer's end buffers before the link's writer waits.
    pub peer_capacity: usize,
    /// Every proxy's dialect (the editor's and the agent's are pinned to the RFD).
    pub dialect: DialectChoice,
    pub shutdown_grace: Duration,
    /// Failure policies by position; every other position has the default (`fail`).
    pub failure: HashMap<Position, FailurePolicy>,
    /// Whether the chain starts past its `initialize` (most tests are about what comes after);
    /// see [`Spec::awaiting_initialize`].
    pub initialized: bool,
    /// Whether the run is traced (to a file of its own, read with [`Chain::trace_records`]).
    pub traced: bool,
}

impl Spec {
    pub fn new(proxies: usize) -> Spec {
        Spec {
            proxies,
            mode: ChainMode::Agent,
            limits: LinkLimits {
                max_line: 1 << 20,
                queue_limit: 1 << 20,
                write_timeout: Duration::from_secs(30),
            },
            peer_capacity: 1024,
            dialect: DialectChoice::Pinned(Dialect::Rfd),
            shutdown_grace: Duration::from_secs(2),
            failure: HashMap::new(),
            initialized: true,
            traced: false,
        }
    }

    /// A traced run: the links' write loops and the router record into a trace file.
    pub fn traced(mut self) -> Spec {
        self.traced = true;
        self
    }

    pub fn on_failure(mut self, position: Position, policy: FailurePolicy) -> Spec {
        self.failure.insert(position, policy);
        self
    }

    pub fn start(self) -> Chain {
        let (events, received) = mpsc::channel(1024);
        let trace = self.traced.then(start_trace);
        let sink = trace.as_ref().map(|(trace, _)| trace.sink().clone());
        let links = Links::new(events.clone(), self.limits).traced(sink.clone());
        let topology = Topology {
            proxies: self.proxies,
            mode: self.mode,
        };
        let mut peers = Vec::new();
        let mut chain = Vec::new();
        for position in 0..topology.link_count() {
            let (link, end) = links.memory(self.peer_capacity);
            let (role, name, dialect) = if position == 0 {
                let dialect = DialectChoice::Pinned(Dialect::Rfd);
                (Role::Editor, "editor".to_string(), dialect)
            } else if topology.is_proxy(position) {
                (Role::Proxy, format!("p{position}"), self.dialect)
            } else {
                let dialect = DialectChoice::Pinned(Dialect::Rfd);
                (Role::Agent, "agent".to_string(), dialect)
            };
            peers.push(Peer {
                id: link.id,
                gate: link.gate.clone(),
                end,
            });
            chain.push(ChainLink {
                link,
                name,
                role,
                dialect,
                failure: self.failure.get(&position).copied().unwrap_or_default(),
            });
        }
        let asked = Arc::new(Mutex::new(Asked::default()));
        let components = FakeComponents {
            links: links.clone(),
            asked: asked.clone(),
            initialize_params: HashMap::new(),
            launched_at: tokio::time::Instant::now(),
        };
        let mut router = Driver::new(topology, chain, received, components, self.shutdown_grace)
            .with_trace(sink);
        if self.initialized {
            router.assume_initialized();
        }
        let routing = tokio::spawn(async move {
            let finish = router.run().await;
            router.close_components();
            (finish, router.skipped().clone())
        });
        let mut peers = peers.into_iter();
        let editor = peers.next().expect("position 0");
        let mut proxies: Vec<Peer> = peers.collect();
        let agent = (self.mode == ChainMode::Agent).then(|| proxies.pop().expect("the agent"));
        Chain {
            editor,
            proxies,
            agent,
            events,
            links,
            asked,
            routing,
            trace,
        }
    }
}

/// A trace to a fresh file of the system's temporary directory.
fn start_trace() -> (Trace, PathBuf) {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let file =
        std::env::temp_dir().join(format!("acp-router-trace-{}-{n}.jsonl", std::process::id()));
    let trace = Trace::start(&file, &TraceSettings::default(), &[], &[])
        .unwrap_or_else(|e| panic!("cannot trace to {}: {e}", file.display()));
    (trace, file)
}

/// A running router and the peers of its chain.
pub struct Chain {
    pub editor: Peer,
    /// Position k is `proxies[k - 1]`.
    pub proxies: Vec<Peer>,
    pub agent: Option<Peer>,
    /// The router's event channel, to report what components and signals would.
    pub events: mpsc::Sender<Event>,
    pub links: Links,
    pub asked: Arc<Mutex<Asked>>,
    routing: JoinHandle<(Finish, Skipped)>,
    trace: Option<(Trace, PathBuf)>,
}

impl Chain {
    pub fn agent(&mut self) -> &mut Peer {
        self.agent.as_mut().expect("a chain with an agent")
    }

    /// Proxy at position `k` (1-based, like positions).
    pub fn proxy(&mut self, k: usize) -> &mut Peer {
        &mut self.proxies[k - 1]
    }

    pub async fn report(&self, event: Event) {
        self.events
            .send(event)
            .await
            .expect("the router is running");
    }

    /// Reports that the component behind `link` exited.
    pub async fn exited(&self, link: LinkId, reason: &str, stderr: &[&str]) {
        self.report(Event::Exited {
            link,
            reason: reason.to_string(),
            status: None,
            stderr_tail: stderr.iter().map(|s| s.to_string()).collect(),
        })
        .await;
    }

    /// Waits for the component at `position` to be started again, and plays it from then on.
    pub async fn restarted(&mut self, position: Position) -> &mut Peer {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let peer = loop {
            let taken = {
                let mut asked = self.asked.lock().unwrap();
                let found = asked.new_peers.iter().position(|(p, _)| *p == position);
                found.map(|i| asked.new_peers.remove(i).1)
            };
            if let Some(peer) = taken {
                break peer;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "position {position} was not started again in {PATIENCE:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let is_agent = position == self.proxies.len() + 1;
        let slot = match &mut self.agent {
            Some(agent) if is_agent => agent,
            _ => &mut self.proxies[position - 1],
        };
        *slot = peer;
        slot
    }

    /// A new bridge shim connection, as the supervisor would announce it.
    pub async fn connect_shim(&self) -> Peer {
        let (link, end) = self.links.held().memory(1024);
        let peer = Peer {
            id: link.id,
            gate: link.gate.clone(),
            end,
        };
        self.report(Event::ShimConnected(link)).await;
        peer
    }

    /// Waits for the router to finish routing; with what it counted as not routed.
    pub async fn finish_counting(self) -> (Finish, Skipped) {
        tokio::time::timeout(PATIENCE, self.routing)
            .await
            .expect("the router finished")
            .expect("the router did not panic")
    }

    /// The editor leaves; once the router has finished, the records of the trace (a chain
    /// started [`traced`](Spec::traced)), header and end included.
    pub async fn trace_records(mut self) -> Vec<Value> {
        let (trace, file) = self.trace.take().expect("a traced chain");
        self.editor_leaves().await;
        trace.finish("the test is over");
        let text = std::fs::read_to_string(&file).expect("the trace file");
        let _ = std::fs::remove_file(&file);
        text.lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
            })
            .collect()
    }

    /// The editor closes its output; once the router has finished, what it did not route.
    pub async fn editor_leaves(mut self) -> Skipped {
        self.editor.end.close();
        let (finish, skipped) = self.finish_counting().await;
        assert_eq!(finish, Finish::Stopped);
        skipped
    }
}
