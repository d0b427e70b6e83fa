//! `serve` draining for a rolling deploy: on SIGTERM (or `POST /drain`) `/readyz` turns 503 at
//! once and no new connection is admitted, connections with no turn in flight close cleanly, a
//! turn in flight finishes and then its connection closes, and `serve` exits 0; past
//! `--drain-timeout`, or at a second SIGTERM, what is left is answered -32002.

#[allow(dead_code)]
mod serve {
    pub mod admin;
    pub mod http;
    pub mod remote;
    pub mod server;
    pub mod turns;
    pub mod ws;
}

use std::time::{Duration, Instant};

use acp_conductor_tests::editor::patience;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::json;

use serve::admin::Admin;
use serve::http::HttpRemote;
use serve::remote::Client;
use serve::server::Server;
use serve::turns::{answer_to, finish_permission_turn, start_hanging_turn, start_permission_turn};
use serve::ws::{self as ws_client, WsRemote};

fn chain(label: &str) -> TestChain {
    let mut chain = TestChain::new(&binaries!(), label);
    chain.agent_args(&["--updates", "2"]);
    chain
}

fn ws(server: &Server) -> Client<WsRemote> {
    Client::new(ws_client::connect(&server.ws_url(), &[]).expect("the upgrade is accepted"))
}

#[test]
fn sigterm_lets_the_turn_in_flight_finish_closes_idle_connections_and_exits_0() {
    let chain = chain("drain-sigterm");
    let mut server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let mut busy = ws(&server);
    let (prompt, asked) = start_permission_turn(&mut busy);
    let mut idle = ws(&server);
    idle.initialize();

    server.signal_term();
    admin.wait_for("/readyz", 503);
    assert_eq!(admin.get("/readyz").1, "draining\n");
    assert_eq!(admin.get("/healthz").0, 200);
    assert!(
        idle.remote.closed_within(patience()),
        "a connection with no turn in flight is closed"
    );
    assert_eq!(
        ws_client::connect(&server.ws_url(), &[]).err(),
        Some(503),
        "no new connection while draining"
    );
    let metrics = admin.wait_until(|m| m.value("acp_chains", &[("state", "draining")]) == 1.0);
    assert_eq!(metrics.value("acp_draining", &[]), 1.0);
    assert_eq!(metrics.value("acp_chains", &[("state", "running")]), 0.0);
    assert_eq!(metrics.value("acp_requests_in_flight", &[]), 1.0);
    assert_eq!(
        metrics.value("acp_connections_refused_total", &[("reason", "draining")]),
        1.0
    );
    assert!(
        server.exited_within(Duration::from_millis(300)).is_none(),
        "serve waits for the turn"
    );

    let answer = finish_permission_turn(&mut busy, &prompt, &asked);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        busy.remote.closed_within(patience()),
        "closed once its turn is over"
    );
    let status = server.exited_within(patience()).expect("serve exits");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
}

#[test]
fn post_drain_lets_an_http_turn_finish_through_its_posts_and_exits_0() {
    let chain = chain("drain-post-http");
    let mut server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let mut busy = Client::new(HttpRemote::new(&server.http_url(), &[]));
    let (prompt, asked) = start_permission_turn(&mut busy);

    assert_eq!(admin.post("/drain"), (202, "draining\n".to_string()));
    assert_eq!(admin.get("/readyz").0, 503, "503 at once");
    let mut opening = HttpRemote::new(&server.http_url(), &[]);
    let posted = opening.post_raw(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": acp_conductor_tests::editor::initialize_params()}).to_string(),
        "application/json",
        None,
    );
    assert_eq!(posted.status, 503, "{}", posted.body);
    opening.connection_id = None;

    // The permission's answer is one more POST on the draining server.
    let answer = finish_permission_turn(&mut busy, &prompt, &asked);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let status = server.exited_within(patience()).expect("serve exits");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
}

#[test]
fn past_the_drain_timeout_what_is_left_is_answered_32002_and_serve_exits_0() {
    let chain = chain("drain-timeout");
    let mut server = Server::start(&chain, &["--drain-timeout", "1s"]);
    let mut client = ws(&server);
    let prompt = start_hanging_turn(&mut client);
    let signalled = Instant::now();
    server.signal_term();
    let answer = answer_to(&mut client, &prompt);
    assert!(
        signalled.elapsed() >= Duration::from_secs(1),
        "answered after {:?}",
        signalled.elapsed()
    );
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "the conductor received SIGTERM and is shutting down"
    );
    let status = server.exited_within(patience()).expect("serve exits");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
}

#[test]
fn a_second_sigterm_stops_at_once() {
    let chain = chain("drain-twice");
    let mut server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let mut client = ws(&server);
    let prompt = start_hanging_turn(&mut client);
    server.signal_term();
    admin.wait_for("/readyz", 503);
    let signalled = Instant::now();
    server.signal_term();
    let answer = answer_to(&mut client, &prompt);
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
    let status = server.exited_within(patience()).expect("serve exits");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(
        signalled.elapsed() < Duration::from_secs(30),
        "not the 5 minutes of --drain-timeout"
    );
}
