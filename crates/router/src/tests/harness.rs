//! A router driven in memory with no runtime: every position is a [`Peer`] the test plays,
//! components are a fake that records what the router asked of it, time is a made-up clock.
//!
//! What the driver and the links do in a real run is played here as plainly as possible: a
//! peer's bytes are framed by `acp_wire::LineDecoder` (so over-long lines arrive as the
//! reader reports them), each input is handed to the router at once and its outputs are
//! carried out before the call returns; a paused peer's frames wait until it is resumed.
//! When a test waits for something that has not happened, the clock jumps to the router's
//! next timer, as tokio's paused clock does when every task is idle.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp_wire::LineDecoder;
use acp_wire::successor::Dialect;
use bytes::{Bytes, BytesMut};
use serde_json::Value;

use crate::skipped::Skipped;
use crate::topology::{ChainMode, Position, Topology};
use crate::{
    BridgeEndpoint, BridgeForm, ChainLink, Components, DialectChoice, EndOfRun, FailurePolicy,
    Finish, HttpBridgeSession, Input, LaunchKind, Launched, LinkEvent, LinkId, Output, Restarted,
    Role, Router,
};

/// How long a test lets the clock run for something that must happen before it fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the router asked of its components.
#[derive(Default)]
pub struct Asked {
    pub initialized: Vec<(Position, String)>,
    pub bridge_opened: usize,
    /// The server ids of each session setup served over HTTP.
    pub http_sessions: Vec<Vec<String>>,
    /// The keys of the HTTP bridge setups the router ended, in order.
    pub http_closed: Vec<String>,
    /// What `[conductor] mcp_bridge` says in this test (not asked: set by the test).
    pub bridge_form: BridgeForm,
    pub stopped: Vec<Position>,
    pub restarted: Vec<Position>,
    /// The links made by restarts, until a test takes them.
    new_links: Vec<(Position, LinkId)>,
    /// What each reload's swap placed at positions 1.., in order.
    pub swapped: Vec<Vec<crate::Placement>>,
    /// The instances the router had stopped after a reload, in order.
    pub retired: Vec<LinkId>,
}

/// Components that start nothing: records the router's requests; a restart names a new link
/// whose peer the test takes with [`Chain::restarted`].
pub struct FakeComponents {
    next_link: Rc<RefCell<usize>>,
    asked: Arc<Mutex<Asked>>,
    /// The params each position was initialized with, handed back on restart.
    initialize_params: HashMap<Position, Bytes>,
    /// When the chain was made: every position was "launched" then, as native pid 1000 +
    /// its position.
    launched_at: Instant,
}

impl Components for FakeComponents {
    fn restart(&mut self, position: Position) -> Restarted {
        let link = new_link(&self.next_link);
        let mut asked = self.asked.lock().unwrap();
        asked.restarted.push(position);
        asked.new_links.push((position, link));
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
            at: self.launched_at,
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
        self.asked.lock().unwrap().bridge_form
    }

    fn http_bridge(&mut self, server_ids: &[String]) -> std::io::Result<HttpBridgeSession> {
        let mut asked = self.asked.lock().unwrap();
        asked.http_sessions.push(server_ids.to_vec());
        let session = asked.http_sessions.len();
        Ok(HttpBridgeSession {
            key: format!("s{session}"),
            urls: (0..server_ids.len())
                .map(|n| format!("http://127.0.0.1:4000/mcp/s{session}/{n}"))
                .collect(),
            headers: vec![("Authorization".into(), format!("Bearer secret-{session}"))],
        })
    }

    fn close_http_bridge(&mut self, key: &str) {
        self.asked.lock().unwrap().http_closed.push(key.to_string());
    }

    fn swapped(&mut self, placements: &[crate::Placement]) {
        self.asked.lock().unwrap().swapped.push(placements.to_vec());
    }

    fn retire(&mut self, link: LinkId) {
        self.asked.lock().unwrap().retired.push(link);
    }
}

fn new_link(next: &Rc<RefCell<usize>>) -> LinkId {
    let mut next = next.borrow_mut();
    *next += 1;
    LinkId(*next - 1)
}

