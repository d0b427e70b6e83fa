//! Property: under any interleaving of editor requests, answers in any order (repeated ones
//! too), cancels and a component failing, the editor gets exactly one response per request.
//!
//! Each case plays a random list of acts against a chain from the harness (0 or 1 proxy and
//! an agent) on the harness's made-up clock, letting the router settle after
//! every act. The model knows each editor request by a token carried in its params and echoed
//! in every answer a component gives, so a response is matched to the very request it answers.
//! At the end a SIGTERM answers whatever is still waiting: an entry left in an id table for a
//! request already answered would show up as a second response. Editor ids come from a small
//! pool (numbers including 0 and past 2^53, strings with escapes, null), so the same id is
//! often in flight twice, as JSON-RPC does not forbid: the router keeps one entry per request,
//! never one per id, so each copy must still get its own answer.
//!
//! `PROPTEST_CASES=N cargo test -p acp-router tests::properties` runs more cases.

use std::time::Duration;

use acp_wire::{Envelope, IdKey, Outcome, RawValue};
use bytes::Bytes;
use proptest::prelude::*;
use serde_json::Value;

use super::harness::{Chain, Peer, Spec};
use crate::Input;

/// Ids the editor picks from: duplicates are meant to happen. (Fractional and `null` ids are
/// refused at the door, before any routing: `admission.rs` and `bad_input.rs` test that.)
const IDS: &[&str] = &[
    "0",
    "1",
    "-1",
    "9007199254740993",
    "18446744073709551616",
    r#""0""#,
    r#""a""#,
    r#""\u0061""#,
    r#""a\"b""#,
    r#""\\""#,
    r#""é""#,
    r#""""#,
];

#[derive(Debug, Clone)]
enum Act {
    /// The editor sends a request with this id.
    Request(String),
    /// The first hop answers the `pick`th request it holds itself.
    FirstHopAnswers { pick: usize, error: bool },
    /// The proxy passes the `pick`th request it holds on to the agent, wrapped.
    ProxyForwards(usize),
    /// The agent answers the `pick`th request it holds.
    AgentAnswers { pick: usize, error: bool },
    /// The agent, or the proxy, sends one of its earlier answers again.
    Repeat { proxy: bool, pick: usize },
    /// A component answers an id the router never used.
    Stray(&'static str),
    /// The editor cancels its `pick`th request, naming the id as sent or written another way.
    Cancel { pick: usize, rewritten: bool },
    /// The proxy or the agent closes its output, or exits.
    Fail { proxy: bool, exit: bool },
    /// Time passes (a closed output counts as a failure after a grace).
    Wait,
}

fn act() -> impl Strategy<Value = Act> {
    let id = prop_oneof![
        4 => prop::sample::select(IDS).prop_map(str::to_string),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => "[a\"\\\\é\n]{0,3}".prop_map(|s| serde_json::to_string(&s).expect("a string")),
    ];
    prop_oneof![
        5 => id.prop_map(Act::Request),
        3 => (any::<usize>(), any::<bool>())
            .prop_map(|(pick, error)| Act::FirstHopAnswers { pick, error }),
        3 => any::<usize>().prop_map(Act::ProxyForwards),
        4 => (any::<usize>(), any::<bool>())
            .prop_map(|(pick, error)| Act::AgentAnswers { pick, error }),
        1 => (any::<bool>(), any::<usize>()).prop_map(|(proxy, pick)| Act::Repeat { proxy, pick }),
        1 => prop::sample::select(&["0", "999", r#""1""#, "-1", "1.5"][..]).prop_map(Act::Stray),
        2 => (any::<usize>(), any::<bool>())
            .prop_map(|(pick, rewritten)| Act::Cancel { pick, rewritten }),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(proxy, exit)| Act::Fail { proxy, exit }),
        1 => Just(Act::Wait),
    ]
}

/// A request the editor sent, known by its token.
#[derive(Debug)]
struct Sent {
    id: String,
    /// The router read it (it was still running), so it must be answered.
    counted: bool,
}

/// What an answer the editor got says about itself.
#[derive(Debug)]
struct Got {
    id: String,
    /// The token a component echoed; `None` for an error the router made itself.
    token: Option<usize>,
}

/// A component's end as the model plays it.
struct Side {
    peer: Peer,
    closed: bool,
    /// Requests it holds: (the id it got them with, their token).
    held: Vec<(String, usize)>,
    answers: Vec<String>,
    /// Requests it passed on: (its own id, the id of the request held).
    forwarded: Vec<(String, String)>,
    next_id: u64,
}

impl Side {
    fn new(peer: Peer) -> Side {
        Side {
            peer,
            closed: false,
            held: Vec::new(),
            answers: Vec::new(),
            forwarded: Vec::new(),
            next_id: 500,
        }
    }

    fn send(&mut self, text: String) {
        if !self.closed {
            self.peer.send(&text);
        }
    }

    fn answer(&mut self, pick: usize, error: bool) {
        if self.closed || self.held.is_empty() {
            return;
        }
        let (id, token) = self.held.remove(pick % self.held.len());
        let text = answer_text(&id, token, error);
        self.answers.push(text.clone());
        self.send(text);
    }
}

fn answer_text(id: &str, token: usize, error: bool) -> String {
    if error {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32800,"message":"cancelled","data":{{"k":{token}}}}}}}"#
        )
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"k":{token}}}}}"#)
    }
}

