//! A remote agent: the conductor's `[agent] url` reaching an agent served by the official
//! SDK's HTTP/WebSocket server (`test-remote-agent`) on loopback, over WebSocket and over
//! Streamable HTTP. A whole session (streamed updates, a permission request answered by the
//! editor, a cancelled turn) through a local proxy; a server that drops mid-prompt; restart
//! reconnecting; an unreachable URL; headers reaching the server and nowhere else. And the two
//! halves together: an agent and a shared proxy served by `acp-conductor serve`.

use std::time::{Duration, Instant};

use acp_conductor_tests::editor::{Editor, patience, prompt_params};
use acp_conductor_tests::remote_server::RemoteServer;
use acp_conductor_tests::test_chain::toml_string;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::{Value, json};

const SCHEMES: [&str; 2] = ["ws", "http"];
const FAILED: &str = "_acp-conductor/component_failed";
const RESTARTED: &str = "_acp-conductor/component_restarted";

fn permission_answer(request: &Value) -> Result<Value, Value> {
    assert_eq!(request["method"], "session/request_permission", "{request}");
    Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow" } }))
}

fn is_chunk(message: &Value, text: &str) -> bool {
    message["method"] == "session/update" && message["params"]["update"]["content"]["text"] == text
}

#[test]
fn a_remote_agent_runs_a_whole_session_behind_a_local_proxy() {
    let binaries = binaries!();
    for scheme in SCHEMES {
        let server = RemoteServer::start(&binaries, &[]);
        let mut chain = TestChain::with_test_proxies(&binaries, &format!("remote-{scheme}"), 1);
        chain.use_remote_agent(&server.url(scheme), &[]);
        let mut editor = chain.launch();
        let init = editor.initialize();
        assert_eq!(init["protocolVersion"], 1, "{scheme}: {init}");
        let session = editor.new_session();
        assert!(session.starts_with("remote-"), "{scheme}: {session}");

        let exchange = editor.prompt(&session, "stream 3");
        assert_eq!(exchange.result()["stopReason"], "end_turn", "{scheme}");
        assert_eq!(
            exchange.chunk_texts(),
            ["chunk 1", "chunk 2", "chunk 3"],
            "{scheme}"
        );

        let exchange = editor.request_answering(
            "session/prompt",
            prompt_params(&session, "permission"),
            permission_answer,
        );
        assert_eq!(
            exchange.requests.len(),
            1,
            "{scheme}: {:?}",
            exchange.requests
        );
        assert_eq!(
            exchange.requests[0]["params"]["sessionId"],
            session.as_str()
        );
        assert_eq!(
            exchange.chunk_texts(),
            ["permission selected allow"],
            "{scheme}"
        );
        assert_eq!(exchange.result()["stopReason"], "end_turn", "{scheme}");

        let id = editor.start_request("session/prompt", prompt_params(&session, "wait"));
        editor.wait_for(|m| is_chunk(m, "waiting"));
        editor.notify("session/cancel", json!({ "sessionId": session }));
        let exchange = editor.finish_request(&id, acp_conductor_tests::editor::refuse);
        assert_eq!(exchange.result()["stopReason"], "cancelled", "{scheme}");

        // The proxy saw the agent's side of the session, wrapped as from its successor.
        let proxy_saw = chain.received("p1");
        assert!(
            proxy_saw
                .iter()
                .any(|m| m["params"]["method"] == "session/request_permission"),
            "{scheme}: {proxy_saw:?}"
        );
        let log = editor.stderr();
        assert!(
            log.contains(&format!("remote {}", server.url(scheme))),
            "{scheme}: {log}"
        );
        editor.close_stdin();
        assert!(
            editor.wait_exit().success(),
            "{scheme}: {}",
            editor.stderr()
        );
    }
}

#[test]
fn a_server_that_drops_mid_prompt_fails_the_prompt_naming_the_agent() {
    let binaries = binaries!();
    for scheme in SCHEMES {
        let mut server = RemoteServer::start(&binaries, &[]);
        let mut chain = TestChain::new(&binaries, &format!("remote-drop-{scheme}"));
        chain.use_remote_agent(&server.url(scheme), &[]);
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session();
        let exchange = editor.prompt(&session, "drop");
        assert_eq!(exchange.chunk_texts(), ["dropping"], "{scheme}");
        let error = exchange.error();
        assert_eq!(error["code"], -32001, "{scheme}: {error}");
        let message = error["message"].as_str().expect("a message");
        assert!(
            message.starts_with("agent `remote` "),
            "{scheme}: {message}"
        );
        assert!(message.contains(&server.url(scheme)), "{scheme}: {message}");
        assert_eq!(error["data"]["component"], "remote", "{scheme}");
        // The editor heard which component failed before the error.
        assert!(
            exchange
                .notifications
                .iter()
                .any(|n| n["method"] == FAILED && n["params"]["component"] == "remote"),
            "{scheme}: {:?}",
            exchange.notifications
        );
        assert_eq!(server.wait_exit(patience()).code(), Some(3));
        // Under `fail`, the chain is down: the conductor exits 1 on its own.
        assert_eq!(
            editor.wait_exit().code(),
            Some(1),
            "{scheme}: {}",
            editor.stderr()
        );
    }
}

