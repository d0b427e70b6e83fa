//! Reload under `serve`, with the real binary and real child processes: SIGHUP has the
//! configuration read again; a connection open at the time keeps its chain while a new one
//! gets the new chain; with `reload_open = true` the open connections' chains change too, a
//! changed shared proxy gets one new instance for every chain and the old one stops; an
//! invalid edit changes nothing and serve goes on; `POST /reload` on the admin listener
//! answers with what came of it; the reloads are counted in /metrics; with
//! `watch`, an edit on disk reloads without a signal.

// Shared with serve.rs, which uses all of it.
#[allow(dead_code)]
mod serve {
    pub mod admin;
    pub mod http;
    pub mod remote;
    pub mod server;
    pub mod ws;
}

use std::time::{Duration, Instant};

use acp_conductor_tests::processes::{descendants, is_running, wait_until_gone};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries, editor::patience};
use serde_json::Value;

use serve::admin::Admin;
use serve::http::HttpRemote;
use serve::remote::{Client, Remote};
use serve::server::Server;
use serve::ws::{self as ws_client, WsRemote};

const RELOADED: &str = "_acp-conductor/config_reloaded";
const REJECTED: &str = "_acp-conductor/config_rejected";

fn ws(server: &Server) -> Client<WsRemote> {
    Client::new(ws_client::connect(&server.ws_url(), &[]).expect("the upgrade is accepted"))
}

fn hangup(server: &Server) {
    // SAFETY: kill(2) on the child the test started and has not reaped.
    unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGHUP) };
}

/// Waits until serve's log holds `text` `times` times.
fn logged(server: &Server, text: &str, times: usize) -> String {
    let deadline = Instant::now() + patience();
    loop {
        let stderr = server.stderr();
        if stderr.matches(text).count() >= times {
            return stderr;
        }
        assert!(
            Instant::now() < deadline,
            "serve never logged `{text}` ({times}x):\n{stderr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn count_method(chain: &TestChain, name: &str, method: &str) -> usize {
    chain
        .received(name)
        .iter()
        .filter(|m| {
            m["method"] == method
                || (m["method"] == "proxy/successor" && m["params"]["method"] == method)
        })
        .count()
}

/// Opens a session and runs one prompt in it.
fn open_session<R: Remote>(client: &mut Client<R>, text: &str) -> String {
    client.initialize();
    let session = client.new_session();
    prompted(client, &session, text);
    session
}

fn prompted<R: Remote>(client: &mut Client<R>, session: &str, text: &str) {
    let exchange = client.prompt(session, text);
    assert_eq!(
        exchange.result()["stopReason"],
        "end_turn",
        "{:?}",
        exchange.response
    );
}

/// The next notification named `method` the client receives.
fn notified<R: Remote>(client: &mut Client<R>, method: &str) -> Value {
    loop {
        let message = client.recv();
        if message["method"] == method {
            return message;
        }
    }
}

fn reloads(admin: &Admin, outcome: &str) -> f64 {
    admin
        .metrics()
        .value("acp_reloads_total", &[("outcome", outcome)])
}

#[test]
fn an_open_connection_keeps_its_chain_and_a_new_connection_gets_the_new_one() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "serve-reload");
    chain.add_test_proxy("p1");
    let server = Server::start(&chain, &["--admin-listen", "127.0.0.1:0"]);
    let admin = Admin::of(&server);
    let mut open = ws(&server);
    let session = open_session(&mut open, "open, before the reload");

    chain.proxies[0].args(&["--envelope-meta", "{\"reloaded\":true}"]);
    chain.add_test_proxy("p2");
    chain.write_config();
    hangup(&server);
    logged(
        &server,
        "configuration reloaded: replaced `p1` (args); added `p2` at 1; kept the agent; new \
         connections run the new chain; the open one keeps its own",
        1,
    );
    assert_eq!(reloads(&admin, "applied"), 1.0);

    // The open connection's chain is the one it started with: no p2.
    prompted(&mut open, &session, "open, after the reload");
    assert!(chain.saw_prompt(AGENT, "open, after the reload"));
    assert!(!chain.saw_prompt("p2", "open, after the reload"));
    // A new connection (the other profile) runs the new chain.
    let mut fresh = Client::new(HttpRemote::new(&server.http_url(), &[]));
    open_session(&mut fresh, "a new connection");
    assert!(chain.saw_prompt("p2", "a new connection"));
    assert!(chain.saw_prompt(AGENT, "a new connection"));

    // An invalid edit changes nothing: serve goes on, both chains work.
    std::fs::write(chain.config_path(), "[[proxy]]\nname = \n").expect("write the config");
    hangup(&server);
    logged(&server, "the configuration was not reloaded", 1);
    assert_eq!(reloads(&admin, "rejected"), 1.0);
    prompted(&mut open, &session, "open, after the invalid edit");
    assert!(chain.saw_prompt(AGENT, "open, after the invalid edit"));
    // An unchanged file is no reload.
    chain.write_config();
    hangup(&server);
    logged(
        &server,
        "the configuration is unchanged: nothing to reload",
        1,
    );
    assert_eq!(reloads(&admin, "unchanged"), 1.0);
    assert_eq!(reloads(&admin, "applied"), 1.0);

    // The operator's `POST /reload` on the admin listener answers with what came of it.
    std::fs::write(chain.config_path(), "[[proxy]]\nname = \n").expect("write the config");
    let (status, body) = admin.post("/reload");
    assert_eq!(status, 422, "{body}");
    assert!(
        body.contains("not reloaded:") && body.contains("conductor.toml"),
        "{body}"
    );
    chain.proxies.remove(1);
    chain.write_config();
    let (status, body) = admin.post("/reload");
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("reloaded:\n"), "{body}");
    assert!(body.contains("removed `p2`"), "{body}");
    assert!(body.contains("the 2 open ones keep theirs"), "{body}");
    assert_eq!(admin.post("/reload"), (200, "unchanged\n".to_owned()));
    assert_eq!(reloads(&admin, "applied"), 2.0);
    assert_eq!(reloads(&admin, "rejected"), 2.0);
    assert_eq!(reloads(&admin, "unchanged"), 2.0);
    open.remote.close();
    fresh.remote.close();
    let mut server = server;
    assert!(server.stop().success(), "{}", server.stderr());
}

