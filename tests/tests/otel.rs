//! `[conductor] otlp`: spans over OTLP/HTTP, received by an in-test collector. A prompt
//! through two proxies to a remote agent is a tree of spans, one per request per hop, each
//! hop's span a child of the one before and the editor's request the root, continuing the
//! editor's `traceparent`; notifications are events; no secret of the config is in any
//! attribute or event. A collector that hangs or is gone never slows a prompt: spans are
//! dropped and counted (`acp_otlp_spans_dropped_total` under `serve`).

mod collector {
    pub mod otlp;
}
// Shared with serve.rs, which uses all of it.
#[allow(dead_code)]
mod serve {
    pub mod admin;
    pub mod http;
    pub mod remote;
    pub mod server;
    pub mod ws;
}

use std::collections::HashMap;
use std::time::{Duration, Instant};

use acp_conductor_tests::editor::{Reply, prompt_params, refuse};
use acp_conductor_tests::remote_server::RemoteServer;
use acp_conductor_tests::test_chain::toml_string;
use acp_conductor_tests::{Editor, TestChain, binaries};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{Value, json};

use collector::otlp::{Collector, black_hole, unreachable};
use serve::admin::Admin;
use serve::server::Server;

/// The value of an `env` entry of the first proxy, and of a header of the remote agent.
const ENV_SECRET: &str = "s3cr3t-env-otel-4711";
const HEADER_SECRET: &str = "s3cr3t-header-otel-0815";
/// The editor's own span: its trace continues in ours.
const EDITOR_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const EDITOR_SPAN: &str = "00f067aa0ba902b7";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<Any> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.clone())
}

fn text(span: &Span, key: &str) -> String {
    match attribute(span, key) {
        Some(Any::StringValue(text)) => text,
        other => panic!("{key} of {} is {other:?}", span.name),
    }
}

fn number(span: &Span, key: &str) -> i64 {
    match attribute(span, key) {
        Some(Any::IntValue(n)) => n,
        other => panic!("{key} of {} is {other:?}", span.name),
    }
}

fn permission(request: &Value) -> Reply {
    match request["method"].as_str() {
        Some("session/request_permission") => {
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow" } }))
        }
        _ => refuse(request),
    }
}

/// Editor, proxies `p1` (a secret in its `env`) and `p2`, and the remote test agent (a
/// secret in its `headers`), exporting to `otlp`.
fn chain(label: &str, server: &RemoteServer, otlp: Option<&str>) -> TestChain {
    let mut chain = TestChain::with_test_proxies(&binaries!(), label, 2);
    chain.proxies[0].setting(
        "env",
        &format!("{{ API_TOKEN = {} }}", toml_string(ENV_SECRET)),
    );
    let headers = format!("{{ X-Api-Key = {} }}", toml_string(HEADER_SECRET));
    chain.use_remote_agent(&server.url("ws"), &[("headers", &headers)]);
    if let Some(otlp) = otlp {
        chain.conductor_setting("otlp", &toml_string(otlp));
    }
    chain
}

fn launch(chain: &TestChain, env: &[(&str, &str)]) -> Editor {
    let config = chain.write_config();
    let args = [
        "run".to_string(),
        "--config".to_string(),
        config.display().to_string(),
    ];
    let mut envs = vec![("ACP_CONDUCTOR_LOG", "info")];
    envs.extend_from_slice(env);
    Editor::launch(&chain.binaries.conductor, &args, &envs)
}

