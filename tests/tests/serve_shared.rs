//! `serve` with a `shared = true` proxy: one proxy process for every connection's chain.
//! Two remote editors at once run whole sessions through it (their agents both number their
//! sessions from 1), it outlives them and serves the next; when it dies every chain attached
//! hears so by name, and the next connection starts it again. A WASM proxy is shared the same
//! way, as one instance inside `serve`.

// Shared with serve.rs, which uses all of it.
#[allow(dead_code)]
mod serve {
    pub mod http;
    pub mod remote;
    pub mod server;
    pub mod ws;
}

use std::sync::Barrier;

use acp_conductor_tests::processes::{descendants, is_running, wait_until_gone};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::wasm::{self, CONTEXT, WasmChain, WasmTarget};
use acp_conductor_tests::{TestChain, binaries, editor::patience};
use serde_json::Value;

use serve::http::HttpRemote;
use serve::remote::{Client, Remote, full_session};
use serve::server::Server;
use serve::ws::{self as ws_client, WsRemote};

const PROXY: &str = "guard";

/// A chain whose proxy `guard` (test-proxy, recording what it receives) is shared.
fn shared_chain(label: &str) -> TestChain {
    let mut chain = TestChain::new(&binaries!(), label);
    chain.agent_args(&["--updates", "3"]);
    chain.add_test_proxy(PROXY).setting("shared", "true");
    chain
}

fn ws(server: &Server) -> Client<WsRemote> {
    Client::new(ws_client::connect(&server.ws_url(), &[]).expect("the upgrade is accepted"))
}

/// The session ids the shared proxy saw in `sessionId` of wrapped or plain params and
/// results, as it saw them.
fn sessions_seen(chain: &TestChain) -> Vec<String> {
    let mut seen: Vec<String> = chain
        .received(PROXY)
        .iter()
        .filter_map(|m| {
            [
                &m["params"]["sessionId"],
                &m["params"]["params"]["sessionId"],
                &m["result"]["sessionId"],
            ]
            .into_iter()
            .find_map(Value::as_str)
            .map(str::to_owned)
        })
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

#[test]
fn two_editors_at_once_run_their_sessions_through_one_proxy_process() {
    let chain = shared_chain("serve-shared");
    let server = Server::start(&chain, &[]);
    // Started with the server, before any connection.
    let proxy = chain.pid(PROXY);
    assert!(descendants(server.pid()).contains(&proxy));

    let both = Barrier::new(2);
    std::thread::scope(|s| {
        let websocket = s.spawn(|| {
            let mut client = ws(&server);
            both.wait();
            full_session(&mut client);
            client
        });
        let http = s.spawn(|| {
            let mut client = Client::new(HttpRemote::new(&server.http_url(), &[]));
            both.wait();
            full_session(&mut client);
            client
        });
        let mut websocket = websocket.join().expect("the WebSocket session");
        let mut http = http.join().expect("the HTTP session");

        // One proxy process served both: two agents, one `guard`, all serve's children.
        assert_eq!(chain.pid(PROXY), proxy, "the proxy was started once");
        let running = descendants(server.pid());
        assert!(running.contains(&proxy));
        let proxies = running
            .iter()
            .filter(|&&pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| exe == chain.binaries.proxy)
            })
            .count();
        assert_eq!(proxies, 1, "one test-proxy among {running:?}");
        websocket.remote.close();
        http.remote.close();
    });

    // Both agents called their session `sess-1`; inside the proxy they stayed apart.
    let seen = sessions_seen(&chain);
    assert_eq!(seen.len(), 2, "two qualified sessions: {seen:?}");
    assert!(
        seen.iter().all(|s| s.ends_with("/sess-1") && s != "sess-1"),
        "{seen:?}"
    );
    // Each chain initialized it: the proxy got one proxy/initialize per connection.
    let initializations = chain
        .received(PROXY)
        .iter()
        .filter(|m| m["method"] == "proxy/initialize")
        .count();
    assert_eq!(initializations, 2);

    // The chains have stopped, the shared proxy goes on and serves the next connection.
    let agent = chain.pid(AGENT);
    assert_eq!(wait_until_gone(&[agent], patience()), Vec::<u32>::new());
    assert!(
        is_running(proxy),
        "the shared proxy outlives the connections"
    );
    let mut again = ws(&server);
    full_session(&mut again);
    assert_eq!(chain.pid(PROXY), proxy);
    again.remote.close();

    // Stopping the server stops it.
    let mut server = server;
    assert!(server.stop().success(), "{}", server.stderr());
    assert_eq!(wait_until_gone(&[proxy], patience()), Vec::<u32>::new());
    assert!(chain.saw_stdin_eof(PROXY), "its input was closed first");
}

