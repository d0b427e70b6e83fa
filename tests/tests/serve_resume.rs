//! Resumable streams (RFD "Durable & Resumable HTTP/WS Transport"): every SSE event carries a
//! cursor as its `id` and a stream reopened with `Last-Event-ID` gets what it missed, exactly
//! once and in order; a WebSocket that drops without a close frame keeps its chain for
//! `--resume-window` and an upgrade naming the connection and its cursor continues it; a
//! resume past the window or past the replay buffer gets 409 with a JSON-RPC error saying why.
//! The conductor's own remote client (`[agent] url`) resumes by itself after a network cut.

#[allow(dead_code)]
mod serve {
    pub mod admin;
    pub mod http;
    pub mod relay;
    pub mod remote;
    pub mod resume;
    pub mod server;
    pub mod sse;
    pub mod ws;
}

use std::time::{Duration, Instant};

use acp_conductor_tests::editor::{patience, prompt_params};
use acp_conductor_tests::processes::wait_until_gone;
use acp_conductor_tests::{TestChain, binaries};

use serve::admin::Admin;
use serve::relay::Relay;
use serve::resume::{
    TICKS, Turn, http_session, new_session_params, post_slow_prompt, read_ws_until, request,
    ws_session,
};
use serve::server::Server;
use serve::sse::SseStream;
use serve::ws as ws_client;

fn demo_chain(label: &str) -> TestChain {
    TestChain::with_demo_agent(&binaries!(), label)
}

#[test]
fn an_sse_stream_cut_mid_turn_resumes_with_last_event_id_and_misses_nothing() {
    let chain = demo_chain("resume-sse");
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let (remote, session, _connection_stream) = http_session(&server.http_url());
    let url = server.http_url();
    let connection = remote.connection_id.clone().unwrap();
    let mut stream = SseStream::open(&url, &connection, Some(&session), None).unwrap();
    post_slow_prompt(&remote, &session);

    let mut turn = Turn::default();
    let mut last = String::new();
    let mut ids = Vec::new();
    while turn.ticks.len() < 5 {
        let (id, message) = stream.next().expect("an event");
        turn.take(&message, 2);
        ids.push(id.parse::<u64>().expect("a numeric cursor"));
        last = id;
    }
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "cursors increase: {ids:?}"
    );
    // The server goes on writing into a stream nobody reads, then the network goes.
    std::thread::sleep(Duration::from_millis(600));
    stream.cut();

    let mut resumed = SseStream::open(&url, &connection, Some(&session), Some(&last))
        .unwrap_or_else(|refused| panic!("the resume is refused: {refused:?}"));
    while turn.answer.is_none() {
        let (id, message) = resumed.next().expect("an event");
        assert!(
            id.parse::<u64>().unwrap() > last.parse::<u64>().unwrap(),
            "nothing before the cursor again"
        );
        turn.take(&message, 2);
    }
    turn.assert_complete();
    let metrics = admin.metrics();
    assert_eq!(
        metrics.value(
            "acp_resumes_total",
            &[("profile", "http"), ("outcome", "resumed")]
        ),
        1.0
    );
}

#[test]
fn a_resume_from_before_the_replay_buffer_is_refused_with_409_and_says_why() {
    let chain = demo_chain("resume-buffer");
    let server = Server::start(
        &chain,
        &["--resume-buffer", "512", "--admin-listen", "127.0.0.1:0"],
    );
    let admin = Admin::of(&server);
    let (remote, session, _connection_stream) = http_session(&server.http_url());
    let url = server.http_url();
    let connection = remote.connection_id.clone().unwrap();
    let mut stream = SseStream::open(&url, &connection, Some(&session), None).unwrap();
    post_slow_prompt(&remote, &session);
    let (first, _) = stream.next().expect("an event");
    // More than 512 bytes of ticks go out unread (each is over 100 bytes).
    std::thread::sleep(Duration::from_millis(1500));
    stream.cut();

    let refused = SseStream::open(&url, &connection, Some(&session), Some(&first))
        .err()
        .expect("the resume is refused");
    assert_eq!(refused.status, 409, "{}", refused.body);
    let error = &refused.json()["error"];
    assert_eq!(error["code"], -32010, "{error}");
    assert_eq!(error["data"]["reason"], "buffer", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("dropped from the replay buffer"),
        "{error}"
    );

    // Malformed cursors are a bad request; a cursor never sent a conflict.
    for bad in ["-1", "01", "x", "3 4", "1.5"] {
        let refused = SseStream::open(&url, &connection, Some(&session), Some(bad))
            .err()
            .expect("refused");
        assert_eq!(refused.status, 400, "{bad:?}: {}", refused.body);
        assert_eq!(
            refused.json()["error"]["data"]["reason"],
            "malformed_cursor"
        );
    }
    let refused = SseStream::open(&url, &connection, Some(&session), Some("999999"))
        .err()
        .expect("refused");
    assert_eq!(refused.status, 409);
    assert_eq!(refused.json()["error"]["data"]["reason"], "unknown_cursor");
    let metrics = admin.metrics();
    let count = |outcome| {
        metrics.value(
            "acp_resumes_total",
            &[("profile", "http"), ("outcome", outcome)],
        )
    };
    assert_eq!(count("refused_buffer"), 1.0);
    assert_eq!(count("refused_cursor"), 6.0);
}