#[test]
fn a_prompt_through_three_hops_is_one_trace_of_spans_continuing_the_editor_and_keeping_secrets_out()
{
    let collector = Collector::start();
    let server = RemoteServer::start(&binaries!(), &[]);
    let chain = chain("otel-tree", &server, Some(&collector.url));
    // The configuration wins over the environment.
    let mut editor = launch(&chain, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &unreachable())]);
    editor.initialize();
    let session = editor.new_session();
    let mut params = prompt_params(&session, "permission");
    params["_meta"] = json!({
        "traceparent": format!("00-{EDITOR_TRACE}-{EDITOR_SPAN}-01"),
        "tracestate": "editor=1",
    });
    let turn = editor.request_answering("session/prompt", params, permission);
    assert_eq!(turn.result()["stopReason"], "end_turn", "{}", turn.response);
    assert_eq!(turn.requests.len(), 1, "the permission reached the editor");
    // A turn that waits, with notifications of the editor's on it: one named after each
    // secret (what a notification's event is called), then the cancel.
    let waiting = editor.start_request("session/prompt", prompt_params(&session, "wait"));
    editor.wait_for(|m| m["params"]["update"]["content"]["text"] == "waiting");
    for secret in [ENV_SECRET, HEADER_SECRET] {
        editor.notify(&format!("_note/{secret}"), json!({ "sessionId": session }));
    }
    editor.notify("session/cancel", json!({ "sessionId": session }));
    let cancelled = editor.finish_request(&waiting, refuse);
    assert_eq!(cancelled.result()["stopReason"], "cancelled");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());

    collector.wait_until("the prompt's spans", |got| {
        got.spans
            .iter()
            .filter(|s| hex(&s.trace_id) == EDITOR_TRACE)
            .count()
            >= 7
    });
    let (spans, bodies, services, refused) = collector.with(|got| {
        (
            got.spans.clone(),
            got.bodies.clone(),
            got.services.clone(),
            got.refused.clone(),
        )
    });
    assert!(refused.is_empty(), "{refused:?}");
    assert!(
        services.iter().all(|s| s.contains("acp-conductor")),
        "{services:?}"
    );

    // The editor's prompt: the root continues the editor's span; each hop's copy is a child
    // of the previous hop's, down to the agent.
    let traced: Vec<&Span> = spans
        .iter()
        .filter(|s| hex(&s.trace_id) == EDITOR_TRACE)
        .collect();
    let by_id: HashMap<String, &Span> = traced.iter().map(|s| (hex(&s.span_id), *s)).collect();
    let prompt_at = |link: &str| {
        traced
            .iter()
            .find(|s| s.name == "session/prompt" && text(s, "acp.link") == link)
            .unwrap_or_else(|| panic!("no prompt span at {link}: {traced:#?}"))
    };
    let root = prompt_at("editor");
    assert_eq!(hex(&root.parent_span_id), EDITOR_SPAN);
    assert!(
        root.trace_state.contains("editor=1"),
        "{}",
        root.trace_state
    );
    let p1 = prompt_at("p1");
    let p2 = prompt_at("p2");
    let agent = prompt_at("remote");
    assert_eq!(p1.parent_span_id, root.span_id);
    assert_eq!(p2.parent_span_id, p1.span_id);
    assert_eq!(agent.parent_span_id, p2.span_id);
    for (span, position) in [(root, 0), (p1, 1), (p2, 2), (agent, 3)] {
        assert_eq!(number(span, "acp.link.position"), position);
        assert_eq!(text(span, "rpc.method"), "session/prompt");
        assert_eq!(text(span, "acp.session.id"), session);
        assert_eq!(text(span, "acp.outcome"), "result");
        assert!(number(span, "acp.request.bytes") > 0);
        assert!(number(span, "acp.response.bytes") > 0);
        assert!(span.start_time_unix_nano <= span.end_time_unix_nano);
        assert!(root.start_time_unix_nano <= span.start_time_unix_nano);
        assert!(span.end_time_unix_nano <= root.end_time_unix_nano);
    }
    // The agent's request travels up the chain, each copy a child of the one it came from,
    // the first a child of the prompt at the agent's hop.
    let ask_at = |link: &str| {
        traced
            .iter()
            .find(|s| s.name == "session/request_permission" && text(s, "acp.link") == link)
            .unwrap_or_else(|| panic!("no permission span at {link}: {traced:#?}"))
    };
    assert_eq!(ask_at("p2").parent_span_id, agent.span_id);
    assert_eq!(ask_at("p1").parent_span_id, ask_at("p2").span_id);
    assert_eq!(ask_at("editor").parent_span_id, ask_at("p1").span_id);
    // Every span of the trace hangs from the root.
    for span in &traced {
        let mut at = *span;
        while at.span_id != root.span_id {
            at = by_id
                .get(&hex(&at.parent_span_id))
                .unwrap_or_else(|| panic!("{} has no parent in the trace", span.name));
        }
    }
    // The agent's updates are events on the prompt's span at each hop.
    for span in [agent, p2, p1] {
        assert!(
            span.events.iter().any(|e| e.name == "session/update"),
            "{}: {:?}",
            text(span, "acp.link"),
            span.events
        );
    }

    // The waiting turn: cancelled, with the editor's notifications as events on its root.
    let wait_root = spans
        .iter()
        .filter(|s| s.name == "session/prompt" && text(s, "acp.link") == "editor")
        .find(|s| s.span_id != root.span_id)
        .expect("the second prompt's root");
    assert_eq!(text(wait_root, "acp.outcome"), "cancelled");
    let names: Vec<&str> = wait_root.events.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains(&"_note/[redacted]"), "{names:?}");
    assert!(names.contains(&"session/cancel"), "{names:?}");

    // No secret anywhere in what was sent.
    for secret in [ENV_SECRET, HEADER_SECRET] {
        for body in &bodies {
            assert!(
                !body.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} was exported"
            );
        }
    }
}

