//! `serve --admin-listen`: `/healthz`, `/readyz` (503 at `--max-connections`), `/metrics` read
//! by a Prometheus text parser with every family present and moving as sessions run over both
//! profiles, and the admin listener under the same token rule as the endpoint (the probes
//! aside).

// Shared with serve.rs, which uses all of it.
#[allow(dead_code)]
mod serve {
    pub mod admin;
    pub mod http;
    pub mod remote;
    pub mod server;
    pub mod ws;
}

use acp_conductor_tests::{TestChain, binaries};

use serve::admin::Admin;
use serve::http::HttpRemote;
use serve::remote::{Client, full_session};
use serve::server::{Server, refused};
use serve::ws as ws_client;

fn chain(label: &str) -> TestChain {
    let mut chain = TestChain::new(&binaries!(), label);
    chain.agent_args(&["--updates", "3"]);
    chain.add_test_proxy("guard");
    chain
}

#[test]
fn healthz_and_readyz_answer_and_readyz_is_503_at_max_connections() {
    let chain = chain("admin-ready");
    let server = Server::start(
        &chain,
        &["--admin-listen", "127.0.0.1:0", "--max-connections", "1"],
    );
    let admin = Admin::of(&server);
    assert_eq!(admin.get("/healthz"), (200, "ok\n".to_string()));
    assert_eq!(admin.get("/readyz"), (200, "ready\n".to_string()));
    let mut client = Client::new(ws_client::connect(&server.ws_url(), &[]).unwrap());
    client.initialize();
    assert_eq!(
        admin.get("/readyz"),
        (503, "at --max-connections\n".to_string())
    );
    assert_eq!(admin.get("/healthz").0, 200, "still alive");
    assert_eq!(
        ws_client::connect(&server.ws_url(), &[]).err(),
        Some(503),
        "over the limit"
    );
    let metrics = admin.metrics();
    assert_eq!(
        metrics.value(
            "acp_connections_refused_total",
            &[("reason", "connection_limit")]
        ),
        1.0
    );
    use serve::remote::Remote;
    client.remote.close();
    admin.wait_for("/readyz", 200);
}

#[test]
fn metrics_families_are_present_and_move_with_sessions_over_both_profiles() {
    let chain = chain("admin-metrics");
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let before = admin.metrics();
    for family in [
        "acp_connections_open",
        "acp_connections_opened_total",
        "acp_connections_refused_total",
        "acp_chains",
        "acp_messages_total",
        "acp_message_bytes_total",
        "acp_queued_bytes",
        "acp_links_paused",
        "acp_requests_in_flight",
        "acp_draining",
        "acp_otlp_spans_dropped_total",
    ] {
        assert!(before.has(family), "{family} is missing:\n{}", before.text);
    }
    assert_eq!(before.value("acp_chains", &[("state", "running")]), 0.0);

    let mut ws = Client::new(ws_client::connect(&server.ws_url(), &[]).unwrap());
    full_session(&mut ws);
    let mut http = Client::new(HttpRemote::new(&server.http_url(), &[]));
    full_session(&mut http);

    let during = admin.metrics();
    for profile in ["websocket", "http"] {
        let labels = [("profile", profile)];
        assert_eq!(during.value("acp_connections_opened_total", &labels), 1.0);
        assert_eq!(during.value("acp_connections_open", &labels), 1.0);
    }
    assert_eq!(during.value("acp_chains", &[("state", "running")]), 2.0);
    for link in ["editor", "proxy", "agent"] {
        for direction in ["in", "out"] {
            let labels = [("link", link), ("direction", direction)];
            assert!(
                during.value("acp_messages_total", &labels) > 0.0,
                "no {link} {direction} messages:\n{}",
                during.text
            );
            assert!(
                during.value("acp_message_bytes_total", &labels)
                    > during.value("acp_messages_total", &labels),
                "bytes of {link} {direction}"
            );
        }
    }
    for component in ["guard", "agent"] {
        assert_eq!(
            during.value(
                "acp_component_events_total",
                &[
                    ("component", component),
                    ("kind", "native"),
                    ("event", "started")
                ]
            ),
            2.0,
            "{component}:\n{}",
            during.text
        );
    }
    // Each session prompted three times (one cancelled): the histogram by method.
    let prompts = during.histogram_count("acp_request_duration_seconds", "session/prompt");
    assert_eq!(prompts, 6.0, "{}", during.text);
    assert_eq!(
        during.histogram_count("acp_request_duration_seconds", "initialize"),
        2.0
    );
    assert_eq!(during.value("acp_requests_in_flight", &[]), 0.0);
    assert!(
        !during.text.contains("sessionId") && !during.text.contains(&ws.remote.connection_id),
        "no session or connection id in a label"
    );

    use serve::remote::Remote;
    ws.remote.close();
    http.remote.close();
    let after = admin.wait_until(|m| m.value("acp_chains", &[("state", "running")]) == 0.0);
    for profile in ["websocket", "http"] {
        assert_eq!(
            after.value("acp_connections_open", &[("profile", profile)]),
            0.0
        );
    }
    assert_eq!(after.value("acp_queued_bytes", &[]), 0.0);
}

