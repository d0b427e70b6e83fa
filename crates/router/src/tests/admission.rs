//! Who may send what, and when: `proxy/successor` and `proxy/initialize` only from the side
//! that may send them, and `initialize` first and once. What is refused is answered or dropped,
//! reaches no one, and is counted.

use super::harness::{Chain, Spec};
use crate::skipped::Skipped;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const PROMPT: &str = r#"{"jsonrpc":"2.0","id":"smuggled","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#;

/// The editor's `session/prompt`, wrapped as if it came from proxy 1's successor.
fn smuggling(successor: &str, id: Option<&str>) -> String {
    let id = id.map_or(String::new(), |id| format!(r#""id":{id},"#));
    format!(
        r#"{{"jsonrpc":"2.0",{id}"method":"{successor}","params":{{"method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"text","text":"rm -rf /"}}]}}}}}}"#
    )
}

/// A request from the editor that must reach proxy 1 next: nothing refused got there first.
fn proxy_1_gets_the_next_request_first(chain: &mut Chain) {
    let next =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":"next","method":"session/new","params":{}}"#);
    assert_eq!(next["method"], "session/new", "{next}");
}

#[test]
fn the_editor_cannot_pose_as_the_agent_with_proxy_successor_in_either_spelling() {
    for successor in ["proxy/successor", "_proxy/successor"] {
        let mut chain = Spec::new(1).start();
        chain.editor.send(&smuggling(successor, Some("41")));
        let answer = chain.editor.recv();
        assert_eq!(answer["id"], 41, "{answer}");
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        assert_eq!(
            answer["error"]["message"],
            format!(
                "`{successor}` is how a proxy talks to its successor; the editor cannot send it"
            )
        );
        // As a notification it is dropped.
        chain.editor.send(&smuggling(successor, None));
        proxy_1_gets_the_next_request_first(&mut chain);
        assert_eq!(chain.proxy(1).has_pending(), None);
        assert_eq!(
            chain.editor.has_pending(),
            None,
            "the editor got its own prompt back"
        );
        let skipped = chain.editor_leaves();
        assert_eq!(
            skipped,
            Skipped {
                wrong_sender: 2,
                ..Skipped::default()
            }
        );
    }
}

#[test]
fn without_proxies_the_editors_successor_message_is_refused_too() {
    let mut chain = Spec::new(0).start();
    chain.editor.send(&smuggling("proxy/successor", Some("1")));
    let answer = chain.editor.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (1.into(), (-32601).into())
    );
    assert_eq!(chain.agent().has_pending(), None);
}

#[test]
fn the_agent_cannot_send_proxy_successor_or_proxy_initialize() {
    let mut chain = Spec::new(1).start();
    for (method, id) in [
        ("proxy/successor", "1"),
        ("_proxy/successor", "2"),
        ("proxy/initialize", "3"),
        ("_proxy/initialize", "4"),
    ] {
        chain.agent().send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"method":"session/update","params":{{}}}}}}"#
        ));
        let answer = chain.agent().recv();
        assert_eq!(answer["id"], id.parse::<u64>().unwrap(), "{answer}");
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("`{method}` ")), "{message}");
    }
    chain.agent().send(&smuggling("proxy/successor", None));
    // The agent's next message reaches proxy 1; nothing refused went before it.
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}"#);
    let got = chain.proxy(1).recv();
    assert_eq!(got["params"]["method"], "session/update", "{got}");
    let skipped = chain.editor_leaves();
    assert_eq!(skipped.wrong_sender, 5);
}

#[test]
fn a_proxys_successor_messages_still_pass() {
    let mut chain = Spec::new(1).start();
    chain
        .proxy(1)
        .send(&smuggling("proxy/successor", Some("9")));
    let at_agent = chain.agent().recv();
    assert_eq!(at_agent["method"], "session/prompt");
}

#[test]
fn requests_before_initialize_are_answered_and_notifications_dropped() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    chain.editor.send(PROMPT);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "smuggled");
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(
        answer["error"]["message"],
        "`initialize` must come first; `session/prompt` arrived before it"
    );
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
    // From a component too: the agent's notification is dropped, its request answered (and
    // the answer shows the router took both before the editor's initialize below).
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{}}"#);
    let answer = chain.agent().recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (5.into(), (-32600).into())
    );
    // Then initialize opens the chain: it is the first thing proxy 1 sees.
    let first = chain.editor_sends(INITIALIZE);
    assert_eq!(first["method"], "proxy/initialize", "{first}");
    assert_eq!(chain.editor.has_pending(), None);
    proxy_1_gets_the_next_request_first(&mut chain);
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        first["id"]
    ));
    assert_eq!(chain.editor.recv()["id"], 0);
    let skipped = chain.editor_leaves();
    assert_eq!(
        skipped,
        Skipped {
            before_initialize: 4,
            ..Skipped::default()
        }
    );
}

#[test]
fn a_second_initialize_is_refused_even_while_the_first_is_pending() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    let first = chain.editor_sends(INITIALIZE);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(
        answer["error"]["message"],
        "`initialize` was already received; the chain is initialized once"
    );
    // The first is answered as usual, and a third is refused as well.
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":1}}}}"#,
        first["id"]
    ));
    let answered = chain.editor.recv();
    assert_eq!(
        (
            answered["id"].clone(),
            answered["result"]["protocolVersion"].clone()
        ),
        (0.into(), 1.into())
    );
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#);
    assert_eq!(chain.editor.recv()["error"]["code"], -32600);
    assert_eq!(chain.agent().has_pending(), None);
    let skipped = chain.editor_leaves();
    assert_eq!(skipped.second_initialize, 2);
}

#[test]
fn in_proxy_mode_the_parents_proxy_initialize_opens_the_chain() {
    let mut chain = Spec::new(1).proxy_mode().awaiting_initialize().start();
    // Before it, even the parent's proxy/successor is refused.
    chain.editor.send(&smuggling("proxy/successor", Some("7")));
    let answer = chain.editor.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (7.into(), (-32600).into())
    );
    assert_eq!(
        answer["error"]["message"],
        "`proxy/initialize` must come first; `proxy/successor` arrived before it"
    );
    let first =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{}}"#);
    assert_eq!(first["method"], "proxy/initialize");
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"_proxy/initialize","params":{}}"#);
    let answer = chain.editor.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (2.into(), (-32600).into())
    );
    // After it, the parent's proxy/successor is what our successor sent: it reaches proxy 1.
    chain.editor.send(&smuggling("proxy/successor", None));
    let delivered = chain.proxy(1).recv();
    assert_eq!(delivered["method"], "proxy/successor");
    assert_eq!(delivered["params"]["method"], "session/prompt");
}

#[test]
fn after_a_failure_the_editor_hears_of_the_failure_not_of_initialize() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 2", &[]);
    chain.editor.send(PROMPT);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], "smuggled");
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` exited with status 2"
    );
}