/// One link's far end, as the world keeps it.
#[derive(Default)]
struct End {
    /// What the router sent the peer and the test has not received yet.
    inbox: VecDeque<Bytes>,
    /// The router closed the link's output.
    closed: bool,
    /// The router paused reading from the peer.
    paused: bool,
    /// What the peer sent while paused, not read yet.
    unread: VecDeque<LinkEvent>,
    /// The peer closed its output.
    peer_closed: bool,
}

/// The router, its clock, and every link's far end.
pub struct World {
    router: Router<FakeComponents>,
    now: Instant,
    ends: HashMap<LinkId, End>,
    max_line: usize,
    /// How the run ended once the router finished: the finish, what was skipped, the end.
    ended: Option<(Finish, Skipped, EndOfRun)>,
    /// The trace points the router handed out, in order.
    pub trace: Vec<crate::trace_record::TracePoint>,
    /// How many times the router asked for the configuration to be read again.
    reloads_wanted: usize,
}

impl World {
    /// Hands `input` to the router (unless it finished) and carries out what it decided.
    fn input(&mut self, input: Input) {
        if self.ended.is_some() {
            return;
        }
        self.router.handle(input, self.now);
        self.settle();
    }

    fn settle(&mut self) {
        loop {
            while let Some(output) = self.router.poll_output() {
                self.carry_out(output);
            }
            if self.ended.is_none()
                && let Some(finish) = self.router.finished()
            {
                // As the driver does once routing ends.
                self.router.close_components();
                self.ended = Some((
                    finish,
                    self.router.skipped().clone(),
                    self.router.end_of_run(),
                ));
                continue;
            }
            return;
        }
    }

    fn carry_out(&mut self, output: Output) {
        match output {
            Output::Send { to, frame, .. } => {
                let end = self.ends.entry(to).or_default();
                if !end.closed {
                    end.inbox.push_back(frame);
                }
            }
            Output::Pause(link) => self.ends.entry(link).or_default().paused = true,
            Output::Resume(link) => {
                let end = self.ends.entry(link).or_default();
                end.paused = false;
                let unread: Vec<LinkEvent> = end.unread.drain(..).collect();
                for event in unread {
                    self.router.handle(Input::Link { link, event }, self.now);
                }
            }
            Output::Close(link) => self.ends.entry(link).or_default().closed = true,
            Output::Trace(point) => self.trace.push(point),
            Output::ReloadWanted => self.reloads_wanted += 1,
        }
    }

    /// The peer of `link` sends `bytes` and a newline, framed as a link's reader frames it.
    fn peer_sends(&mut self, link: LinkId, bytes: &[u8]) {
        let mut decoder = LineDecoder::new(self.max_line);
        let mut buf = BytesMut::from(bytes);
        buf.extend_from_slice(b"\n");
        let mut events = Vec::new();
        while let Some(frame) = decoder.decode(&mut buf) {
            events.push(match frame {
                Ok(frame) => LinkEvent::Frames(vec![frame]),
                Err(error) => LinkEvent::TooLong(error),
            });
        }
        for event in events {
            self.peer_event(link, event);
        }
    }

    /// What a link's reader reports, held while the link is paused.
    fn peer_event(&mut self, link: LinkId, event: LinkEvent) {
        let end = self.ends.entry(link).or_default();
        if end.paused {
            end.unread.push_back(event);
        } else {
            self.input(Input::Link { link, event });
        }
    }

    /// Moves the clock to `to`, firing the router's timers on the way, each at its time.
    fn advance_to(&mut self, to: Instant) {
        while self.ended.is_none()
            && let Some(at) = self.router.next_wake()
            && at <= to
        {
            self.now = self.now.max(at);
            self.router.on_time(self.now);
            self.settle();
        }
        self.now = self.now.max(to);
    }

    /// Lets the clock run to the router's next timer, as a paused tokio clock does when every
    /// task waits; false when the router has nothing scheduled within `limit`.
    fn wait_for_timer(&mut self, limit: Instant) -> bool {
        match self.router.next_wake() {
            Some(at) if at <= limit && self.ended.is_none() => {
                self.advance_to(at);
                true
            }
            _ => false,
        }
    }
}

/// The far end of one link, played by the test.
pub struct Peer {
    pub id: LinkId,
    world: Rc<RefCell<World>>,
}

impl Peer {
    /// Sends one JSON-RPC message, as the exact text given.
    pub fn send(&self, text: &str) {
        self.send_raw(text.as_bytes());
    }

