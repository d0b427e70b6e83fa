//! When a link dies: every request waiting on it, and every request the editor waits on, is
//! answered with an error naming the component; how the editor leaving or a signal ends a run.

use std::time::Duration;

use super::harness::{Spec, stray_link};
use crate::Finish;
use crate::{Input, LinkEvent};

#[test]
fn an_agent_exit_answers_the_editors_pending_requests_and_fails_the_chain() {
    let mut chain = Spec::new(1).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{}}"#);
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 3", &["panic: out of tokens"]);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "p");
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 3"
    );
    assert_eq!(answer["error"]["data"]["component"], "agent");
    assert_eq!(answer["error"]["data"]["reason"], "exited with status 3");
    assert_eq!(answer["error"]["data"]["stderr"][0], "panic: out of tokens");
    assert_eq!(chain.finish(), Finish::Failed);
}

#[test]
fn after_a_failure_later_editor_requests_get_the_same_error() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    let agent = chain.agent().id;
    chain.exited(agent, "was killed by signal 9", &[]);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` was killed by signal 9"
    );
    assert_eq!(chain.finish(), Finish::Failed);
}

#[test]
fn when_every_component_fails_before_the_editor_asks_it_still_hears_the_first_failure() {
    // `serve` out of open files: neither the proxy nor the agent can be started, both fail
    // before the editor's `initialize` is read; the chain waits to answer it.
    let mut chain = Spec::new(1).awaiting_initialize().start();
    let (proxy, agent) = (chain.proxy(1).id, chain.agent().id);
    chain.exited(
        proxy,
        "could not start `p`: Too many open files (os error 24)",
        &[],
    );
    chain.exited(
        agent,
        "could not start `a`: Too many open files (os error 24)",
        &[],
    );
    assert!(!chain.finished(), "the editor has not been told");
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "proxy `p1` could not start `p`: Too many open files (os error 24)"
    );
    assert_eq!(chain.finish(), Finish::Failed);
}

#[test]
fn requests_a_proxy_made_toward_the_editor_are_answered_when_a_component_fails() {
    let mut chain = Spec::new(1).start();
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":"own","method":"fs/read_text_file","params":{}}"#);
    chain.editor.recv();
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 1", &[]);
    let answer = chain.proxy(1).recv();
    assert_eq!(answer["id"], "own");
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 1"
    );
}

#[test]
fn a_component_that_closes_its_output_is_failed_after_a_grace() {
    let mut chain = Spec::new(1).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#);
    chain.proxy(1).close();
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["message"], "proxy `p1` closed its output");
    assert_eq!(chain.finish(), Finish::Failed);
}

#[test]
fn an_exit_report_in_the_grace_wins_over_the_closed_output() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#);
    chain.agent().close();
    chain.sleep(Duration::from_millis(100));
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 101", &[]);
    let answer = chain.editor.recv();
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 101"
    );
}

#[test]
fn a_peer_its_link_says_stopped_reading_fails_with_what_the_link_says() {
    let mut chain = Spec::new(0).start();
    for id in 1..=3 {
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{}}}}"#
        ));
    }
    let agent = chain.agent().id;
    chain.report(Input::Link {
        link: agent,
        event: LinkEvent::WriteFailed {
            reason: "stopped reading its input for more than 3s".into(),
            stalled: true,
        },
    });
    let mut failed = Vec::new();
    for _ in 1..=3 {
        let answer = chain.editor.recv();
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

#[test]
fn an_exit_of_a_link_the_router_does_not_know_changes_nothing() {
    let mut chain = Spec::new(0).start();
    let stray = stray_link(&chain);
    chain.exited(stray, "exited with status 1", &[]);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#);
    assert_eq!(chain.agent().recv()["method"], "session/new");
}

#[test]
fn when_the_editor_leaves_its_pending_requests_are_still_answered() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{}}"#);
    chain.editor.close();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#
    );
    assert_eq!(chain.finish(), Finish::Stopped);
}

#[test]
fn when_the_editor_leaves_unanswered_requests_get_an_error_after_the_grace() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{}}"#);
    chain.editor.close();
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 4);
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(chain.finish(), Finish::Stopped);
}

#[test]
fn a_signal_answers_what_the_editor_waits_for_and_stops() {
    let mut chain = Spec::new(1).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{}}"#);
    chain.report(Input::Signal("SIGTERM"));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(
        answer["error"]["message"],
        "the conductor received SIGTERM and is shutting down"
    );
    assert_eq!(chain.finish(), Finish::Stopped);
}

#[test]
fn requests_the_editor_sends_after_hearing_of_a_failure_are_answered_until_the_run_ends() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#);
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 1", &[]);
    assert_eq!(chain.editor.recv()["id"], 1);
    // Sent before the editor could react to the error: still answered, not lost.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 1"
    );
    // Then, `shutdown_grace` later, the run ends.
    assert_eq!(chain.finish(), Finish::Failed);
}
