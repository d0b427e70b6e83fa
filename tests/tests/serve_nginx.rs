//! Two `serve` replicas behind a real nginx running docs/deploy/nginx/acp.conf: sessions over
//! both profiles through it (WebSocket upgrades passed on, Streamable HTTP routed by
//! `Acp-Connection-Id` to the replica that holds the connection, SSE unbuffered); a replica
//! stopped with SIGTERM mid-turn finishes its turns (their last POSTs still reach it) while
//! every new connection goes to the other, and exits 0; a client stream dropped mid-turn
//! resumes through nginx on the replica that holds its connection, over both profiles.

#[allow(dead_code)]
mod serve {
    pub mod admin;
    pub mod http;
    pub mod nginx;
    pub mod remote;
    pub mod resume;
    pub mod server;
    pub mod sse;
    pub mod turns;
    pub mod ws;
}

use acp_conductor_tests::editor::patience;
use acp_conductor_tests::{TestChain, binaries};

use serve::admin::Admin;
use serve::http::HttpRemote;
use serve::nginx::Nginx;
use serve::remote::{Client, full_session};
use serve::resume::{Turn, http_session, post_slow_prompt, read_ws_until, request, ws_session};
use serve::server::Server;
use serve::sse::SseStream;
use serve::turns::{finish_permission_turn, start_permission_turn};
use serve::ws::{self as ws_client, WsRemote};

const REPLICAS: [&str; 2] = ["r1", "r2"];

fn chain(label: &str) -> TestChain {
    let mut chain = TestChain::new(&binaries!(), label);
    chain.agent_args(&["--updates", "3"]);
    chain
}

/// Both replicas of `chain`, and nginx in front of them.
fn replicas_behind_nginx(chain: &TestChain) -> ([Server; 2], Nginx) {
    let start =
        |name: &str| Server::start(chain, &["--replica", name, "--admin-listen", "127.0.0.1:0"]);
    let servers = [start(REPLICAS[0]), start(REPLICAS[1])];
    let nginx = Nginx::start(&chain.dir, [&servers[0].addr, &servers[1].addr]);
    (servers, nginx)
}

fn replica_of(connection_id: &str) -> usize {
    let name = connection_id
        .split_once('-')
        .unwrap_or_else(|| panic!("no replica in {connection_id}"))
        .0;
    REPLICAS
        .iter()
        .position(|r| *r == name)
        .unwrap_or_else(|| panic!("unknown replica {name}"))
}

fn ws(nginx: &Nginx) -> Client<WsRemote> {
    Client::new(ws_client::connect(&nginx.ws_url(), &[]).expect("the upgrade passes nginx"))
}

fn http(nginx: &Nginx) -> Client<HttpRemote> {
    Client::new(HttpRemote::new(&nginx.http_url(), &[]))
}

fn http_replica(client: &Client<HttpRemote>) -> usize {
    replica_of(client.remote.connection_id.as_deref().expect("connected"))
}

#[test]
fn sessions_over_both_profiles_run_through_nginx_on_either_replica() {
    let chain = chain("nginx-sessions");
    let (_servers, nginx) = replicas_behind_nginx(&chain);
    let mut seen = [false; 2];
    for _ in 0..2 {
        let mut client = ws(&nginx);
        full_session(&mut client);
        seen[replica_of(&client.remote.connection_id)] = true;
        let mut client = http(&nginx);
        full_session(&mut client);
        seen[http_replica(&client)] = true;
    }
    assert_eq!(seen, [true, true], "nginx spreads new connections");
}