    /// Sends bytes as they are, then a newline.
    pub fn send_raw(&self, bytes: impl AsRef<[u8]>) {
        self.world.borrow_mut().peer_sends(self.id, bytes.as_ref());
    }

    /// The peer closes its output.
    pub fn close(&self) {
        let mut world = self.world.borrow_mut();
        let end = world.ends.entry(self.id).or_default();
        if std::mem::replace(&mut end.peer_closed, true) {
            return;
        }
        world.peer_event(self.id, LinkEvent::Closed(None));
    }

    /// Whether the router paused reading from this peer.
    pub fn is_paused(&self) -> bool {
        let world = self.world.borrow();
        world.ends.get(&self.id).is_some_and(|end| end.paused)
    }

    /// The next line the router wrote to this peer, as text; the clock runs to the router's
    /// timers while nothing is there.
    pub fn recv_text(&mut self) -> String {
        let mut world = self.world.borrow_mut();
        let limit = world.now + PATIENCE;
        loop {
            let end = world.ends.entry(self.id).or_default();
            if let Some(frame) = end.inbox.pop_front() {
                return String::from_utf8(frame.to_vec()).expect("UTF-8 line");
            }
            if end.closed {
                panic!("link {} closed while a message was expected", self.id.0);
            }
            if !world.wait_for_timer(limit) {
                panic!("nothing arrived on link {} in {PATIENCE:?}", self.id.0);
            }
        }
    }

    /// The next line the router wrote to this peer, parsed.
    pub fn recv(&mut self) -> Value {
        let text = self.recv_text();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// The end of what the router writes to this peer (its link was closed).
    pub fn recv_end(&mut self) {
        let mut world = self.world.borrow_mut();
        let limit = world.now + PATIENCE;
        loop {
            let end = world.ends.entry(self.id).or_default();
            if let Some(frame) = end.inbox.pop_front() {
                panic!("expected the end, got {frame:?}");
            }
            if end.closed {
                return;
            }
            if !world.wait_for_timer(limit) {
                panic!("link {} was not closed in {PATIENCE:?}", self.id.0);
            }
        }
    }

    /// The next frame the router wrote to this peer, if one is there now.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        let mut world = self.world.borrow_mut();
        world.ends.entry(self.id).or_default().inbox.pop_front()
    }

    /// Whether the router has written anything not yet received.
    pub fn has_pending(&mut self) -> Option<String> {
        let mut world = self.world.borrow_mut();
        let end = world.ends.entry(self.id).or_default();
        end.inbox
            .pop_front()
            .map(|f| String::from_utf8_lossy(&f).into_owned())
    }
}

/// The limits the emulated links apply.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest frame a peer's reader accepts; longer ones arrive as `TooLong`.
    pub max_line: usize,
}

/// A chain to build.
pub struct Spec {
    pub proxies: usize,
    pub mode: ChainMode,
    pub limits: Limits,
    /// Every proxy's dialect (the editor's and the agent's are pinned to the RFD).
    pub dialect: DialectChoice,
    pub shutdown_grace: Duration,
    /// Failure policies by position; every other position has the default (`fail`).
    pub failure: HashMap<Position, FailurePolicy>,
    /// Whether the chain starts past its `initialize` (most tests are about what comes after);
    /// see [`Spec::awaiting_initialize`].
    pub initialized: bool,
    /// Whether the router records trace points (read with [`Chain::trace_points`]).
    pub traced: bool,
    pub component_events: bool,
}

impl Spec {
    pub fn new(proxies: usize) -> Spec {
        Spec {
            proxies,
            mode: ChainMode::Agent,
            limits: Limits { max_line: 1 << 20 },
            dialect: DialectChoice::Pinned(Dialect::Rfd),
            shutdown_grace: Duration::from_secs(2),
            failure: HashMap::new(),
            initialized: true,
            traced: false,
            component_events: false,
        }
    }

    /// An untraced run whose driver counts component events: the router hands those out.
    pub fn counting_component_events(mut self) -> Spec {
        self.component_events = true;
        self
    }

    /// A traced run: the router hands out trace points.
    pub fn traced(mut self) -> Spec {
        self.traced = true;
        self
    }

    pub fn on_failure(mut self, position: Position, policy: FailurePolicy) -> Spec {
        self.failure.insert(position, policy);
        self
    }

