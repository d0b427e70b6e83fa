//! Backpressure: a peer that stops reading pauses only the link that sends into it, and that
//! link goes on once the peer has caught up. Memory stays bounded by the queue limit.

use std::time::Duration;

use super::harness::Spec;

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
    tokio::time::timeout(Duration::from_secs(10), async {
        while !agent_gate.is_paused() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent's link is paused while the editor is behind");
    // The editor catches up: everything arrives, in order, and the agent may go on.
    for n in 0..64 {
        assert_eq!(chain.editor.recv().await["params"]["n"], n);
    }
    tokio::time::timeout(Duration::from_secs(10), async {
        while agent_gate.is_paused() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent's link resumes once the editor caught up");
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
    tokio::time::timeout(Duration::from_secs(10), async {
        while !agent_gate.is_paused() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent is paused");
    // The editor sent nothing into the slow proxy and is not paused; what the proxy sends
    // toward the editor still goes through.
    assert!(!editor_gate.is_paused());
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","method":"x/hello","params":{}}"#);
    assert_eq!(chain.editor.recv().await["method"], "x/hello");
}