/// The token a request's params or an answer's result or error data carries.
fn token(payload: &RawValue) -> Option<usize> {
    let v: Value = serde_json::from_str(payload.get()).ok()?;
    let k = v.get("k").or_else(|| v.get("data")?.get("k"))?;
    k.as_u64().map(|k| k as usize)
}

struct Model {
    chain: Chain,
    editor_sent: Vec<Sent>,
    editor_got: Vec<Got>,
    proxy: Option<Side>,
    agent: Side,
    /// The id key of the cancel the editor just sent, while the router settles.
    cancelling: Option<IdKey>,
    /// Whether the first hop got that cancel.
    cancel_arrived: bool,
}

impl Model {
    fn new(proxies: usize) -> Model {
        let mut chain = Spec::new(proxies).start();
        // The harness keeps the peers in its chain; the model takes them over.
        let agent = Side::new(chain.agent.take().expect("an agent"));
        let proxy = chain.proxies.pop().map(Side::new);
        Model {
            chain,
            editor_sent: Vec::new(),
            editor_got: Vec::new(),
            proxy,
            agent,
            cancelling: None,
            cancel_arrived: false,
        }
    }

    fn running(&self) -> bool {
        !self.chain.finished()
    }

    fn first_hop(&mut self) -> &mut Side {
        self.proxy.as_mut().unwrap_or(&mut self.agent)
    }