#[test]
fn with_reload_open_open_chains_change_too_and_a_shared_proxy_is_replaced_once() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "serve-reload-open");
    chain.conductor_setting("reload_open", "true");
    chain.add_test_proxy("guard").setting("shared", "true");
    chain.add_test_proxy("p1");
    let server = Server::start(&chain, &[]);
    let old_guard = chain.pid("guard");
    let mut first = ws(&server);
    let mut second = ws(&server);
    let first_session = open_session(&mut first, "first, before");
    let second_session = open_session(&mut second, "second, before");
    assert_eq!(count_method(&chain, "guard", "session/new"), 2);

    chain.proxies[0].args(&["--envelope-meta", "{\"reloaded\":true}"]);
    chain.add_test_proxy("p2");
    chain.write_config();
    hangup(&server);
    logged(
        &server,
        "configuration reloaded: replaced `guard` (args); kept `p1`; added `p2` at 2; kept the \
         agent; new connections and the 2 open ones (reload_open) run the new chain",
        1,
    );
    // Each open chain changes as `run`'s does, and tells its editor.
    for client in [&mut first, &mut second] {
        let reloaded = notified(client, RELOADED);
        assert_eq!(
            reloaded["params"]["changes"],
            serde_json::json!([
                "replaced `guard` (args)",
                "kept `p1`",
                "added `p2` at 2",
                "kept the agent"
            ])
        );
    }
    prompted(&mut first, &first_session, "first, after");
    prompted(&mut second, &second_session, "second, after");
    for text in ["first, after", "second, after"] {
        assert!(chain.saw_prompt("p2", text), "{text} crossed p2");
        assert!(chain.saw_prompt(AGENT, text));
    }
    // One new guard for both chains, introduced to both open sessions; the agents never saw
    // a session begin again; the old guard stops once no chain uses it.
    let new_guard = chain.pid("guard");
    assert_ne!(new_guard, old_guard, "the shared proxy was replaced");
    assert_eq!(count_method(&chain, "guard", "session/new"), 4);
    assert_eq!(count_method(&chain, AGENT, "session/new"), 2);
    assert_eq!(wait_until_gone(&[old_guard], patience()), Vec::<u32>::new());
    let guards = descendants(server.pid())
        .iter()
        .filter(|&&pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe == chain.binaries.proxy)
                && std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|cmdline| cmdline.contains("guard"))
        })
        .count();
    assert_eq!(guards, 1, "one guard process");

    // A new connection attaches to the same new guard.
    let mut third = ws(&server);
    open_session(&mut third, "third, new");
    assert!(chain.saw_prompt("p2", "third, new"));
    assert_eq!(chain.pid("guard"), new_guard);
    assert!(is_running(new_guard));

    // An invalid edit: every open editor hears why, and nothing changes.
    std::fs::write(chain.config_path(), "[[proxy]]\nname = \n").expect("write the config");
    hangup(&server);
    for client in [&mut first, &mut second, &mut third] {
        let rejected = notified(client, REJECTED);
        assert!(
            rejected["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("conductor.toml")),
            "{rejected}"
        );
    }
    prompted(&mut first, &first_session, "first, after the invalid edit");
    assert!(chain.saw_prompt("p2", "first, after the invalid edit"));
    for client in [&mut first, &mut second, &mut third] {
        client.remote.close();
    }
    let mut server = server;
    assert!(server.stop().success(), "{}", server.stderr());
    assert_eq!(wait_until_gone(&[new_guard], patience()), Vec::<u32>::new());
}

#[test]
fn with_watch_an_edit_on_disk_reloads_serve() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "serve-reload-watch");
    chain.conductor_setting("watch", "true");
    chain.add_test_proxy("p1");
    let server = Server::start(&chain, &[]);
    let mut open = ws(&server);
    open_session(&mut open, "before the edit");

    chain.add_test_proxy("p2");
    chain.write_config();
    logged(
        &server,
        "configuration reloaded: kept `p1`; added `p2` at 1; kept the agent; new connections \
         run the new chain; the open one keeps its own",
        1,
    );
    let mut fresh = ws(&server);
    open_session(&mut fresh, "after the edit");
    assert!(chain.saw_prompt("p2", "after the edit"));
    open.remote.close();
    fresh.remote.close();
}
