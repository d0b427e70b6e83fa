//! Backpressure: a peer that stops reading pauses only the link that sends into it, and that
//! link goes on once the peer has caught up. Memory stays bounded by the queue limit.

use std::time::Duration;

use super::harness::Spec;
use acp_link::ReadGate;

/// Waits until `gate` is paused (or open, for `false`); panics with `what` after 10 s.
async fn paused_becomes(gate: &ReadGate, paused: bool, what: &str) {
    let wait = async {
        while gate.is_paused() != paused {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("{what}"));
}

/// A notification of about `bytes` bytes.
fn update(n: usize, bytes: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"n":{n},"text":"{}"}}}}"#,
        "x".repeat(bytes)
    )
}

#[tokio::test]
async fn a_slow_editor_pauses_the_agent_and_resumes_it_once_caught_up() {
    let mut spec = Spec::new(0);
    spec.limits.queue_limit = 4096;
    spec.peer_capacity = 1;
    let mut chain = spec.start();
    let agent_gate = chain.agent().gate.clone();
    // The editor reads nothing while the agent streams 64 KiB.
    for n in 0..64 {
        chain.agent().send(&update(n, 1000));
    }
    paused_becomes(
        &agent_gate,
        true,
        "the agent's link is paused while the editor is behind",
    )
    .await;
    // The editor catches up: everything arrives, in order, and the agent may go on.
    for n in 0..64 {
        assert_eq!(chain.editor.recv().await["params"]["n"], n);
    }
    paused_becomes(
        &agent_gate,
        false,
        "the agent's link resumes once the editor caught up",
    )
    .await;
    chain.agent().send(&update(64, 10));
    assert_eq!(chain.editor.recv().await["params"]["n"], 64);
}

#[tokio::test]
async fn only_the_path_into_the_slow_peer_stalls() {
    let mut spec = Spec::new(1);
    spec.limits.queue_limit = 4096;
    spec.peer_capacity = 1;
    let mut chain = spec.start();
    let agent_gate = chain.agent().gate.clone();
    let editor_gate = chain.editor.gate.clone();
    // The proxy reads nothing; the agent floods it.
    for n in 0..64 {
        chain.agent().send(&update(n, 1000));
    }
    paused_becomes(&agent_gate, true, "the agent is paused").await;
    // The editor sent nothing into the slow proxy and is not paused; what the proxy sends
    // toward the editor still goes through.
    assert!(!editor_gate.is_paused());
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","method":"x/hello","params":{}}"#);
    assert_eq!(chain.editor.recv().await["method"], "x/hello");
}