    fn play(&mut self, act: &Act) {
        match act {
            Act::Request(id) => {
                let token = self.editor_sent.len();
                self.editor_sent.push(Sent {
                    id: id.clone(),
                    counted: self.running(),
                });
                self.chain.editor.send(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"k":{token}}}}}"#
                ));
            }
            Act::FirstHopAnswers { pick, error } => self.first_hop().answer(*pick, *error),
            Act::ProxyForwards(pick) => {
                let Some(proxy) = self.proxy.as_mut().filter(|p| !p.closed) else {
                    return;
                };
                if proxy.held.is_empty() {
                    return;
                }
                let (held, token) = proxy.held[pick % proxy.held.len()].clone();
                let own = proxy.next_id.to_string();
                proxy.next_id += 1;
                proxy.forwarded.push((own.clone(), held));
                proxy.send(format!(
                    r#"{{"jsonrpc":"2.0","id":{own},"method":"proxy/successor","params":{{"method":"session/prompt","params":{{"k":{token}}}}}}}"#
                ));
            }
            Act::AgentAnswers { pick, error } => self.agent.answer(*pick, *error),
            Act::Repeat { proxy, pick } => {
                let side = match self.proxy.as_mut() {
                    Some(p) if *proxy => p,
                    _ => &mut self.agent,
                };
                if !side.answers.is_empty() {
                    let text = side.answers[pick % side.answers.len()].clone();
                    side.send(text);
                }
            }
            Act::Stray(id) => {
                let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stray":true}}}}"#);
                self.first_hop().send(text);
            }
            Act::Cancel { pick, rewritten } => {
                if self.editor_sent.is_empty() {
                    return;
                }
                let id = &self.editor_sent[pick % self.editor_sent.len()].id;
                let named = if *rewritten {
                    written_otherwise(id)
                } else {
                    id.clone()
                };
                let raw = RawValue::from_string(named.clone()).expect("an id is JSON");
                self.cancelling = Some(IdKey::of(&raw));
                self.cancel_arrived = false;
                // The router still holds a request with that id on the first hop's link
                // exactly when the first hop holds one and no failure answered it.
                let key = IdKey::of(&raw);
                let failed = self.editor_got.iter().any(|g| g.token.is_none());
                let hop = self.proxy.as_ref().unwrap_or(&self.agent);
                let expected = self.running()
                    && !failed
                    && hop
                        .held
                        .iter()
                        .any(|(_, token)| key_of_token(&self.editor_sent, *token) == key);
                self.chain.editor.send(&format!(
                    r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{named}}}}}"#
                ));
                self.settle();
                assert_eq!(
                    self.cancel_arrived, expected,
                    "a cancel naming {named} reached the first hop, or failed to"
                );
                self.cancelling = None;
            }
            Act::Fail { proxy, exit } => {
                let side = match self.proxy.as_mut() {
                    Some(p) if *proxy => p,
                    _ => &mut self.agent,
                };
                if *exit {
                    let link = side.peer.id;
                    self.chain.report(Input::Exited {
                        link,
                        status: None,
                        reason: "exited with status 1".into(),
                        stderr_tail: Vec::new(),
                    });
                } else if !side.closed {
                    side.peer.close();
                    side.closed = true;
                }
            }
            Act::Wait => self.chain.sleep(Duration::from_millis(600)),
        }
    }

    /// Lets the router and the link loops run until all wait, then takes in what each side
    /// got; again while the proxy reacted (relaying an answer, passing a cancel on).
    fn settle(&mut self) {
        loop {
            self.chain.sleep(Duration::from_millis(1));
            while let Some(frame) = self.chain.editor.try_recv() {
                self.editor_gets(&frame);
            }
            let mut reacted = false;
            if let Some(proxy) = self.proxy.as_mut() {
                while let Some(frame) = proxy.peer.try_recv() {
                    reacted |= proxy_gets(
                        proxy,
                        &frame,
                        &self.editor_sent,
                        &self.cancelling,
                        &mut self.cancel_arrived,
                    );
                }
            }
            let first_hop_is_agent = self.proxy.is_none();
            while let Some(frame) = self.agent.peer.try_recv() {
                let text = String::from_utf8_lossy(&frame).into_owned();
                match acp_wire::parse(&frame) {
                    Ok(Envelope::Request { id, params, .. }) => {
                        let token = params.and_then(token).expect("a request carries its token");
                        self.agent.held.push((id.get().to_string(), token));
                    }
                    Ok(Envelope::Notification {
                        method: "$/cancel_request",
                        params,
                    }) => {
                        let cancelled = cancelled_id(params);
                        check_cancel(
                            &self.agent.held,
                            &cancelled,
                            &self.editor_sent,
                            &self.cancelling,
                        );
                        if first_hop_is_agent {
                            self.cancel_arrived = true;
                        }
                    }
                    _ => panic!("the agent got {text}"),
                }
            }
            if !reacted {
                return;
            }
        }
    }

    fn editor_gets(&mut self, frame: &Bytes) {
        let text = String::from_utf8_lossy(frame);
        let Ok(Envelope::Response { id, outcome }) = acp_wire::parse(frame) else {
            panic!("the editor got something other than a response: {text}");
        };
        let token = match outcome {
            Outcome::Result(r) | Outcome::Error(r) => token(r),
        };
        self.editor_got.push(Got {
            id: id.get().to_string(),
            token,
        });
    }

    /// Every request the router read got one answer, carrying its id and, when a component
    /// answered, its token; nothing else reached the editor.
    fn check_answers(&self) {
        let mut ids: Vec<&str> = self.editor_sent.iter().map(|s| s.id.as_str()).collect();
        ids.extend(self.editor_got.iter().map(|g| g.id.as_str()));
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let tokens: Vec<usize> = (0..self.editor_sent.len())
                .filter(|&t| self.editor_sent[t].counted && self.editor_sent[t].id == id)
                .collect();
            let got: Vec<&Got> = self.editor_got.iter().filter(|g| g.id == id).collect();
            assert_eq!(
                got.len(),
                tokens.len(),
                "id {id}: requests {tokens:?}, answers {got:?}"
            );
            let mut echoed: Vec<usize> = got.iter().filter_map(|g| g.token).collect();
            echoed.sort_unstable();
            let before = echoed.len();
            echoed.dedup();
            assert_eq!(echoed.len(), before, "id {id}: a request answered twice");
            for t in echoed {
                assert!(
                    tokens.contains(&t),
                    "id {id} answered with the token of request {t}, sent as {}",
                    self.editor_sent[t].id
                );
            }
        }
    }
}

