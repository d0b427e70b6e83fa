//! Failure policies in memory: a bypassed proxy is routed around, a restarted one is
//! initialized as before and gets what was held for it, restarts are limited, deadlines fail
//! a silent component, and a restarted agent's old sessions are refused by name.

use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{Chain, Spec};
use crate::Finish;
use crate::policy::{AfterRestarts, FailurePolicy, OnFailure};

fn policy(on_failure: OnFailure) -> FailurePolicy {
    FailurePolicy {
        on_failure,
        ..FailurePolicy::default()
    }
}

fn restart(then: AfterRestarts) -> FailurePolicy {
    policy(OnFailure::Restart { then })
}

const INITIALIZE: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;

/// Initializes a chain of one proxy and the agent; returns what the editor was answered.
fn initialize(chain: &mut Chain) -> Value {
    let asked = chain.editor_sends(INITIALIZE);
    assert_eq!(asked["method"], "proxy/initialize");
    let own = asked["id"].clone();
    proxy_initializes_its_successor(chain, 1);
    let init = chain.agent().recv();
    assert_eq!(init["method"], "initialize");
    let id = init["id"].clone();
    chain.agent().send(
        &json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1,"agentCapabilities":{}}})
            .to_string(),
    );
    let answer = chain.proxy(1).recv();
    assert_eq!(answer["id"], 70);
    chain.proxy(1).send(
        &json!({"jsonrpc":"2.0","id":own,"result":{"protocolVersion":1,"agentCapabilities":{}}})
            .to_string(),
    );
    chain.editor.recv()
}

/// Proxy `k` forwards `initialize` to its successor, with id 70.
fn proxy_initializes_its_successor(chain: &mut Chain, k: usize) {
    chain.proxy(k).send(
        r#"{"jsonrpc":"2.0","id":70,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    );
}

fn prompt(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"s1","prompt":[]}}}}"#
    )
}

#[test]
fn a_bypassed_proxy_is_routed_around_and_its_requests_are_answered() {
    let mut chain = Spec::new(2)
        .on_failure(1, policy(OnFailure::Bypass))
        .start();
    chain.editor_sends(&prompt(1));
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 2", &["boom"]);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "proxy `p1` exited with status 2; it was taken out of the chain, and traffic now flows \
         around it"
    );
    assert_eq!(answer["error"]["data"]["action"], "bypass");
    assert_eq!(answer["error"]["data"]["stderr"][0], "boom");
    assert_eq!(chain.asked.lock().unwrap().stopped, [1]);

    // The editor's next request goes straight to proxy 2, plain, as to a first proxy.
    chain.editor.send(&prompt(2));
    let at_p2 = chain.proxy(2).recv();
    assert_eq!(at_p2["method"], "session/prompt");
    assert_eq!(at_p2["params"]["sessionId"], "s1");
    // Proxy 2's notification toward the editor skips the gap.
    chain.proxy(2).send(
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#,
    );
    assert_eq!(chain.editor.recv()["method"], "session/update");
    // And the agent's still goes to proxy 2 wrapped, and on from there.
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#);
    assert_eq!(chain.proxy(2).recv()["method"], "proxy/successor");
}

