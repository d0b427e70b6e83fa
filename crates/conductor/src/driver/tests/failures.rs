//! When a link dies: every request waiting on it, and every request the editor waits on, is
//! answered with an error naming the component; how the editor leaving or a signal ends a run.

use std::time::Duration;

use super::harness::{Spec, stray_link};
use crate::event::Event;
use acp_router::Finish;

#[tokio::test]
async fn an_agent_exit_answers_the_editors_pending_requests_and_fails_the_chain() {
    let mut chain = Spec::new(1).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{}}"#)
        .await;
    let agent = chain.agent().id;
    chain
        .exited(agent, "exited with status 3", &["panic: out of tokens"])
        .await;
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], "p");
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 3"
    );
    assert_eq!(answer["error"]["data"]["component"], "agent");
    assert_eq!(answer["error"]["data"]["reason"], "exited with status 3");
    assert_eq!(answer["error"]["data"]["stderr"][0], "panic: out of tokens");
    assert_eq!(chain.finish().await, Finish::Failed);
}

#[tokio::test]
async fn after_a_failure_later_editor_requests_get_the_same_error() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    let agent = chain.agent().id;
    chain.exited(agent, "was killed by signal 9", &[]).await;
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` was killed by signal 9"
    );
    assert_eq!(chain.finish().await, Finish::Failed);
}

#[tokio::test]
async fn requests_a_proxy_made_toward_the_editor_are_answered_when_a_component_fails() {
    let mut chain = Spec::new(1).start();
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":"own","method":"fs/read_text_file","params":{}}"#);
    chain.editor.recv().await;
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 1", &[]).await;
    let answer = chain.proxy(1).recv().await;
    assert_eq!(answer["id"], "own");
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 1"
    );
}

#[tokio::test(start_paused = true)]
async fn a_component_that_closes_its_output_is_failed_after_a_grace() {
    let mut chain = Spec::new(1).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#)
        .await;
    chain.proxy(1).end.close();
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["message"], "proxy `p1` closed its output");
    assert_eq!(chain.finish().await, Finish::Failed);
}

#[tokio::test(start_paused = true)]
async fn an_exit_report_in_the_grace_wins_over_the_closed_output() {
    let mut chain = Spec::new(0).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#)
        .await;
    chain.agent().end.close();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 101", &[]).await;
    let answer = chain.editor.recv().await;
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 101"
    );
}

#[tokio::test(start_paused = true)]
async fn a_peer_that_stops_reading_is_failed_after_the_write_timeout() {
    let mut spec = Spec::new(0);
    spec.peer_capacity = 1;
    spec.limits.write_timeout = Duration::from_secs(3);
    let mut chain = spec.start();
    // The agent reads nothing: one frame fits its queue, the next write waits.
    for id in 1..=3 {
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{}}}}"#
        ));
    }
    let mut failed = Vec::new();
    for _ in 1..=3 {
        let answer = chain.editor.recv().await;
        assert_eq!(answer["error"]["code"], -32001);
        assert_eq!(
            answer["error"]["message"],
            "agent `agent` stopped reading its input for more than 3s"
        );
        failed.push(answer["id"].as_u64().unwrap());
    }
    failed.sort_unstable();
    assert_eq!(failed, [1, 2, 3]);
}

#[tokio::test]
async fn an_exit_of_a_link_the_router_does_not_know_changes_nothing() {
    let mut chain = Spec::new(0).start();
    let stray = stray_link(&chain);
    chain.exited(stray.id, "exited with status 1", &[]).await;
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#);
    assert_eq!(chain.agent().recv().await["method"], "session/new");
}

#[tokio::test]
async fn when_the_editor_leaves_its_pending_requests_are_still_answered() {
    let mut chain = Spec::new(0).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{}}"#)
        .await;
    chain.editor.end.close();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    assert_eq!(
        chain.editor.recv_text().await,
        r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#
    );
    assert_eq!(chain.finish().await, Finish::Stopped);
}

#[tokio::test(start_paused = true)]
async fn when_the_editor_leaves_unanswered_requests_get_an_error_after_the_grace() {
    let mut chain = Spec::new(0).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{}}"#)
        .await;
    chain.editor.end.close();
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], 4);
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(chain.finish().await, Finish::Stopped);
}

#[tokio::test]
async fn a_signal_answers_what_the_editor_waits_for_and_stops() {
    let mut chain = Spec::new(1).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{}}"#)
        .await;
    chain.report(Event::Signal("SIGTERM")).await;
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(
        answer["error"]["message"],
        "the conductor received SIGTERM and is shutting down"
    );
    assert_eq!(chain.finish().await, Finish::Stopped);
}

#[tokio::test(start_paused = true)]
async fn requests_the_editor_sends_after_hearing_of_a_failure_are_answered_until_the_run_ends() {
    let mut chain = Spec::new(0).start();
    chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#)
        .await;
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 1", &[]).await;
    assert_eq!(chain.editor.recv().await["id"], 1);
    // Sent before the editor could react to the error: still answered, not lost.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}"#);
    let answer = chain.editor.recv().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 1"
    );
    // Then, `shutdown_grace` later, the run ends.
    assert_eq!(chain.finish().await, Finish::Failed);
}