/// The proxy takes in a frame; true if it sent something in reply.
fn proxy_gets(
    proxy: &mut Side,
    frame: &Bytes,
    editor_sent: &[Sent],
    cancelling: &Option<IdKey>,
    cancel_arrived: &mut bool,
) -> bool {
    let text = String::from_utf8_lossy(frame).into_owned();
    match acp_wire::parse(frame) {
        Ok(Envelope::Request { id, params, .. }) => {
            let token = params.and_then(token).expect("a request carries its token");
            proxy.held.push((id.get().to_string(), token));
            false
        }
        Ok(Envelope::Notification {
            method: "$/cancel_request",
            params,
        }) => {
            *cancel_arrived = true;
            let cancelled = cancelled_id(params);
            check_cancel(&proxy.held, &cancelled, editor_sent, cancelling);
            // Passes the cancel on for the request it made of the agent, if it did.
            let Some((own, _)) = proxy.forwarded.iter().find(|(_, h)| *h == cancelled) else {
                return false;
            };
            let own = own.clone();
            proxy.send(format!(
                r#"{{"jsonrpc":"2.0","method":"proxy/successor","params":{{"method":"$/cancel_request","params":{{"requestId":{own}}}}}}}"#
            ));
            !proxy.closed
        }
        Ok(Envelope::Response { id, outcome }) => {
            let at = proxy
                .forwarded
                .iter()
                .position(|(own, _)| own == id.get())
                .unwrap_or_else(|| panic!("the proxy got an answer to nothing it asked: {text}"));
            let (_, held) = proxy.forwarded.remove(at);
            // A proxy that closed its output can relay nothing: it still holds the request.
            let Some(at) = proxy
                .held
                .iter()
                .position(|(h, _)| *h == held)
                .filter(|_| !proxy.closed)
            else {
                return false;
            };
            let (held, token) = proxy.held.remove(at);
            let error = matches!(outcome, Outcome::Error(_));
            let relayed = match outcome {
                Outcome::Result(r) | Outcome::Error(r) => token_or(r, token),
            };
            let answer = answer_text(&held, relayed, error);
            proxy.answers.push(answer.clone());
            proxy.send(answer);
            true
        }
        _ => panic!("the proxy got {text}"),
    }
}

/// The token an answer carries, or (for an error the router made) the request's own.
fn token_or(payload: &RawValue, held_token: usize) -> usize {
    token(payload).unwrap_or(held_token)
}

fn cancelled_id(params: Option<&RawValue>) -> String {
    let v: Value = serde_json::from_str(params.expect("cancel params").get()).expect("JSON");
    v["requestId"].to_string()
}

/// A cancel names a request its receiver holds, one the editor sent with the id cancelled.
fn check_cancel(
    held: &[(String, usize)],
    cancelled: &str,
    editor_sent: &[Sent],
    cancelling: &Option<IdKey>,
) {
    let key = cancelling
        .as_ref()
        .unwrap_or_else(|| panic!("a cancel for {cancelled} that the editor did not send"));
    let Some((_, token)) = held.iter().find(|(id, _)| id == cancelled) else {
        panic!("a cancel for {cancelled}, which its receiver does not hold");
    };
    assert_eq!(
        &key_of_token(editor_sent, *token),
        key,
        "the cancel reached a request the editor did not cancel"
    );
}

fn key_of_token(editor_sent: &[Sent], token: usize) -> IdKey {
    IdKey::of(&RawValue::from_string(editor_sent[token].id.clone()).expect("an id is JSON"))
}

/// The same id written another way: a string with every character escaped; a number as it is
/// (numbers match by their literal).
fn written_otherwise(id: &str) -> String {
    match serde_json::from_str::<String>(id) {
        Ok(s) => {
            let escaped: String = s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            format!("\"{escaped}\"")
        }
        Err(_) => id.to_string(),
    }
}

fn play(proxies: usize, acts: &[Act]) {
    let mut model = Model::new(proxies);
    for act in acts {
        model.play(act);
        model.settle();
    }
    // Whatever still waits is answered now; an entry left behind for a request already
    // answered would be answered a second time.
    if model.running() {
        model.chain.report(Input::Signal("SIGTERM"));
    }
    model.settle();
    model.check_answers();
    model.chain.finish();
}

/// `PROPTEST_CASES` when set, else `default`: quick under `cargo test`, longer on demand.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn every_editor_request_gets_exactly_one_answer(
        proxies in 0usize..=1,
        acts in prop::collection::vec(act(), 1..40),
    ) {
        play(proxies, &acts);
    }
}