    /// A chain that has not received its `initialize` yet, as a run starts.
    pub fn awaiting_initialize(mut self) -> Spec {
        self.initialized = false;
        self
    }

    pub fn proxy_mode(mut self) -> Spec {
        self.mode = ChainMode::Proxy;
        self
    }

    pub fn dialect(mut self, dialect: DialectChoice) -> Spec {
        self.dialect = dialect;
        self
    }

    pub fn start(self) -> Chain {
        let topology = Topology {
            proxies: self.proxies,
            mode: self.mode,
        };
        let next_link = Rc::new(RefCell::new(0));
        let mut chain = Vec::new();
        for position in 0..topology.link_count() {
            let link = new_link(&next_link);
            let (role, name, dialect) = if position == 0 {
                let dialect = DialectChoice::Pinned(Dialect::Rfd);
                (Role::Editor, "editor".to_string(), dialect)
            } else if topology.is_proxy(position) {
                (Role::Proxy, format!("p{position}"), self.dialect)
            } else {
                let dialect = DialectChoice::Pinned(Dialect::Rfd);
                (Role::Agent, "agent".to_string(), dialect)
            };
            chain.push(ChainLink {
                link,
                name,
                role,
                dialect,
                failure: self.failure.get(&position).copied().unwrap_or_default(),
            });
        }
        let ids: Vec<LinkId> = chain.iter().map(|c| c.link).collect();
        let now = Instant::now();
        let asked = Arc::new(Mutex::new(Asked::default()));
        let components = FakeComponents {
            next_link: next_link.clone(),
            asked: asked.clone(),
            initialize_params: HashMap::new(),
            launched_at: now,
        };
        let mut router = Router::new(topology, chain, components, self.shutdown_grace, now)
            .with_trace(self.traced)
            .with_component_events(self.component_events);
        if self.initialized {
            router.assume_initialized();
        }
        let world = Rc::new(RefCell::new(World {
            router,
            now,
            ends: HashMap::new(),
            max_line: self.limits.max_line,
            ended: None,
            trace: Vec::new(),
            reloads_wanted: 0,
        }));
        world.borrow_mut().settle();
        let mut peers = ids.into_iter().map(|id| Peer {
            id,
            world: world.clone(),
        });
        let editor = peers.next().expect("position 0");
        let mut proxies: Vec<Peer> = peers.collect();
        let agent = (self.mode == ChainMode::Agent).then(|| proxies.pop().expect("the agent"));
        Chain {
            editor,
            proxies,
            agent,
            asked,
            world,
            next_link,
        }
    }
}

/// A router and the peers of its chain.
pub struct Chain {
    pub editor: Peer,
    /// Position k is `proxies[k - 1]`.
    pub proxies: Vec<Peer>,
    pub agent: Option<Peer>,
    pub asked: Arc<Mutex<Asked>>,
    world: Rc<RefCell<World>>,
    next_link: Rc<RefCell<usize>>,
}

impl Chain {
    pub fn agent(&mut self) -> &mut Peer {
        self.agent.as_mut().expect("a chain with an agent")
    }

    /// Proxy at position `k` (1-based, like positions).
    pub fn proxy(&mut self, k: usize) -> &mut Peer {
        &mut self.proxies[k - 1]
    }

    /// The editor sends `text`; returns it as the first position after the editor got it.
    pub fn editor_sends(&mut self, text: &str) -> Value {
        self.editor.send(text);
        match self.proxies.first_mut() {
            Some(proxy) => proxy.recv(),
            None => self.agent().recv(),
        }
    }

    /// Hands the router an input, as the driver would.
    pub fn report(&self, input: Input) {
        self.world.borrow_mut().input(input);
    }

    /// Reports that the component behind `link` exited.
    pub fn exited(&self, link: LinkId, reason: &str, stderr: &[&str]) {
        self.report(Input::Exited {
            link,
            reason: reason.to_string(),
            status: None,
            stderr_tail: stderr.iter().map(|s| s.to_string()).collect(),
        });
    }

    /// Lets `d` pass on the clock, firing the router's timers as they come due.
    pub fn sleep(&self, d: Duration) {
        let mut world = self.world.borrow_mut();
        let to = world.now + d;
        world.advance_to(to);
    }

