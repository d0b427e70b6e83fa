//! `serve` under a low open-file limit, as a service manager often sets it (soft 1,024 or
//! less): each connection's chain holds pipes to its processes, so `serve` raises the soft
//! limit to the hard one at start and serves more connections than the soft limit would
//! fit; when the hard limit is low too, it warns at start, and a connection past it is
//! refused with an error naming the cause while `serve` goes on.

// Shared with serve.rs, which uses all of it.
#[allow(dead_code)]
mod serve {
    pub mod http;
    pub mod remote;
    pub mod server;
    pub mod ws;
}

use std::os::unix::process::CommandExt;
use std::process::Command;

use acp_conductor_tests::{TestChain, binaries};
use serde_json::Value;

use serve::http::HttpRemote;
use serve::server::Server;

/// `serve` of `chain` started with the open-file limit at `soft` / `hard`.
fn serve_limited(chain: &TestChain, soft: u64, hard: u64) -> Server {
    let config = chain.write_config();
    let mut command = Command::new(&chain.binaries.conductor);
    command
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .args(["--listen", "127.0.0.1:0"]);
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Server::start_command(command)
}

/// Opens a connection with `initialize` (and no stream, nothing else): its id when it was
/// opened, and the answer.
fn initialize(server: &Server) -> (Option<String>, Value) {
    let request = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": acp_conductor_tests::editor::initialize_params(),
    });
    let posted = HttpRemote::new(&server.http_url(), &[]).post_raw(
        &request.to_string(),
        "application/json",
        None,
    );
    assert_eq!(posted.status, 200, "{}", posted.body);
    let answer = serde_json::from_str(&posted.body).expect("a JSON answer");
    (posted.connection_id, answer)
}

/// Ends connection `id` (DELETE).
fn close(server: &Server, id: &str) {
    let status = serve::http::agent()
        .delete(&server.http_url())
        .header("Acp-Connection-Id", id)
        .call()
        .expect("DELETE reaches serve")
        .status()
        .as_u16();
    assert!(status < 300, "DELETE answered {status}");
}

#[test]
fn a_low_soft_limit_is_raised_so_more_connections_fit_than_it_allows() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "serve-file-limit");
    chain.add_test_proxy("p1");
    // 64 files would hold about 6 chains of two processes; the hard limit holds them all.
    let server = serve_limited(&chain, 64, 4096);
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let (client, answer) = initialize(&server);
            assert!(answer.get("result").is_some(), "{answer}");
            client
        })
        .collect();
    assert!(
        !server.stderr().contains("open-file limit"),
        "{}",
        server.stderr()
    );
    drop(clients);
}

#[test]
fn a_low_hard_limit_is_warned_of_and_a_connection_past_it_is_refused_by_name() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "serve-file-limit-hard");
    chain.add_test_proxy("p1");
    let server = serve_limited(&chain, 64, 64);
    let stderr = server.stderr();
    assert!(
        stderr.contains(
            "the open-file limit (64) fits about 8 connections of 2 processes each, fewer than \
             --max-connections (64)"
        ),
        "{stderr}"
    );
    let mut open = Vec::new();
    let refused = loop {
        assert!(open.len() < 64, "64 files never ran out");
        match initialize(&server) {
            (Some(id), answer) if answer.get("result").is_some() => open.push(id),
            (_, answer) => break answer,
        }
    };
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Too many open files")),
        "{refused}"
    );
    // `serve` goes on: with the connections closed, a new one is served.
    for id in &open {
        close(&server, id);
    }
    let deadline = std::time::Instant::now() + acp_conductor_tests::editor::patience();
    loop {
        let (_, answer) = initialize(&server);
        if answer.get("result").is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no connection was served again: {answer}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