#[test]
fn a_restarted_proxy_is_initialized_as_before_and_gets_what_was_held_in_order() {
    let mut chain = Spec::new(1)
        .awaiting_initialize()
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    let initialized = initialize(&mut chain);
    assert_eq!(initialized["id"], 0);
    chain.editor_sends(&prompt(1));
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "was killed by signal 9", &[]);

    let notice = chain.editor.recv();
    assert_eq!(notice["method"], "_acp-conductor/component_failed");
    assert_eq!(notice["params"]["component"], "p1");
    assert_eq!(notice["params"]["action"], "restart");
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["error"]["message"],
        "proxy `p1` was killed by signal 9; restarting it"
    );
    // Sent while it is down: held, not refused.
    chain.editor.send(&prompt(2));
    chain.editor.send(&prompt(3));

    let p1 = chain.restarted(1);
    let init = p1.recv();
    assert_eq!(init["method"], "proxy/initialize");
    assert_eq!(init["params"], json!({"protocolVersion":1}));
    // Its own initialize toward the agent is answered by the conductor: the agent is not
    // initialized twice.
    proxy_initializes_its_successor(&mut chain, 1);
    let again = chain.proxy(1).recv();
    assert_eq!(again["id"], 70);
    assert_eq!(again["result"]["protocolVersion"], 1);
    assert!(chain.agent().has_pending().is_none());
    let id = init["id"].clone();
    chain
        .proxy(1)
        .send(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
    // Its answer is the conductor's own: the editor hears only that it runs again.
    let notice = chain.editor.recv();
    assert_eq!(notice["method"], "_acp-conductor/component_restarted");
    assert_eq!(notice["params"]["component"], "p1");
    let second = chain.proxy(1).recv();
    let third = chain.proxy(1).recv();
    assert_eq!(second["method"], "session/prompt");
    assert_eq!(third["method"], "session/prompt");
    assert!(
        second["id"].as_u64() < third["id"].as_u64(),
        "held in order"
    );
    // Answers find their way back to the editor's ids.
    let id = third["id"].clone();
    chain
        .proxy(1)
        .send(&json!({"jsonrpc":"2.0","id":id,"result":{"stopReason":"end_turn"}}).to_string());
    assert_eq!(chain.editor.recv()["id"], 3);
    assert_eq!(chain.asked.lock().unwrap().restarted, [1]);
}

#[test]
fn restarting_stops_after_three_failures_in_a_minute_and_falls_back() {
    let mut chain = Spec::new(1)
        .on_failure(1, restart(AfterRestarts::Bypass))
        .start();
    for attempt in 1..=2 {
        let p1 = chain.proxy(1).id;
        chain.exited(p1, "exited with status 1", &[]);
        chain.restarted(1);
        assert_eq!(chain.asked.lock().unwrap().restarted.len(), attempt);
    }
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 1", &[]);
    // The third failure within the window: no more restarts, the proxy is bypassed.
    chain.editor.send(&prompt(9));
    let at_agent = chain.agent().recv();
    assert_eq!(at_agent["method"], "session/prompt");
    assert_eq!(chain.asked.lock().unwrap().restarted.len(), 2);
}

#[test]
fn failures_spread_over_more_than_a_minute_keep_restarting() {
    let mut chain = Spec::new(1)
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    for _ in 0..4 {
        let p1 = chain.proxy(1).id;
        chain.exited(p1, "exited with status 1", &[]);
        chain.restarted(1);
        chain.sleep(Duration::from_secs(31));
    }
    assert_eq!(chain.asked.lock().unwrap().restarted.len(), 4);
    chain.editor.send(&prompt(1));
    assert_eq!(chain.proxy(1).recv()["method"], "session/prompt");
}

#[test]
fn giving_up_under_fail_answers_what_was_held() {
    let mut chain = Spec::new(1)
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    for _ in 0..2 {
        let p1 = chain.proxy(1).id;
        chain.exited(p1, "exited with status 1", &[]);
        chain.restarted(1);
    }
    // Initialized before, so the new instance is sent initialize and held for until it
    // answers.
    let p1 = chain.proxy(1).id;
    chain.editor.send(&prompt(4));
    assert_eq!(chain.proxy(1).recv()["method"], "session/prompt");
    chain.exited(p1, "exited with status 1", &[]);
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 4);
    assert_eq!(
        answer["error"]["message"],
        "proxy `p1` exited with status 1; it failed 3 times within 60 s, so the chain stopped"
    );
    assert_eq!(answer["error"]["data"]["action"], "fail");
    assert_eq!(chain.finish(), Finish::Failed);
}

#[test]
fn a_component_that_never_answers_initialize_fails_after_its_startup_timeout() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    let asked = chain.editor_sends(INITIALIZE);
    assert_eq!(asked["method"], "proxy/initialize");
    // Nothing answers.
    chain.sleep(Duration::from_secs(61));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "proxy `p1` did not answer `initialize` within 60 s"
    );
    assert_eq!(chain.finish(), Finish::Failed);
}