#[test]
fn when_the_shared_proxy_dies_every_chain_hears_it_by_name_and_the_next_starts_it_again() {
    let chain = shared_chain("serve-shared-dies");
    let server = Server::start(&chain, &[]);
    let proxy = chain.pid(PROXY);
    let mut first = ws(&server);
    let mut second = ws(&server);
    let mut waiting = Vec::new();
    for client in [&mut first, &mut second] {
        client.initialize();
        let session = client.new_session();
        let id = client.start(
            "session/prompt",
            acp_conductor_tests::editor::prompt_params(&session, "hang"),
        );
        waiting.push(id);
    }
    // Both prompts are in the agents' hands; the proxy is killed under them.
    // SAFETY: kill(2) on a pid of this test's own child tree.
    unsafe { libc::kill(proxy as i32, libc::SIGKILL) };
    for (client, id) in [&mut first, &mut second].into_iter().zip(&waiting) {
        let answer = loop {
            let message = client.recv();
            if message.get("method").is_none() && message["id"] == *id {
                break message;
            }
        };
        let error = &answer["error"];
        assert!(error.is_object(), "the prompt failed: {answer}");
        assert!(
            error.to_string().contains(PROXY),
            "the error names the proxy: {answer}"
        );
    }
    first.remote.close();
    second.remote.close();

    // The next connection starts it again: one new process.
    let mut next = ws(&server);
    full_session(&mut next);
    let restarted = chain.pid(PROXY);
    assert_ne!(restarted, proxy, "a new instance");
    assert!(descendants(server.pid()).contains(&restarted));
    next.remote.close();
}

#[test]
fn a_shared_wasm_proxy_is_one_instance_for_every_connection() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "serve-shared-wasm");
    chain.agent_args(&["--updates", "3"]);
    let mut chain = WasmChain::new(chain);
    let module = wasm::artifact(&binaries, CONTEXT, WasmTarget::P2);
    chain
        .add_wasm("context", &module)
        .args(&["--rule", "Always add tests"])
        .setting("shared", "true");
    let config = chain.write_config();
    let server = Server::start_config(&binaries.conductor, &config, &[]);

    let both = Barrier::new(2);
    std::thread::scope(|s| {
        let sessions: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut client = ws(&server);
                    both.wait();
                    client.initialize();
                    let session = client.new_session();
                    let prompt = client.prompt(&session, "hello");
                    assert_eq!(prompt.result()["stopReason"], "end_turn");
                    // The agent saw the prompt with the proxy's rule after it.
                    let texts = prompt.chunk_texts();
                    assert_eq!(texts.len(), 3, "{texts:?}");
                    assert!(
                        texts.iter().all(|t| t.contains("for hello <context")
                            && t.contains("- Always add tests")
                            && t.ends_with("</context>")),
                        "{texts:?}"
                    );
                    client.remote.close();
                })
            })
            .collect();
        for session in sessions {
            session.join().expect("a whole session");
        }
    });
    let log = server.stderr();
    assert_eq!(
        log.matches("shared proxy started").count(),
        1,
        "one instance for both connections:\n{log}"
    );
    // It runs inside serve: once the two agents are gone, serve has no child left.
    assert_eq!(
        wait_until_gone(&descendants(server.pid()), patience()),
        Vec::<u32>::new()
    );
}