#[test]
fn under_restart_a_dropped_remote_agent_is_reconnected() {
    let binaries = binaries!();
    for scheme in SCHEMES {
        let mut server = RemoteServer::start(&binaries, &[]);
        let port = server.port();
        let mut chain = TestChain::new(&binaries, &format!("remote-restart-{scheme}"));
        chain.use_remote_agent(&server.url(scheme), &[("on_failure", "\"restart\"")]);
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session();
        let exchange = editor.prompt(&session, "drop");
        let error = exchange.error();
        assert_eq!(error["code"], -32001, "{scheme}: {error}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("restarting it")),
            "{scheme}: {error}"
        );
        server.wait_exit(patience());
        // The same address comes back; the conductor connects again on its own.
        let _server = RemoteServer::start_on(&binaries, port, &[]);
        editor.wait_for(|m| m["method"] == RESTARTED && m["params"]["component"] == "remote");
        let session = editor.new_session();
        let exchange = editor.prompt(&session, "stream 1");
        assert_eq!(exchange.chunk_texts(), ["chunk 1"], "{scheme}");
        assert_eq!(exchange.result()["stopReason"], "end_turn", "{scheme}");
        editor.close_stdin();
        assert!(
            editor.wait_exit().success(),
            "{scheme}: {}",
            editor.stderr()
        );
    }
}