    /// Waits for the component at `position` to be started again, and plays it from then on.
    pub fn restarted(&mut self, position: Position) -> &mut Peer {
        let limit = self.world.borrow().now + PATIENCE;
        let link = loop {
            let taken = {
                let mut asked = self.asked.lock().unwrap();
                let found = asked.new_links.iter().position(|(p, _)| *p == position);
                found.map(|i| asked.new_links.remove(i).1)
            };
            if let Some(link) = taken {
                break link;
            }
            assert!(
                self.world.borrow_mut().wait_for_timer(limit),
                "position {position} was not started again in {PATIENCE:?}"
            );
        };
        let peer = Peer {
            id: link,
            world: self.world.clone(),
        };
        let is_agent = position == self.proxies.len() + 1;
        let slot = match &mut self.agent {
            Some(agent) if is_agent => agent,
            _ => &mut self.proxies[position - 1],
        };
        *slot = peer;
        slot
    }

    /// Hands the router a reload plan, as the driver does.
    pub fn reload(&self, plan: crate::ReloadPlan) -> Result<(), crate::ReloadRefused> {
        let mut world = self.world.borrow_mut();
        let now = world.now;
        let out = world.router.reload(plan, now);
        world.settle();
        out
    }

    /// How many times the router asked for the configuration to be read again.
    pub fn reloads_wanted(&self) -> usize {
        self.world.borrow().reloads_wanted
    }

    /// The peer of a new link, as the supervisor makes one for a reload's instance.
    pub fn new_peer(&self) -> Peer {
        Peer {
            id: new_link(&self.next_link),
            world: self.world.clone(),
        }
    }

    /// Whether the router closed `peer`'s link (its input, for a component).
    pub fn is_closed(&self, peer: &Peer) -> bool {
        let world = self.world.borrow();
        world.ends.get(&peer.id).is_some_and(|end| end.closed)
    }

    /// A new bridge shim connection, as the supervisor would announce it: its reader waits
    /// at a closed gate until the router resumes it.
    pub fn connect_shim(&self) -> Peer {
        let link = new_link(&self.next_link);
        self.world.borrow_mut().ends.entry(link).or_default().paused = true;
        self.report(Input::ShimConnected(link));
        Peer {
            id: link,
            world: self.world.clone(),
        }
    }

    /// Whether the router has finished routing.
    pub fn finished(&self) -> bool {
        self.world.borrow().ended.is_some()
    }

    /// Waits for the router to finish routing.
    pub fn finish(self) -> Finish {
        self.finish_counting().0
    }

    /// Waits for the router to finish routing; with how the run ended, for its log line.
    pub fn finish_ending(self) -> (Finish, EndOfRun) {
        let (finish, _, end) = self.ended();
        (finish, end)
    }

    /// Waits for the router to finish routing; with what it counted as not routed.
    pub fn finish_counting(self) -> (Finish, Skipped) {
        let (finish, skipped, _) = self.ended();
        (finish, skipped)
    }

    fn ended(&self) -> (Finish, Skipped, EndOfRun) {
        let mut world = self.world.borrow_mut();
        let limit = world.now + PATIENCE;
        while world.ended.is_none() {
            assert!(world.wait_for_timer(limit), "the router did not finish");
        }
        world.ended.clone().expect("checked above")
    }

    /// The editor closes its output; once the router has finished, what it did not route.
    pub fn editor_leaves(self) -> Skipped {
        self.editor.close();
        let (finish, skipped) = self.finish_counting();
        assert_eq!(finish, Finish::Stopped);
        skipped
    }

    /// The trace points the router handed out so far.
    pub fn trace_points(&self) -> Vec<crate::trace_record::TracePoint> {
        std::mem::take(&mut self.world.borrow_mut().trace)
    }

    /// The router, for what a test asks of it directly.
    pub fn with_router<T>(&self, f: impl FnOnce(&mut Router<FakeComponents>) -> T) -> T {
        let mut world = self.world.borrow_mut();
        let out = f(&mut world.router);
        world.settle();
        out
    }
}

/// A link the router was never given.
pub fn stray_link(_chain: &Chain) -> LinkId {
    LinkId(usize::MAX / 2)
}

/// Parses `text` as JSON, for comparing messages regardless of member order.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("test JSON ({e}): {text}"))
}