#[test]
fn a_method_outside_acp_is_counted_as_other() {
    let chain = chain("admin-other");
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let mut client = Client::new(ws_client::connect(&server.ws_url(), &[]).unwrap());
    client.initialize();
    client.request_answering("_acme/secret-name-123", serde_json::json!({}), |r| {
        panic!("unexpected {r}")
    });
    let metrics = admin.metrics();
    assert_eq!(
        metrics.histogram_count("acp_request_duration_seconds", "other"),
        1.0,
        "{}",
        metrics.text
    );
    assert!(!metrics.text.contains("secret-name"), "{}", metrics.text);
}

#[test]
fn the_admin_listener_takes_the_token_rule_of_the_endpoint() {
    let chain = chain("admin-token");
    let config = chain.write_config();
    let conductor = &chain.binaries.conductor;
    let (status, stderr) = refused(
        conductor,
        &[
            "serve".into(),
            "--config".into(),
            config.display().to_string(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--admin-listen".into(),
            "0.0.0.0:0".into(),
        ],
    );
    assert_eq!(status.code(), Some(78), "{stderr}");
    assert!(stderr.contains("--admin-listen 0.0.0.0:0"), "{stderr}");
    assert!(stderr.contains("--token-file"), "{stderr}");

    let token = chain.dir.join("token");
    std::fs::write(&token, "admin-s3cret\n").unwrap();
    let token_arg = token.display().to_string();
    let server = Server::start(
        &chain,
        &["--admin-listen", "127.0.0.1:0", "--token-file", &token_arg],
    );
    let admin = Admin::of(&server);
    assert_eq!(admin.get("/metrics").0, 401);
    assert_eq!(admin.post("/drain").0, 401, "no drain without the token");
    // Probes carry no secret: they tell only alive and ready.
    assert_eq!(admin.get("/healthz").0, 200);
    assert_eq!(
        admin.get("/readyz").0,
        200,
        "still ready: the drain was refused"
    );
    let with_token = admin.with_token("admin-s3cret");
    assert_eq!(with_token.get("/healthz").0, 200);
    let metrics = with_token.metrics();
    assert_eq!(
        metrics.value(
            "acp_connections_refused_total",
            &[("reason", "unauthorized")]
        ),
        2.0
    );
}

#[test]
fn component_failures_restarts_and_bypasses_are_counted_by_name() {
    let mut chain = TestChain::new(&binaries!(), "admin-components");
    chain
        .add_test_proxy("guard")
        .setting("on_failure", "\"bypass\"");
    chain
        .add_test_proxy("again")
        .setting("on_failure", "\"restart\"");
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let mut client = Client::new(ws_client::connect(&server.ws_url(), &[]).unwrap());
    client.initialize();
    for proxy in ["guard", "again"] {
        // SAFETY: kill(2) on a process of the test's own chain.
        unsafe {
            libc::kill(chain.pid(proxy) as libc::pid_t, libc::SIGKILL);
        }
    }
    let event = |m: &serve::admin::Metrics, component: &str, event: &str| {
        m.value(
            "acp_component_events_total",
            &[("component", component), ("event", event)],
        )
    };
    let metrics = admin.wait_until(|m| {
        m.text.contains("event=\"bypassed\"") && m.text.contains("event=\"restarted\"")
    });
    assert_eq!(event(&metrics, "guard", "failed"), 1.0, "{}", metrics.text);
    assert_eq!(event(&metrics, "guard", "bypassed"), 1.0);
    assert_eq!(event(&metrics, "again", "failed"), 1.0);
    assert_eq!(event(&metrics, "again", "restarted"), 1.0);
}
