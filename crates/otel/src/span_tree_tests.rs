//! The span tree on made-up chains: parent links across hops, the editor's trace continued,
//! notifications as events, outcomes, redaction, bounds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::Value;
use opentelemetry::trace::TraceId;

use super::*;

/// Ids 1, 2, 3… so that tests can name them.
#[derive(Debug, Default)]
struct CountingIds(AtomicU64);

impl IdGenerator for CountingIds {
    fn new_trace_id(&self) -> TraceId {
        TraceId::from(u128::from(self.0.fetch_add(1, Ordering::Relaxed) + 1) << 64)
    }
    fn new_span_id(&self) -> SpanId {
        SpanId::from(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

const EDITOR: LinkId = LinkId(0);
const P1: LinkId = LinkId(1);
const P2: LinkId = LinkId(2);
const AGENT: LinkId = LinkId(3);

struct Chain {
    spans: ChainSpans,
    start: Instant,
    ended: Vec<SpanData>,
}

impl Chain {
    fn new(secrets: &[&str]) -> Chain {
        let secrets: Vec<String> = secrets.iter().map(|s| s.to_string()).collect();
        let redactor = Redactor::new(&secrets, &[]).unwrap().map(Arc::new);
        let start = Instant::now();
        let mut chain = Chain {
            spans: ChainSpans::new(Clock::now(), Arc::new(CountingIds::default()), redactor),
            start,
            ended: Vec::new(),
        };
        for (link, name, position) in [
            (EDITOR, "editor", 0),
            (P1, "p1", 1),
            (P2, "p2", 2),
            (AGENT, "agent", 3),
        ] {
            chain.item(Item::Link {
                link,
                name: name.into(),
                position: Some(position),
            });
        }
        chain
    }

    fn item(&mut self, item: Item) {
        self.spans.item(item, &mut self.ended);
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn frame(&mut self, ms: u64, link: LinkId, dir: Dir, line: &str, route: Route) {
        let at = self.at(ms);
        self.item(Item::Message(Message {
            at,
            link,
            dir,
            frame: Frame::Line(Bytes::from(line.to_owned())),
            route,
        }));
    }

    fn request_in(&mut self, ms: u64, link: LinkId, line: &str, to: LinkId, id: u64) {
        let route = Route {
            forwarded: Some((to, id)),
            ..Route::default()
        };
        self.frame(ms, link, Dir::In, line, route);
    }

    fn response_in(&mut self, ms: u64, link: LinkId, line: &str) {
        self.frame(ms, link, Dir::In, line, Route::default());
    }

    fn out(&mut self, ms: u64, link: LinkId, line: &str) {
        self.frame(ms, link, Dir::Out, line, Route::default());
    }

    fn named(&self, link: &str, method: &str) -> &SpanData {
        self.ended
            .iter()
            .find(|span| {
                attribute(span, attr::LINK) == Some(Value::from(link.to_owned()))
                    && span.name == method
            })
            .unwrap_or_else(|| panic!("no span {method} at {link} in {:#?}", self.ended))
    }
}

fn attribute(span: &SpanData, key: &str) -> Option<Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

const PROMPT: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;

/// The editor's prompt through two proxies to the agent and back, with an update on the way.
fn prompt_through_three_hops(chain: &mut Chain, prompt: &str) {
    chain.request_in(0, EDITOR, prompt, P1, 1);
    let wrapped = r#"{"jsonrpc":"2.0","id":"a","method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}"#;
    chain.request_in(1, P1, wrapped, P2, 2);
    let wrapped_b = wrapped.replace(r#""id":"a""#, r#""id":"b""#);
    chain.request_in(2, P2, &wrapped_b, AGENT, 3);
    let update =
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
    chain.frame(3, AGENT, Dir::In, update, Route::default());
    chain.frame(4, P2, Dir::In, update, Route::default());
    chain.response_in(
        5,
        AGENT,
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
    );
    chain.out(
        5,
        P2,
        r#"{"jsonrpc":"2.0","id":"b","result":{"stopReason":"end_turn"}}"#,
    );
    chain.response_in(
        6,
        P2,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
    );
    chain.out(
        6,
        P1,
        r#"{"jsonrpc":"2.0","id":"a","result":{"stopReason":"end_turn"}}"#,
    );
    chain.response_in(
        7,
        P1,
        r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
    );
    chain.out(
        8,
        EDITOR,
        r#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#,
    );
}

#[test]
fn each_hop_is_a_child_of_the_one_before_and_the_editor_request_is_the_root() {
    let mut chain = Chain::new(&[]);
    prompt_through_three_hops(&mut chain, PROMPT);
    assert_eq!(chain.ended.len(), 4, "{:#?}", chain.ended);
    let root = chain.named("editor", "session/prompt");
    let p1 = chain.named("p1", "session/prompt");
    let p2 = chain.named("p2", "session/prompt");
    let agent = chain.named("agent", "session/prompt");
    assert_eq!(root.parent_span_id, SpanId::INVALID);
    assert_eq!(root.span_kind, SpanKind::Server);
    assert_eq!(p1.parent_span_id, root.span_context.span_id());
    assert_eq!(p2.parent_span_id, p1.span_context.span_id());
    assert_eq!(agent.parent_span_id, p2.span_context.span_id());
    for span in [p1, p2, agent] {
        assert_eq!(span.span_context.trace_id(), root.span_context.trace_id());
        assert_eq!(span.span_kind, SpanKind::Client);
        assert_eq!(attribute(span, attr::OUTCOME), Some("result".into()));
        assert_eq!(attribute(span, attr::SESSION), Some("s1".into()));
        assert_eq!(attribute(span, attr::METHOD), Some("session/prompt".into()));
    }
    assert_eq!(attribute(p2, attr::POSITION), Some(2.into()));
    // Times: the root spans the whole turn, each hop lies within its parent.
    let ms = |span: &SpanData| {
        (
            span.start_time.duration_since(root.start_time).unwrap(),
            span.end_time.duration_since(root.start_time).unwrap(),
        )
    };
    assert_eq!(ms(root).1, Duration::from_millis(8));
    assert_eq!(
        ms(agent),
        (Duration::from_millis(2), Duration::from_millis(5))
    );
    // The agent's update is an event on the agent's hop; its copy from p2 on p2's hop.
    assert_eq!(agent.events.len(), 1);
    assert_eq!(agent.events.events[0].name, "session/update");
    assert_eq!(p2.events.len(), 1);
    assert!(root.events.is_empty() && p1.events.is_empty());
    assert_eq!(chain.spans.open(), 0);
}

#[test]
fn the_editor_traceparent_is_continued() {
    let mut chain = Chain::new(&[]);
    let prompt = r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[],"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"}}}"#;
    prompt_through_three_hops(&mut chain, prompt);
    let root = chain.named("editor", "session/prompt");
    assert_eq!(
        root.span_context.trace_id(),
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap()
    );
    assert_eq!(
        root.parent_span_id,
        SpanId::from_hex("00f067aa0ba902b7").unwrap()
    );
    assert!(root.parent_span_is_remote);
    assert_eq!(root.span_context.trace_state().get("k"), Some("v"));
    let agent = chain.named("agent", "session/prompt");
    assert_eq!(agent.span_context.trace_id(), root.span_context.trace_id());
    assert!(!agent.parent_span_is_remote);
}

#[test]
fn a_request_from_the_agent_is_a_child_of_the_prompt_it_asks_about_and_travels_up() {
    let mut chain = Chain::new(&[]);
    chain.request_in(0, EDITOR, PROMPT, P1, 1);
    chain.request_in(
        1,
        P1,
        r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{"sessionId":"s1"}}"#,
        AGENT,
        2,
    );
    // The agent asks for permission: to p1 first, then p1 asks the editor.
    let ask = r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1"}}"#;
    chain.request_in(2, AGENT, ask, P1, 3);
    chain.request_in(3, P1, ask, EDITOR, 4);
    chain.response_in(4, EDITOR, r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
    chain.out(4, P1, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
    chain.response_in(5, P1, r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    chain.out(5, AGENT, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
    let to_p1 = chain.named("p1", "session/request_permission");
    let to_editor = chain.named("editor", "session/request_permission");
    assert_eq!(to_editor.parent_span_id, to_p1.span_context.span_id());
    assert_eq!(to_editor.span_kind, SpanKind::Client);
    // The prompt is still open; its hop to the agent is the permission's parent.
    chain.item(Item::End {
        at: chain.at(9),
        reason: String::new(),
    });
    let to_p1 = chain.named("p1", "session/request_permission");
    let agent_prompt = chain.named("agent", "session/prompt");
    assert_eq!(to_p1.parent_span_id, agent_prompt.span_context.span_id());
    assert_eq!(
        to_p1.span_context.trace_id(),
        agent_prompt.span_context.trace_id()
    );
    assert_eq!(
        attribute(agent_prompt, attr::OUTCOME),
        Some("unanswered".into())
    );
}

#[test]
fn what_the_core_answers_ends_the_copy_still_open_with_that_outcome() {
    let mut chain = Chain::new(&[]);
    chain.request_in(0, EDITOR, PROMPT, P1, 1);
    // p1 never answers; the core answers the editor when p1 misses its request_timeout.
    chain.out(
        9,
        EDITOR,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"proxy `p1` failed: did not answer `session/prompt` within 1 s"}}"#,
    );
    assert_eq!(chain.ended.len(), 2);
    for span in &chain.ended {
        assert_eq!(attribute(span, attr::OUTCOME), Some("timeout".into()));
        assert_eq!(attribute(span, attr::ERROR_CODE), Some((-32001).into()));
        assert!(matches!(span.status, Status::Error { .. }));
    }
}

#[test]
fn outcomes_are_read_from_the_answer() {
    let cases = [
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Outcome::Result),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}"#,
            Outcome::Cancelled,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"cancelled"}}"#,
            Outcome::Cancelled,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
            Outcome::Error(-32601),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"agent exited"}}"#,
            Outcome::Error(-32001),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"did not answer initialize within its startup_timeout"}}"#,
            Outcome::Timeout(-32001),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
            Outcome::Error(-32603),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#, Outcome::Result),
    ];
    for (line, outcome) in cases {
        assert_eq!(Outcome::of_response(line.as_bytes()), outcome, "{line}");
    }
}