#[test]
fn a_websocket_cut_mid_turn_resumes_within_the_window_and_the_turn_completes() {
    use serve::remote::Remote;
    let chain = demo_chain("resume-ws");
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let (mut remote, session, mut read) = ws_session(&server.ws_url(), "bytes=1048576, seconds=60");
    remote.send(&request(
        2,
        "session/prompt",
        prompt_params(&session, "go slow"),
    ));
    let mut turn = Turn::default();
    read_ws_until(&mut remote, &mut turn, 5, &mut read);
    let connection = remote.connection_id.clone();
    std::thread::sleep(Duration::from_millis(600));
    remote.cut();
    std::thread::sleep(Duration::from_millis(300));

    let cursor = read.to_string();
    let mut resumed = ws_client::connect(
        &server.ws_url(),
        &[
            ("Acp-Connection-Id", &connection),
            ("Last-Event-ID", &cursor),
        ],
    )
    .expect("the resume is accepted");
    assert_eq!(resumed.connection_id, connection);
    assert_eq!(
        resumed.received,
        Some(3),
        "the server took all three requests"
    );
    read_ws_until(&mut resumed, &mut turn, TICKS + 1, &mut read);
    turn.assert_complete();
    // The connection goes on: another request is answered.
    resumed.send(&request(3, "session/new", new_session_params()));
    assert!(resumed.recv_within(patience())["result"]["sessionId"].is_string());
    let metrics = admin.metrics();
    assert_eq!(
        metrics.value(
            "acp_resumes_total",
            &[("profile", "websocket"), ("outcome", "resumed")]
        ),
        1.0
    );
    resumed.close();
}

#[test]
fn past_the_resume_window_the_chain_stops_and_a_resume_gets_409() {
    use serve::remote::Remote;
    let chain = demo_chain("resume-window");
    let server = Server::start(
        &chain,
        &["--resume-window", "1s", "--admin-listen", "127.0.0.1:0"],
    );
    let admin = Admin::of(&server);
    let (remote, _session, read) = ws_session(&server.ws_url(), "bytes=1048576, seconds=1");
    let connection = remote.connection_id.clone();
    let chain_processes = acp_conductor_tests::processes::descendants(server.pid());
    assert!(!chain_processes.is_empty(), "the chain runs");
    let cut = Instant::now();
    remote.cut();
    let left = wait_until_gone(&chain_processes, patience());
    assert!(
        left.is_empty(),
        "the chain stops after the window: {left:?}"
    );
    assert!(
        cut.elapsed() >= Duration::from_millis(900),
        "the chain waited for the window: {:?}",
        cut.elapsed()
    );
    let cursor = read.to_string();
    let refused = ws_client::connect(
        &server.ws_url(),
        &[
            ("Acp-Connection-Id", &connection),
            ("Last-Event-ID", &cursor),
        ],
    )
    .err();
    assert_eq!(refused, Some(409));
    let metrics = admin.metrics();
    assert_eq!(
        metrics.value(
            "acp_resumes_total",
            &[("profile", "websocket"), ("outcome", "refused_window")]
        ),
        1.0
    );
    assert_eq!(
        metrics.value("acp_connections_open", &[("profile", "websocket")]),
        0.0
    );
    // A connection closed with a close frame ends at once, as before.
    let (mut closing, _, _) = ws_session(&server.ws_url(), "bytes=1048576, seconds=1");
    closing.close();
}