#[test]
fn an_unreachable_url_is_a_clear_error_without_a_hang() {
    let binaries = binaries!();
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    for scheme in SCHEMES {
        let url = format!("{scheme}://127.0.0.1:{port}/acp");
        let mut chain = TestChain::new(&binaries, &format!("remote-unreachable-{scheme}"));
        chain.use_remote_agent(&url, &[]);
        let started = Instant::now();
        let mut editor = chain.launch();
        let id = editor.start_request(
            "initialize",
            acp_conductor_tests::editor::initialize_params(),
        );
        let exchange = editor.finish_request(&id, acp_conductor_tests::editor::refuse);
        let error = exchange.error();
        assert_eq!(error["code"], -32001, "{scheme}: {error}");
        let message = error["message"].as_str().expect("a message");
        assert!(
            message.starts_with(&format!("agent `remote` could not connect to {url}")),
            "{scheme}: {message}"
        );
        assert!(message.contains("refused"), "{scheme}: {message}");
        assert_eq!(editor.wait_exit().code(), Some(1), "{scheme}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{scheme}: took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn headers_reach_the_server_and_never_the_log_or_the_trace() {
    let binaries = binaries!();
    let secret = "s3cr3t-t0ken-value";
    for scheme in SCHEMES {
        let server = RemoteServer::start(&binaries, &["--token", secret]);
        let mut chain = TestChain::new(&binaries, &format!("remote-headers-{scheme}"));
        let headers = format!(
            "{{ Authorization = {} }}",
            toml_string("Bearer ${REMOTE_TOKEN}")
        );
        chain.use_remote_agent(&server.url(scheme), &[("headers", &headers)]);
        let config = chain.write_config();
        let trace = chain.dir.join("trace.jsonl");
        let launch = |token: &str| {
            Editor::launch(
                &binaries.conductor,
                &[
                    "run".to_string(),
                    "--config".to_string(),
                    config.display().to_string(),
                    "--trace".to_string(),
                    trace.display().to_string(),
                ],
                &[("ACP_CONDUCTOR_LOG", "trace"), ("REMOTE_TOKEN", token)],
            )
        };
        // The right token: the server lets every request through.
        let mut editor = launch(secret);
        editor.initialize();
        let session = editor.new_session();
        let exchange = editor.prompt(&session, "stream 2");
        assert_eq!(exchange.chunk_texts(), ["chunk 1", "chunk 2"], "{scheme}");
        editor.close_stdin();
        assert!(
            editor.wait_exit().success(),
            "{scheme}: {}",
            editor.stderr()
        );
        let log = editor.stderr();
        assert!(
            !log.contains(secret),
            "{scheme}: the log shows the header: {log}"
        );
        let traced = std::fs::read_to_string(&trace).expect("the trace");
        assert!(traced.contains("chunk 2"), "{scheme}: {traced}");
        assert!(
            !traced.contains(secret),
            "{scheme}: the trace shows the header"
        );

        // Another token: refused by the server, and the error says so.
        let mut editor = launch("an0ther-t0ken");
        let id = editor.start_request(
            "initialize",
            acp_conductor_tests::editor::initialize_params(),
        );
        let exchange = editor.finish_request(&id, acp_conductor_tests::editor::refuse);
        let message = exchange.error()["message"]
            .as_str()
            .expect("a message")
            .to_owned();
        assert!(message.contains("401"), "{scheme}: {message}");
        assert!(!message.contains("an0ther-t0ken"), "{scheme}: {message}");
        assert_eq!(editor.wait_exit().code(), Some(1), "{scheme}");
    }
}

// The `serve` process helper of tests/serve.rs, which uses all of it; this file only part.
#[allow(dead_code)]
#[path = "serve/server.rs"]
mod server;

/// The text of the first prompt block of every `session/prompt` in `received`, wrapped in
/// `proxy/successor` or not.
fn prompts_in(received: &[Value]) -> Vec<String> {
    received
        .iter()
        .map(|m| match m["method"].as_str() {
            Some("proxy/successor" | "_proxy/successor") => &m["params"],
            _ => m,
        })
        .filter(|m| m["method"] == "session/prompt")
        .filter_map(|m| m["params"]["prompt"][0]["text"].as_str().map(str::to_owned))
        .collect()
}

/// One prompt from an editor through `chain`, which must answer it and then exit cleanly.
fn one_prompt(chain: &TestChain, text: &str, scheme: &str) {
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let exchange = editor.prompt(&session, text);
    assert_eq!(exchange.result()["stopReason"], "end_turn", "{scheme}");
    editor.close_stdin();
    assert!(
        editor.wait_exit().success(),
        "{scheme}: {}",
        editor.stderr()
    );
}

#[test]
fn a_chain_served_by_acp_conductor_serve_is_a_remote_agent() {
    let binaries = binaries!();
    for scheme in SCHEMES {
        let served = TestChain::new(&binaries, &format!("served-agent-{scheme}"));
        let server = server::Server::start(&served, &[]);
        let mut chain = TestChain::new(&binaries, &format!("to-served-agent-{scheme}"));
        chain.use_remote_agent(&format!("{scheme}://{}/acp", server.addr), &[]);
        one_prompt(&chain, "across two conductors", scheme);
        assert_eq!(
            prompts_in(&served.received(acp_conductor_tests::test_chain::AGENT)),
            ["across two conductors"],
            "{scheme}"
        );
    }
}

#[test]
fn a_shared_proxy_served_elsewhere_sits_in_a_local_chain() {
    let binaries = binaries!();
    for scheme in SCHEMES {
        // The served chain: a conductor in proxy mode holding one test-proxy.
        let mut served = TestChain::new(&binaries, &format!("shared-proxy-{scheme}"));
        served
            .without_agent()
            .conductor_setting("mode", "\"proxy\"");
        served.add_test_proxy("shared");
        let server = server::Server::start(&served, &[]);
        let mut chain = TestChain::new(&binaries, &format!("with-shared-proxy-{scheme}"));
        chain.add_remote_proxy("team", &format!("{scheme}://{}/acp", server.addr));
        one_prompt(&chain, "through the shared proxy", scheme);
        assert_eq!(
            prompts_in(&served.received("shared")),
            ["through the shared proxy"],
            "{scheme}"
        );
        assert_eq!(
            prompts_in(&chain.received(acp_conductor_tests::test_chain::AGENT)),
            ["through the shared proxy"],
            "{scheme}"
        );
    }
}

#[test]
fn a_request_the_server_refuses_is_answered_and_the_connection_goes_on() {
    let binaries = binaries!();
    let served = TestChain::new(&binaries, "served-refusing");
    let server = server::Server::start(&served, &[]);
    let url = format!("http://{}/acp", server.addr);
    let mut chain = TestChain::new(&binaries, "remote-refused");
    chain.use_remote_agent(&url, &[]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    // `serve` knows the sessions of its connection: this one's stream is refused, so the
    // prompt, whose answer would come on it, is answered by the conductor.
    let exchange = editor.prompt("no-such-session", "hello");
    let error = exchange.error();
    assert_eq!(error["code"], -32603, "{error}");
    let message = error["message"].as_str().expect("a message");
    assert_eq!(
        message,
        format!(
            "the request was not sent: {url} refused the stream of session no-such-session: \
             the server answered 404 Not Found: no such session"
        )
    );
    // Not a failure of the agent: the session it knows goes on.
    let exchange = editor.prompt(&session, "after the refusal");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}
