//! The body of the `router` fuzz target: a Router over in-memory links, every side played
//! from a [`Script`], and the invariants its id tables must keep checked as frames arrive.
//!
//! Built for `cargo fuzz` (fuzz/, through the `fuzzing` feature) and for the seed-corpus test
//! below, which runs on stable under `cargo test`. One input is one run on a single-threaded
//! runtime with paused time: after each step the runtime runs until nothing is left to do,
//! so a run is deterministic and timers cost nothing. What is checked:
//!
//! - the router does not panic, and stops once the editor has left and its grace is over;
//! - every frame it writes is one line and valid JSON-RPC 2.0 (a shim's welcome line aside);
//! - every response a side gets answers a message that side sent, with its exact id text,
//!   at most once ([`Ledger`]);
//! - unless writing to the editor failed, every request the editor sent before the router
//!   stopped got its answer, and no request of the editor's is left in any id table.

mod ledger;
mod script;

use std::panic;
use std::time::Duration;

use acp_wire::encode::{self, Call};
use acp_wire::successor::{self, EnvelopeMeta};
use acp_wire::{Envelope, RawValue};
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use self::ledger::Ledger;
pub use self::script::{Script, Side, Step};
use super::{ChainLink, Components, Driver, Restarted};
use crate::spec::FailurePolicy;
use acp_link::event::{Event, ExitStatus};
use acp_link::{LinkEvent, LinkId, LinkLimits, Links, MemoryPeer};
use acp_router::topology::{ChainMode, Position, Topology};
use acp_router::{BridgeEndpoint, BridgeForm, DialectChoice, Finish, HttpBridgeSession, Role};
use acp_wire::successor::Dialect;

/// Lines longer than this are dropped by the links (and answered from their head).
const MAX_LINE: usize = 600;
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Bridge shims that may dial in during one run.
const MAX_SHIMS: usize = 3;

/// Plays `data` as a [`Script`] against a router. Panics when an invariant breaks.
pub fn router(data: &[u8]) {
    let script = Script::parse(data);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut run = Run::start(&script);
        for step in &script.steps {
            if run.finished() {
                break;
            }
            run.play(step).await;
            run.settle().await;
        }
        run.end().await;
    });
}

/// Components that start nothing: a restarted one is unconnected, the bridge is an address.
struct Unstarted {
    links: Links,
}

impl Components for Unstarted {
    fn restart(&mut self, _position: Position) -> Restarted {
        Restarted {
            link: self.links.unconnected(),
            initialize_params: None,
        }
    }

    fn stop(&mut self, _position: Position) {}

    fn initialized(&mut self, _position: Position, _params: Bytes) {}