#[test]
fn answered_requests_never_time_out_and_a_silent_one_does() {
    let quick = FailurePolicy {
        request_timeout: Some(Duration::from_secs(30)),
        ..policy(OnFailure::Fail)
    };
    let mut chain = Spec::new(0).on_failure(1, quick).start();
    for id in 1..=3 {
        let at = chain.editor_sends(&prompt(id));
        chain.sleep(Duration::from_secs(20));
        let own = at["id"].clone();
        chain
            .agent()
            .send(&json!({"jsonrpc":"2.0","id":own,"result":{}}).to_string());
        assert_eq!(chain.editor.recv()["id"], id);
    }
    chain.editor_sends(&prompt(4));
    chain.sleep(Duration::from_secs(31));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 4);
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` did not answer `session/prompt` within 30 s"
    );
}

#[test]
fn a_restarted_agent_is_initialized_again_and_its_old_sessions_are_refused_by_name() {
    let mut chain = Spec::new(0)
        .awaiting_initialize()
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    let init = chain.editor_sends(INITIALIZE);
    let own = init["id"].clone();
    chain.agent().send(
        &json!({"jsonrpc":"2.0","id":own,"result":{"protocolVersion":1,"agentCapabilities":{}}})
            .to_string(),
    );
    chain.editor.recv();
    let new = chain.editor_sends(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    );
    let own = new["id"].clone();
    chain
        .agent()
        .send(&json!({"jsonrpc":"2.0","id":own,"result":{"sessionId":"s1"}}).to_string());
    assert_eq!(chain.editor.recv()["result"]["sessionId"], "s1");

    let agent = chain.agent().id;
    chain.exited(agent, "exited with status 101", &[]);
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/component_failed"
    );
    let agent = chain.restarted(1);
    let again = agent.recv();
    assert_eq!(again["method"], "initialize");
    assert_eq!(again["params"], json!({"protocolVersion":1}));
    let id = again["id"].clone();
    agent.send(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/component_restarted"
    );

    chain.editor.send(&prompt(2));
    let refused = chain.editor.recv();
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], -32001);
    assert_eq!(
        refused["error"]["message"],
        "agent `agent` was restarted and no longer has session `s1`: start a new session, or \
         load this one again if the agent supports it"
    );
    assert!(chain.agent().has_pending().is_none());
    // Loading it again is how to get it back.
    let load = chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"s1","cwd":"/","mcpServers":[]}}"#)
        ;
    assert_eq!(load["method"], "session/load");
    assert_eq!(chain.editor_sends(&prompt(4))["method"], "session/prompt");
}

#[test]
fn a_proxy_stuck_at_start_under_bypass_lets_initialize_go_around_it() {
    let stuck = FailurePolicy {
        startup_timeout: Duration::from_secs(5),
        ..policy(OnFailure::Bypass)
    };
    let mut chain = Spec::new(1)
        .awaiting_initialize()
        .on_failure(1, stuck)
        .start();
    let asked = chain.editor_sends(INITIALIZE);
    assert_eq!(asked["method"], "proxy/initialize");
    chain.sleep(Duration::from_secs(6));
    let init = chain.agent().recv();
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"], json!({"protocolVersion":1}));
    let own = init["id"].clone();
    chain.agent().send(
        &json!({"jsonrpc":"2.0","id":own,"result":{"protocolVersion":1,"agentCapabilities":{}}})
            .to_string(),
    );
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["result"]["protocolVersion"], 1);
    assert_eq!(chain.asked.lock().unwrap().stopped, [1]);
}

#[test]
fn an_initialize_the_failed_instance_never_answered_goes_to_the_new_one_once() {
    let mut chain = Spec::new(1)
        .awaiting_initialize()
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    chain.editor_sends(INITIALIZE);
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 1", &[]);
    let p1 = chain.restarted(1);
    let init = p1.recv();
    assert_eq!(init["method"], "proxy/initialize");
    assert_eq!(init["params"], json!({"protocolVersion":1}));
    let id = init["id"].clone();
    p1.send(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
    assert!(p1.has_pending().is_none(), "initialized once");
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["result"]["protocolVersion"], 1);
}

#[test]
fn a_request_held_when_the_editor_leaves_is_still_delivered_and_answered() {
    let mut chain = Spec::new(1)
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 1", &[]);
    chain.editor.send(&prompt(1));
    chain.editor.close();
    let p1 = chain.restarted(1);
    let held = p1.recv();
    assert_eq!(held["method"], "session/prompt");
    let id = held["id"].clone();
    p1.send(&json!({"jsonrpc":"2.0","id":id,"result":{"stopReason":"end_turn"}}).to_string());
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(chain.finish(), Finish::Stopped);
}

#[test]
fn a_signal_answers_requests_held_for_a_restarting_component() {
    let mut chain = Spec::new(1)
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 1", &[]);
    chain.editor.send(&prompt(1));
    // The prompt reaches the router (and is held) before the signal, well before the restart.
    chain.sleep(Duration::from_millis(10));
    chain.report(crate::Input::Signal("SIGTERM"));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(chain.finish(), Finish::Stopped);
}

#[test]
fn an_initialize_held_while_the_first_proxy_restarts_reaches_the_new_instance() {
    let mut chain = Spec::new(1)
        .awaiting_initialize()
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 1", &[]);
    chain.editor.send(INITIALIZE);
    let p1 = chain.restarted(1);
    let init = p1.recv();
    assert_eq!(
        init["method"], "proxy/initialize",
        "admitted once, when it arrived"
    );
    let id = init["id"].clone();
    p1.send(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
    assert_eq!(chain.editor.recv()["result"]["protocolVersion"], 1);
}

#[test]
fn a_cancel_for_a_request_held_for_a_restarting_proxy_follows_it_there() {
    let mut chain = Spec::new(1)
        .awaiting_initialize()
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    initialize(&mut chain);
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "was killed by signal 9", &[]);
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/component_failed"
    );
    // Sent while it is down: the prompt is held, and so is its cancel, behind it.
    chain.editor.send(&prompt(2));
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}"#);

    let p1 = chain.restarted(1);
    let init = p1.recv();
    proxy_initializes_its_successor(&mut chain, 1);
    chain.proxy(1).recv();
    let id = init["id"].clone();
    chain
        .proxy(1)
        .send(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
    chain.editor.recv();
    let held = chain.proxy(1).recv();
    assert_eq!(held["method"], "session/prompt");
    assert_eq!(
        chain.proxy(1).recv(),
        json!({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":held["id"]}})
    );
}

/// A call through the bridge to a connectionless provider that is being started again waits
/// for it and then goes on; one in flight when it failed was answered at once, naming it.
#[test]
fn a_bridged_call_to_a_restarting_provider_waits_for_it() {
    let mut chain = Spec::new(1)
        .awaiting_initialize()
        .on_failure(1, restart(AfterRestarts::Fail))
        .start();
    initialize(&mut chain);
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","serverId":"n-1"}]}}}"#,
    );
    chain.agent().recv();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    shim.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall"}}"#);
    let first = chain.proxy(1).recv();
    assert_eq!(first["params"]["params"]["method"], "tools/call");

    let p1 = chain.proxy(1).id;
    chain.exited(p1, "was killed by signal 9", &[]);
    let failed = shim.recv();
    assert_eq!(failed["id"], 1);
    assert_eq!(failed["error"]["code"], -32001);
    assert!(
        failed["error"]["message"].as_str().unwrap().contains("p1"),
        "{failed}"
    );
    // Sent while it is down: held, not refused.
    shim.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall"}}"#);
    assert!(shim.has_pending().is_none(), "the call waits");

    let p1 = chain.restarted(1);
    let init = p1.recv();
    let id = init["id"].clone();
    chain
        .proxy(1)
        .send(&json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1}}).to_string());
    let call = loop {
        let message = chain.proxy(1).recv();
        if message["params"]["method"] == "mcp/message" {
            break message;
        }
    };
    assert_eq!(call["params"]["params"]["method"], "tools/call");
    assert_eq!(call["params"]["params"]["serverId"], "n-1");
    chain.proxy(1).send(
        &json!({"jsonrpc":"2.0","id":call["id"],"result":{"result":{"content":[]}}}).to_string(),
    );
    assert_eq!(
        shim.recv_text(),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#
    );
}