#[test]
fn the_environment_names_the_collector_when_the_configuration_does_not() {
    let collector = Collector::start();
    let mut chain = TestChain::with_test_proxies(&binaries!(), "otel-env", 1);
    chain.agent_args(&["--updates", "2"]);
    let mut editor = launch(&chain, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)]);
    editor.initialize();
    let session = editor.new_session();
    assert_eq!(
        editor.prompt(&session, "hello").result()["stopReason"],
        "end_turn"
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
    collector.wait_until("the prompt's spans", |got| {
        got.spans.iter().any(|s| s.name == "session/prompt")
    });
    let spans = collector.with(|got| got.spans.clone());
    let root = spans
        .iter()
        .find(|s| s.name == "session/prompt" && text(s, "acp.link") == "editor")
        .expect("the root");
    assert!(root.parent_span_id.is_empty(), "a trace of its own");
    let updates = spans
        .iter()
        .find(|s| s.name == "session/prompt" && text(s, "acp.link") == "agent")
        .expect("the agent's hop")
        .events
        .iter()
        .filter(|e| e.name == "session/update")
        .count();
    assert_eq!(updates, 2);
}

#[test]
fn a_collector_that_hangs_never_slows_a_prompt_and_the_run_still_ends_in_bounded_time() {
    let (hole, _held) = black_hole();
    let mut chain = TestChain::with_test_proxies(&binaries!(), "otel-hang", 2);
    chain.agent_args(&["--updates", "50"]);
    chain.conductor_setting("otlp", &toml_string(&hole));
    let mut editor = launch(&chain, &[]);
    editor.initialize();
    let session = editor.new_session();
    // Twenty turns of 50 updates through 3 hops, their spans exported while they run: an
    // export waits up to 10 s for the collector, and no turn waits for an export.
    for turn in 0..20 {
        let started = Instant::now();
        let exchange = editor.prompt(&session, &format!("turn {turn}"));
        assert_eq!(exchange.result()["stopReason"], "end_turn");
        assert_eq!(exchange.chunk_texts().len(), 50);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "turn {turn} took {:?}",
            started.elapsed()
        );
    }
    editor.close_stdin();
    let closed = Instant::now();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
    // The end waits a bounded time for the last spans (3 s), not for the collector.
    assert!(
        closed.elapsed() < Duration::from_secs(8),
        "{:?}",
        closed.elapsed()
    );
}

#[test]
fn under_serve_spans_a_gone_collector_cannot_take_are_dropped_and_counted() {
    let mut chain = TestChain::new(&binaries!(), "otel-serve-drop");
    chain.agent_args(&["--updates", "3"]);
    chain.add_test_proxy("guard");
    chain.conductor_setting("otlp", &toml_string(&unreachable()));
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    assert_eq!(
        admin.metrics().value("acp_otlp_spans_dropped_total", &[]),
        0.0
    );
    let mut client = serve::remote::Client::new(
        serve::ws::connect(&server.ws_url(), &[]).expect("a WebSocket connection"),
    );
    serve::remote::full_session(&mut client);
    let metrics = admin.wait_until(|m| m.value("acp_otlp_spans_dropped_total", &[]) > 0.0);
    assert!(metrics.value("acp_otlp_spans_dropped_total", &[]) >= 4.0);
    assert!(
        server.stderr().contains("OpenTelemetry:") && server.stderr().contains("spans dropped"),
        "{}",
        server.stderr()
    );
}