    fn bridge(&mut self) -> std::io::Result<BridgeEndpoint> {
        Ok(BridgeEndpoint {
            program: "/fuzz/acp-conductor".into(),
            socket: "/fuzz/bridge.sock".into(),
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

/// One side as the script plays it, and what it has seen.
struct Peer {
    name: String,
    end: MemoryPeer,
    link: LinkId,
    /// Proxies and the agent can exit; the editor and shims are not components.
    component: bool,
    is_editor: bool,
    is_shim: bool,
    closed: bool,
    ledger: Ledger,
    /// Requests the router sent this side and it has not answered: (id text, the frame).
    held: Vec<(String, Bytes)>,
    /// Answers it gave, to send again.
    answers: Vec<Bytes>,
    /// Requests it sent: id text, and whether they went wrapped.
    sent: Vec<(String, bool)>,
    /// Requests it passed on: (its own id, the id of the request held).
    forwarded: Vec<(String, String)>,
    next_id: u64,
    frames_in: usize,
}

impl Peer {
    fn new(name: String, end: MemoryPeer, link: LinkId, role: Role) -> Peer {
        Peer {
            name,
            end,
            link,
            component: matches!(role, Role::Proxy | Role::Agent),
            is_editor: role == Role::Editor,
            is_shim: role == Role::Shim,
            closed: false,
            ledger: Ledger::default(),
            held: Vec::new(),
            answers: Vec::new(),
            sent: Vec::new(),
            forwarded: Vec::new(),
            next_id: 100,
            frames_in: 0,
        }
    }
}

type Routing = JoinHandle<(Finish, Driver<Unstarted>)>;

struct Run {
    events: mpsc::Sender<Event>,
    links: Links,
    /// Position order: the editor, the proxies, the agent (in agent mode).
    chain: Vec<Peer>,
    shims: Vec<Peer>,
    proxies: usize,
    mode: ChainMode,
    routing: Option<Routing>,
    editor_unwritable: bool,
}

impl Run {
    fn start(script: &Script) -> Run {
        let (events, received) = mpsc::channel(1024);
        let limits = LinkLimits {
            max_line: MAX_LINE,
            queue_limit: 1 << 20,
            write_timeout: Duration::from_secs(30),
        };
        let links = Links::new(events.clone(), limits);
        let topology = Topology {
            proxies: script.proxies,
            mode: script.mode,
        };
        let mut chain = Vec::new();
        let mut chain_links = Vec::new();
        for position in 0..topology.link_count() {
            let (link, end) = links.memory(1 << 16);
            let (role, name, dialect) = if position == 0 {
                let pinned = DialectChoice::Pinned(Dialect::Rfd);
                (Role::Editor, "editor".to_string(), pinned)
            } else if topology.is_proxy(position) {
                (Role::Proxy, format!("proxy {position}"), script.dialect)
            } else {
                let pinned = DialectChoice::Pinned(Dialect::Rfd);
                (Role::Agent, "agent".to_string(), pinned)
            };
            chain.push(Peer::new(name.clone(), end, link.id, role));
            chain_links.push(ChainLink {
                link,
                name,
                role,
                dialect,
                failure: FailurePolicy::default(),
            });
        }
        let components = Unstarted {
            links: links.clone(),
        };
        let mut router = Driver::new(topology, chain_links, received, components, SHUTDOWN_GRACE);
        let routing = tokio::spawn(async move {
            let finish = router.run().await;
            (finish, router)
        });
        Run {
            events,
            links,
            chain,
            shims: Vec::new(),
            proxies: script.proxies,
            mode: script.mode,
            routing: Some(routing),
            editor_unwritable: false,
        }
    }

    fn finished(&self) -> bool {
        self.routing.as_ref().is_none_or(JoinHandle::is_finished)
    }

    fn peer(&mut self, side: Side) -> Option<&mut Peer> {
        let agent = (self.mode == ChainMode::Agent).then_some(self.proxies + 1);
        match side {
            Side::Editor => self.chain.first_mut(),
            Side::Proxy(k) if k <= self.proxies => self.chain.get_mut(k),
            Side::Proxy(_) => None,
            Side::Agent => self.chain.get_mut(agent?),
            Side::Shim(i) => self.shims.get_mut(i),
        }
    }

    async fn play(&mut self, step: &Step) {
        match step {
            Step::Send(side, frame) => self.send(*side, frame.clone()),
            Step::Answer {
                side,
                pick,
                error,
                payload,
            } => self.answer(*side, *pick, *error, payload),
            Step::Repeat(side, pick) => {
                let Some(peer) = self.peer(*side) else { return };
                if let Some(answer) = pick_from(&peer.answers, *pick).cloned() {
                    self.send(*side, answer);
                }
            }
            Step::Forward(side, pick) => self.forward(*side, *pick),
            Step::Cancel(side, pick) => {
                let Some(peer) = self.peer(*side) else { return };
                let Some((id, wrapped)) = pick_from(&peer.sent, *pick).cloned() else {
                    return;
                };
                let params = format!(r#"{{"requestId":{id}}}"#);
                let frame = call(None, "$/cancel_request", &params, wrapped);
                self.send(*side, frame);
            }
            Step::Close(side) => {
                if let Some(peer) = self.peer(*side) {
                    peer.end.close();
                    peer.closed = true;
                }
            }
            Step::Exit(side) => {
                let Some(peer) = self.peer(*side).filter(|p| p.component) else {
                    return;
                };
                let link = peer.link;
                self.report(Event::Exited {
                    link,
                    reason: "exited with status 1".into(),
                    status: Some(ExitStatus::Code(1)),
                    stderr_tail: vec!["fuzzed".into()],
                })
                .await;
            }
            Step::WriteFailed(side, stalled) => {
                let Some(peer) = self.peer(*side) else { return };
                let link = peer.link;
                if peer.is_editor {
                    self.editor_unwritable = true;
                }
                let event = LinkEvent::WriteFailed {
                    reason: "broken pipe".into(),
                    stalled: *stalled,
                };
                self.report(Event::Link { link, event }).await;
            }
            Step::Drained(side) => {
                let Some(peer) = self.peer(*side) else { return };
                let link = peer.link;
                let event = LinkEvent::Drained;
                self.report(Event::Link { link, event }).await;
            }
            Step::Wait(time) => tokio::time::sleep(*time).await,
            Step::Signal => self.report(Event::Signal("SIGTERM")).await,
            Step::ConnectShim => {
                if self.shims.len() < MAX_SHIMS {
                    let (link, end) = self.links.held().memory(1 << 16);
                    let name = format!("shim {}", self.shims.len());
                    self.shims.push(Peer::new(name, end, link.id, Role::Shim));
                    self.report(Event::ShimConnected(link)).await;
                }
            }
        }
    }

    async fn report(&self, event: Event) {
        // A router that has stopped hears nothing more, as in a run.
        let _ = self.events.send(event).await;
    }

    /// `side` sends `frame`, which the router will read unless it has stopped.
    fn send(&mut self, side: Side, frame: Bytes) {
        let running = !self.finished();
        let Some(peer) = self.peer(side).filter(|p| !p.closed) else {
            return;
        };
        if running {
            peer.ledger.sent(&frame, MAX_LINE, peer.is_editor);
        }
        if let Ok(Envelope::Request { id, method, .. }) = acp_wire::parse(&frame) {
            let wrapped = successor::Dialect::of_successor(method).is_some();
            peer.sent.push((id.get().to_string(), wrapped));
        }
        peer.end.send(frame);
    }

    fn answer(&mut self, side: Side, pick: usize, error: bool, payload: &[u8]) {
        let Some(peer) = self.peer(side).filter(|p| !p.closed) else {
            return;
        };
        if peer.held.is_empty() {
            return;
        }
        let (id, _) = peer.held.remove(pick % peer.held.len());
        let payload = match std::str::from_utf8(payload).ok().filter(|p| !p.is_empty()) {
            Some(p) => p,
            None if error => r#"{"code":-32601,"message":"unknown"}"#,
            None => "null",
        };
        let mut out = Vec::new();
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(if error {
            br#","error":"#
        } else {
            br#","result":"#
        });
        out.extend_from_slice(payload.as_bytes());
        out.push(b'}');
        let answer = Bytes::from(out);
        peer.answers.push(answer.clone());
        self.send(side, answer);
    }

    /// A proxy passes a request it holds on, with an id of its own.
    fn forward(&mut self, side: Side, pick: usize) {
        let Some(peer) = self.peer(side).filter(|p| !p.closed && p.component) else {
            return;
        };
        if !matches!(side, Side::Proxy(_)) {
            return;
        }
        let Some((held_id, frame)) = pick_from(&peer.held, pick).cloned() else {
            return;
        };
        let Ok(Envelope::Request { method, params, .. }) = acp_wire::parse(&frame) else {
            return;
        };
        let own = peer.next_id.to_string();
        peer.next_id += 1;
        let out = match Dialect::of_successor(method) {
            // From the agent's side, wrapped: toward the editor, plain.
            Some(_) => match successor::unwrap(params) {
                Ok(inner) => {
                    let params = inner.params.map(RawValue::get);
                    call(Some(&own), inner.method, params.unwrap_or("{}"), false)
                }
                Err(_) => return,
            },
            None => call(
                Some(&own),
                method,
                params.map(RawValue::get).unwrap_or("{}"),
                true,
            ),
        };
        peer.forwarded.push((own, held_id));
        self.send(side, out);
    }

    /// Lets the runtime run until every task waits, then takes in what each side was sent;
    /// again while the sides reacted (a proxy relaying an answer).
    async fn settle(&mut self) {
        loop {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let mut relays = Vec::new();
            for (i, peer) in self.chain.iter_mut().enumerate() {
                let side = match i {
                    0 => Side::Editor,
                    i if i <= self.proxies => Side::Proxy(i),
                    _ => Side::Agent,
                };
                while let Some(frame) = peer.end.try_recv() {
                    relays.extend(take_in(peer, &frame).map(|r| (side, r)));
                }
            }
            for peer in &mut self.shims {
                while let Some(frame) = peer.end.try_recv() {
                    take_in(peer, &frame);
                }
            }
            if relays.is_empty() {
                return;
            }
            for (side, relay) in relays {
                if let Some(peer) = self.peer(side) {
                    peer.held.retain(|(id, _)| *id != relay.held_id);
                    peer.answers.push(relay.answer.clone());
                }
                self.send(side, relay.answer);
            }
        }
    }

    /// The editor leaves (unless the run already ended); the router must then stop within
    /// its grace and have answered everything the editor asked.
    async fn end(mut self) {
        if !self.finished() {
            if let Some(editor) = self.chain.first_mut()
                && !editor.closed
            {
                editor.end.close();
                editor.closed = true;
            }
            tokio::time::sleep(SHUTDOWN_GRACE + Duration::from_secs(1)).await;
            self.settle().await;
        }
        assert!(
            self.finished(),
            "the router still runs after the editor left and its grace passed"
        );
        let routing = self.routing.take().expect("joined once");
        let (_finish, mut router) = match routing.await {
            Ok(done) => done,
            Err(e) if e.is_panic() => panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("the router's task: {e}"),
        };
        let waiting = router.editor_requests_pending();
        if !self.editor_unwritable {
            assert!(
                waiting.is_empty(),
                "the editor's requests {waiting:?} are still in an id table"
            );
        }
        // As a run ends (run.rs): what the agent's MCP calls wait on is answered.
        router.close_components();
        let bridged = router.bridge_requests_pending();
        assert_eq!(bridged, 0, "bridge requests left after close_components");
        drop(router);
        self.settle().await;
        if !self.editor_unwritable {
            let editor = &self.chain[0];
            let unanswered = editor.ledger.unanswered();
            assert!(
                unanswered.is_empty(),
                "the editor never got an answer for {unanswered:?}"
            );
        }
    }
}

/// An answer a proxy owes for a request it passed on, now that the answer came back.
struct Relay {
    held_id: String,
    answer: Bytes,
}

/// A frame the router wrote to `peer`: checked, and noted as what the side now holds.
fn take_in(peer: &mut Peer, frame: &[u8]) -> Option<Relay> {
    peer.frames_in += 1;
    let text = String::from_utf8_lossy(frame);
    assert!(
        !frame.contains(&b'\n'),
        "{} got a frame with a newline: {text}",
        peer.name
    );
    let envelope = match acp_wire::parse(frame) {
        Ok(envelope) => envelope,
        Err(_) if peer.is_shim && peer.frames_in == 1 && is_welcome(frame) => return None,
        Err(e) => match refusal_of_an_odd_id(frame) {
            Some(id) => {
                peer.ledger.answered(&id, &peer.name);
                return None;
            }
            None => panic!("{} got invalid JSON-RPC ({e}): {text}", peer.name),
        },
    };
    match envelope {
        Envelope::Request { id, .. } => {
            peer.held
                .push((id.get().to_string(), Bytes::copy_from_slice(frame)));
            None
        }
        Envelope::Notification { .. } => None,
        Envelope::Response { id, outcome } => {
            peer.ledger.answered(id.get(), &peer.name);
            let at = peer.forwarded.iter().position(|(own, _)| own == id.get())?;
            let (_, held_id) = peer.forwarded.remove(at);
            peer.held.iter().any(|(id, _)| *id == held_id).then(|| {
                let mut out = Vec::new();
                encode::response(&mut out, &held_id, outcome);
                Relay {
                    held_id,
                    answer: Bytes::from(out),
                }
            })
        }
    }
}

/// The id of an error response whose id is a number with a fraction or an exponent: the
/// router echoes such an id when it refuses the request (JSON-RPC allows it, and the sender
/// can match it), though `parse` refuses it in a response to the conductor.
fn refusal_of_an_odd_id(frame: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Refusal<'a> {
        jsonrpc: &'a str,
        #[serde(borrow)]
        id: &'a RawValue,
        #[serde(borrow)]
        error: &'a RawValue,
    }
    let refusal: Refusal<'_> = serde_json::from_slice(frame).ok()?;
    let id = refusal.id.get();
    let number = id.starts_with(|c: char| c == '-' || c.is_ascii_digit());
    let odd = id.contains(['.', 'e', 'E']);
    (refusal.jsonrpc == "2.0" && refusal.error.get().starts_with('{') && number && odd)
        .then(|| id.to_string())
}

/// The conductor's answer to a shim's hello, the one line toward a shim that is not JSON-RPC.
fn is_welcome(frame: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(frame)
        .is_ok_and(|v| v.get("mcpBridge").is_some_and(serde_json::Value::is_string))
}

/// A request (`id`) or notification with `params` (JSON text), wrapped in `proxy/successor`
/// when `wrapped`.
fn call(id: Option<&str>, method: &str, params: &str, wrapped: bool) -> Bytes {
    let params = RawValue::from_string(params.to_string()).ok();
    let params = params.as_deref();
    let call = if wrapped {
        Call::Wrapped {
            via: Dialect::Rfd.successor_method(),
            method,
            params,
            meta: EnvelopeMeta::default(),
        }
    } else {
        Call::Plain { method, params }
    };
    let mut out = Vec::new();
    encode::call(&mut out, id, call);
    Bytes::from(out)
}

fn pick_from<T>(items: &[T], pick: usize) -> Option<&T> {
    (!items.is_empty()).then(|| &items[pick % items.len()])
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// Every input of the committed seed corpus (hand-written scenarios and what fuzzing
    /// found), so `cargo test` on stable checks the target's invariants on them.
    #[test]
    fn seed_corpus_holds() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/router");
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        inputs.sort();
        assert!(inputs.len() >= 20, "the seed corpus is missing");
        for input in inputs {
            let data = std::fs::read(&input).expect("a corpus file");
            let name = input.display().to_string();
            std::panic::catch_unwind(|| super::router(&data))
                .unwrap_or_else(|_| panic!("{name} breaks an invariant"));
        }
    }
}