/// How long a 5 s network cut costs a local conductor whose agent is served: the conductor
/// resumes both profiles by itself, the turn in flight completes with every update once, and
/// the time from the network coming back to the first missed update reaching the editor is
/// printed (docs/performance.md, "Resuming after a network cut").
#[test]
fn a_local_conductor_resumes_its_served_agent_after_a_5_s_network_cut() {
    const CUT: Duration = Duration::from_secs(5);
    for scheme in ["ws", "http"] {
        let far = demo_chain(&format!("resume-client-far-{scheme}"));
        let server = Server::start(&far, &["--admin-listen", "127.0.0.1:0"]);
        let admin = Admin::of(&server);
        let relay = Relay::to(&server.addr);
        let mut near = TestChain::new(&binaries!(), &format!("resume-client-near-{scheme}"));
        near.use_remote_agent(&format!("{scheme}://{}/acp", relay.addr), &[]);
        let mut editor = near.launch();
        editor.initialize();
        let session = editor.new_session();
        let id = editor.start_request("session/prompt", prompt_params(&session, "go slow"));
        let mut turn = Turn::default();
        let prompt_id = id.as_u64().expect("a numeric id");
        while turn.ticks.len() < 3 {
            turn.take(&editor.recv(), prompt_id);
        }
        relay.cut();
        // Over WebSocket, what the editor sends meanwhile waits for the resume.
        let during =
            (scheme == "ws").then(|| editor.start_request("session/new", new_session_params()));
        std::thread::sleep(CUT);
        let back = relay.restore();
        // What arrived before the cut reached the conductor.
        let first_missed = loop {
            let message = editor.recv();
            let before = turn.ticks.len();
            turn.take(&message, prompt_id);
            if turn.ticks.len() > before && turn.ticks.len() > 3 {
                break back.elapsed();
            }
        };
        let mut answered_during = None;
        while turn.answer.is_none() || answered_during.is_none() != during.is_none() {
            let message = editor.recv();
            if during.as_ref().is_some_and(|id| message["id"] == *id) {
                answered_during = Some(message.clone());
            }
            turn.take(&message, prompt_id);
        }
        turn.assert_complete();
        if let Some(answer) = answered_during {
            assert!(answer["result"]["sessionId"].is_string(), "{answer}");
        }
        eprintln!("{scheme}: the first missed update {first_missed:?} after the network came back");
        assert!(
            first_missed < Duration::from_secs(3),
            "{scheme}: resumed {first_missed:?} after the network came back"
        );
        let profile = if scheme == "ws" { "websocket" } else { "http" };
        assert!(
            admin.metrics().value(
                "acp_resumes_total",
                &[("profile", profile), ("outcome", "resumed")]
            ) >= 1.0
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
fn a_websocket_waiting_for_its_client_counts_as_open_and_a_drain_closes_it_at_once() {
    let chain = demo_chain("resume-drain");
    let mut server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let (remote, session, _) = ws_session(&server.ws_url(), "bytes=1048576, seconds=60");
    let mut remote = remote;
    {
        use serve::remote::Remote;
        remote.send(&request(
            2,
            "session/prompt",
            prompt_params(&session, "go slow"),
        ));
    }
    let chain_processes = acp_conductor_tests::processes::descendants(server.pid());
    remote.cut();
    let metrics = admin.wait_until(|m| m.value("acp_requests_in_flight", &[]) == 1.0);
    assert_eq!(
        metrics.value("acp_connections_open", &[("profile", "websocket")]),
        1.0,
        "a connection waiting for its client is open"
    );
    let drained = Instant::now();
    assert_eq!(admin.post("/drain").0, 202);
    let status = server
        .exited_within(patience())
        .expect("serve exits once the waiting connection is closed");
    assert!(status.success(), "{status:?}");
    assert!(
        drained.elapsed() < Duration::from_secs(30),
        "the drain did not wait for the 60 s window: {:?}",
        drained.elapsed()
    );
    assert!(wait_until_gone(&chain_processes, patience()).is_empty());
    assert!(
        server
            .stderr()
            .contains("not resumed (draining): closing the connection"),
        "{}",
        server.stderr()
    );
}

#[test]
fn the_idle_timeout_still_ends_a_websocket_waiting_for_its_client() {
    let chain = demo_chain("resume-idle");
    let server = Server::start(&chain, &["--idle-timeout", "1s", "--resume-window", "60s"]);
    let (remote, _session, _) = ws_session(&server.ws_url(), "bytes=1048576, seconds=60");
    let chain_processes = acp_conductor_tests::processes::descendants(server.pid());
    let cut = Instant::now();
    remote.cut();
    assert!(
        wait_until_gone(&chain_processes, patience()).is_empty(),
        "the chain stops at the idle timeout"
    );
    assert!(
        cut.elapsed() < Duration::from_secs(20),
        "well before the window: {:?}",
        cut.elapsed()
    );
}