#[test]
fn a_cancel_passed_on_marks_the_copy_cancelled() {
    let mut chain = Chain::new(&[]);
    chain.request_in(0, EDITOR, PROMPT, AGENT, 1);
    let cancel = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#;
    let route = Route {
        cancels: Some((AGENT, 1)),
        ..Route::default()
    };
    chain.frame(1, EDITOR, Dir::In, cancel, route);
    chain.response_in(
        2,
        AGENT,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"stopped"}}"#,
    );
    let hop = chain.named("agent", "session/prompt");
    assert_eq!(attribute(hop, attr::OUTCOME), Some("cancelled".into()));
}

#[test]
fn no_secret_reaches_an_attribute_or_an_event() {
    let secret = "sk-live-0123456789";
    let mut chain = Chain::new(&[secret]);
    let prompt = PROMPT.replace("s1", secret);
    chain.request_in(0, EDITOR, &prompt, AGENT, 1);
    let update = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{secret}"}}}}"#
    );
    chain.frame(1, AGENT, Dir::In, &update, Route::default());
    chain.item(Item::End {
        at: chain.at(2),
        reason: String::new(),
    });
    assert_eq!(chain.ended.len(), 2);
    let text = format!("{:?}", chain.ended);
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains(acp_trace::REDACTED));
    // And no payload: the prompt's text is not there.
    assert!(!text.contains("\"prompt\""));
}

#[test]
fn notifications_without_an_open_span_are_dropped_and_the_open_count_is_bounded() {
    let mut chain = Chain::new(&[]);
    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}"#;
    chain.frame(0, AGENT, Dir::In, update, Route::default());
    assert!(chain.ended.is_empty());
    assert_eq!(chain.spans.open(), 0);
    for n in 0..(MAX_OPEN as u64 + 10) {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"x","params":{{}}}}"#);
        chain.request_in(n, EDITOR, &line, AGENT, n);
    }
    assert!(chain.spans.open() <= MAX_OPEN);
    assert_eq!(chain.spans.skipped, 10 + MAX_OPEN as u64 / 2);
    // Events past the bound are counted, not kept.
    let mut chain = Chain::new(&[]);
    chain.request_in(0, EDITOR, PROMPT, AGENT, 1);
    for ms in 0..(MAX_EVENTS as u64 + 3) {
        chain.frame(ms, AGENT, Dir::In, update, Route::default());
    }
    chain.response_in(9, AGENT, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let hop = chain.named("agent", "session/prompt");
    assert_eq!(hop.events.len(), MAX_EVENTS);
    assert_eq!(hop.events.dropped_count, 3);
}