#[test]
fn a_replica_stopped_mid_turn_finishes_its_turns_while_new_connections_go_to_the_other() {
    let chain = chain("nginx-drain");
    let (mut servers, nginx) = replicas_behind_nginx(&chain);
    // A Streamable HTTP turn in flight, and a WebSocket one on the same replica.
    let mut over_http = http(&nginx);
    let (http_prompt, http_asked) = start_permission_turn(&mut over_http);
    let stopping = http_replica(&over_http);
    let other = 1 - stopping;
    let mut over_ws = loop {
        let client = ws(&nginx);
        if replica_of(&client.remote.connection_id) == stopping {
            break client;
        }
    };
    let (ws_prompt, ws_asked) = start_permission_turn(&mut over_ws);

    servers[stopping].signal_term();
    let admin = Admin::of(&servers[stopping]);
    admin.wait_for("/readyz", 503);

    for _ in 0..3 {
        let mut client = ws(&nginx);
        client.initialize();
        assert_eq!(replica_of(&client.remote.connection_id), other);
        let mut client = http(&nginx);
        client.initialize();
        assert_eq!(http_replica(&client), other);
    }

    // The draining replica still takes the turns' last messages, routed by connection id.
    let answer = finish_permission_turn(&mut over_http, &http_prompt, &http_asked);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let answer = finish_permission_turn(&mut over_ws, &ws_prompt, &ws_asked);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let status = servers[stopping]
        .exited_within(patience())
        .expect("the drained replica exits");
    assert!(
        status.success(),
        "{status:?}\n{}",
        servers[stopping].stderr()
    );

    // The other goes on serving.
    let mut client = ws(&nginx);
    full_session(&mut client);
    assert_eq!(replica_of(&client.remote.connection_id), other);
}

#[test]
fn a_dropped_client_stream_resumes_through_nginx_on_its_replica() {
    use acp_conductor_tests::editor::prompt_params;
    use serve::remote::Remote;
    let chain = TestChain::with_demo_agent(&binaries!(), "nginx-resume");
    let (servers, nginx) = replicas_behind_nginx(&chain);

    // Streamable HTTP: the session's stream is cut mid-turn and reopened with Last-Event-ID.
    let (remote, session, _connection_stream) = http_session(&nginx.http_url());
    let http_connection = remote.connection_id.clone().unwrap();
    let connection = http_connection.clone();
    let mut stream = SseStream::open(&nginx.http_url(), &connection, Some(&session), None)
        .expect("the session's stream through nginx");
    post_slow_prompt(&remote, &session);
    let mut turn = Turn::default();
    let mut last = String::new();
    while turn.ticks.len() < 5 {
        let (id, message) = stream.next().expect("an event");
        turn.take(&message, 2);
        last = id;
    }
    std::thread::sleep(std::time::Duration::from_millis(600));
    stream.cut();
    let mut resumed = SseStream::open(&nginx.http_url(), &connection, Some(&session), Some(&last))
        .unwrap_or_else(|refused| panic!("the resume through nginx is refused: {refused:?}"));
    while turn.answer.is_none() {
        let (_, message) = resumed.next().expect("an event");
        turn.take(&message, 2);
    }
    turn.assert_complete();

    // WebSocket: the socket is cut mid-turn; the upgrade that resumes it reaches its replica.
    let (mut socket, session, mut read) = ws_session(&nginx.ws_url(), "bytes=1048576, seconds=60");
    socket.send(&request(
        2,
        "session/prompt",
        prompt_params(&session, "go slow"),
    ));
    let mut turn = Turn::default();
    read_ws_until(&mut socket, &mut turn, 5, &mut read);
    let connection = socket.connection_id.clone();
    std::thread::sleep(std::time::Duration::from_millis(600));
    socket.cut();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let cursor = read.to_string();
    let mut resumed = ws_client::connect(
        &nginx.ws_url(),
        &[
            ("Acp-Connection-Id", &connection),
            ("Last-Event-ID", &cursor),
        ],
    )
    .expect("the resume through nginx is accepted");
    assert_eq!(resumed.received, Some(3));
    read_ws_until(&mut resumed, &mut turn, serve::resume::TICKS + 1, &mut read);
    turn.assert_complete();
    resumed.close();

    let resumed = |connection: &str, profile: &str| {
        Admin::of(&servers[replica_of(connection)]).metrics().value(
            "acp_resumes_total",
            &[("profile", profile), ("outcome", "resumed")],
        )
    };
    assert_eq!(
        resumed(&http_connection, "http"),
        1.0,
        "the SSE resume reached the replica holding its connection"
    );
    assert_eq!(
        resumed(&connection, "websocket"),
        1.0,
        "the WebSocket resume reached the replica holding its connection"
    );
}
