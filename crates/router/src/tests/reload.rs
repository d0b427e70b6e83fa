//! Reloads in memory: new instances warm before they take their places, old ones answer what
//! they were sent and are stopped, added proxies go in and removed ones are routed around, and
//! a reload whose instance fails changes nothing.

use std::time::Duration;

use serde_json::{Value, json};

use super::harness::{Chain, Peer, Spec};
use crate::policy::FailurePolicy;
use crate::{DialectChoice, LinkId, NewInstance, Placement, ReloadPlan, ReloadRefused, ReloadStep};
use acp_wire::successor::Dialect;

const INITIALIZE: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;

fn send(peer: &Peer, value: Value) {
    peer.send(&value.to_string());
}

/// The chain's `initialize` through every proxy (each forwards it with id 70) to the agent.
fn initialize(chain: &mut Chain) {
    let proxies = chain.proxies.len();
    let mut asked = chain.editor_sends(INITIALIZE);
    let mut owns = Vec::new();
    for k in 1..=proxies {
        assert_eq!(asked["method"], "proxy/initialize");
        owns.push(asked["id"].clone());
        chain.proxy(k).send(
            r#"{"jsonrpc":"2.0","id":70,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
        );
        asked = if k == proxies {
            chain.agent().recv()
        } else {
            chain.proxy(k + 1).recv()
        };
    }
    assert_eq!(asked["method"], "initialize");
    let id = asked["id"].clone();
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1,"agentCapabilities":{"from":"agent"}}}),
    );
    for k in (1..=proxies).rev() {
        assert_eq!(chain.proxy(k).recv()["id"], 70);
        send(
            chain.proxy(k),
            json!({"jsonrpc":"2.0","id":owns[k - 1],"result":{"protocolVersion":1,"agentCapabilities":{"from":format!("p{k}")}}}),
        );
    }
    assert_eq!(chain.editor.recv()["id"], 0);
}

fn instance(link: LinkId, name: &str) -> NewInstance {
    NewInstance {
        link,
        name: name.to_owned(),
        dialect: DialectChoice::Pinned(Dialect::Rfd),
        failure: FailurePolicy::default(),
    }
}

fn plan(steps: Vec<ReloadStep>) -> ReloadPlan {
    ReloadPlan {
        steps,
        changes: vec!["the changes".to_owned()],
    }
}

fn prompt(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"s1","prompt":[]}}}}"#
    )
}

/// The new instance answers the conductor's `initialize`, after asking its successor (which
/// the conductor answers with what was recorded).
fn warm(peer: &mut Peer, expected_answer_from: &str) {
    let init = peer.recv();
    assert_eq!(init["method"], "proxy/initialize");
    assert_eq!(init["params"], json!({"protocolVersion":1}));
    peer.send(
        r#"{"jsonrpc":"2.0","id":"w","method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    );
    let answer = peer.recv();
    assert_eq!(answer["id"], "w");
    assert_eq!(
        answer["result"]["agentCapabilities"]["from"],
        expected_answer_from
    );
    send(
        peer,
        json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":1}}),
    );
}

#[test]
fn a_replaced_proxy_takes_its_place_only_once_it_answered_and_the_old_one_drains() {
    let mut chain = Spec::new(2).awaiting_initialize().start();
    initialize(&mut chain);
    // A prompt is in flight at the old p1 when the reload begins.
    let at_old = chain.editor_sends(&prompt(1));
    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    // Warming: the editor's next request still goes to the old instance.
    let init = new.recv();
    chain.editor.send(&prompt(2));
    assert_eq!(
        chain.proxy(1).recv()["id"],
        at_old["id"].as_u64().unwrap() + 1
    );
    // Its successor's initialize is answered as p1's was: the agent sees nothing.
    new.send(
        r#"{"jsonrpc":"2.0","id":"w","method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    );
    assert_eq!(new.recv()["result"]["agentCapabilities"]["from"], "p2");
    assert!(chain.agent().has_pending().is_none());
    send(
        &new,
        json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":1}}),
    );
    let notice = chain.editor.recv();
    assert_eq!(notice["method"], "_acp-conductor/config_reloaded");
    assert_eq!(notice["params"]["changes"], json!(["the changes"]));
    assert_eq!(
        chain.asked.lock().unwrap().swapped,
        vec![vec![
            Placement::Started(new.id),
            Placement::Kept(2),
            Placement::Kept(3)
        ]]
    );
    // The next prompt crosses the new instance.
    chain.editor.send(&prompt(3));
    let at_new = new.recv();
    assert_eq!(at_new["method"], "session/prompt");
    // The old one answers what it was sent, then is stopped.
    assert!(!chain.is_closed(chain.proxies.first().unwrap()));
    send(
        chain.proxy(1),
        json!({"jsonrpc":"2.0","id":at_old["id"],"result":{"stopReason":"end_turn"}}),
    );
    assert_eq!(chain.editor.recv()["id"], 1);
    assert!(
        chain.asked.lock().unwrap().retired.is_empty(),
        "one request still waits"
    );
    send(
        chain.proxy(1),
        json!({"jsonrpc":"2.0","id":at_old["id"].as_u64().unwrap() + 1,"result":{}}),
    );
    assert_eq!(chain.editor.recv()["id"], 2);
    let old = chain.proxy(1).id;
    assert_eq!(chain.asked.lock().unwrap().retired, vec![old]);
    assert!(chain.is_closed(chain.proxies.first().unwrap()));
    // Its exit afterwards is no failure.
    chain.exited(old, "exited with status 0", &[]);
    send(&new, json!({"jsonrpc":"2.0","id":at_new["id"],"result":{}}));
    assert_eq!(chain.editor.recv()["id"], 3);
    chain.editor_leaves();
}

#[test]
fn an_old_instance_still_busy_after_shutdown_grace_is_stopped_and_its_requests_answered() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    chain.editor_sends(&prompt(1));
    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    warm(&mut new, "agent");
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/config_reloaded"
    );
    chain.sleep(Duration::from_secs(3));
    let answer = chain.editor.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["error"]["message"],
        "proxy `p1` was replaced by a reload and did not answer within shutdown_grace"
    );
    let old = chain.proxy(1).id;
    assert_eq!(chain.asked.lock().unwrap().retired, vec![old]);
}

#[test]
fn added_proxies_go_in_and_removed_ones_are_routed_around() {
    let mut chain = Spec::new(2).awaiting_initialize().start();
    initialize(&mut chain);
    let mut first = chain.new_peer();
    let mut last = chain.new_peer();
    chain
        .reload(plan(vec![
            ReloadStep::Insert {
                before: 1,
                instance: instance(first.id, "first"),
            },
            ReloadStep::Remove { position: 1 },
            ReloadStep::Insert {
                before: 3,
                instance: instance(last.id, "last"),
            },
        ]))
        .unwrap();
    // One put first is answered as the editor was; one put last as p2 was (by the agent).
    warm(&mut first, "p1");
    assert!(
        chain.editor.has_pending().is_none(),
        "no swap before every one answered"
    );
    warm(&mut last, "agent");
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/config_reloaded"
    );
    assert_eq!(
        chain.asked.lock().unwrap().swapped,
        vec![vec![
            Placement::Started(first.id),
            Placement::Kept(1),
            Placement::Kept(2),
            Placement::Started(last.id),
            Placement::Kept(3),
        ]]
    );
    // The removed p1 had nothing to answer: stopped at once.
    let p1 = chain.proxy(1).id;
    assert_eq!(chain.asked.lock().unwrap().retired, vec![p1]);
    // editor → first → p2 → last → agent, and back.
    chain.editor.send(&prompt(1));
    let at_first = first.recv();
    assert_eq!(at_first["method"], "session/prompt");
    send(
        &first,
        json!({"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}),
    );
    let at_p2 = chain.proxy(2).recv();
    assert_eq!(at_p2["method"], "session/prompt");
    send(
        chain.proxy(2),
        json!({"jsonrpc":"2.0","id":6,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}),
    );
    let at_last = last.recv();
    assert_eq!(at_last["method"], "session/prompt");
    send(
        &last,
        json!({"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}),
    );
    let at_agent = chain.agent().recv();
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","id":at_agent["id"],"result":{}}),
    );
    assert_eq!(last.recv()["id"], 7);
    send(
        &last,
        json!({"jsonrpc":"2.0","id":at_last["id"],"result":{}}),
    );
    assert_eq!(chain.proxy(2).recv()["id"], 6);
    send(
        chain.proxy(2),
        json!({"jsonrpc":"2.0","id":at_p2["id"],"result":{}}),
    );
    assert_eq!(first.recv()["id"], 5);
    send(
        &first,
        json!({"jsonrpc":"2.0","id":at_first["id"],"result":{}}),
    );
    assert_eq!(chain.editor.recv()["id"], 1);
    // The agent's notifications toward the editor flow through the new chain too.
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}),
    );
    assert_eq!(last.recv()["method"], "proxy/successor");
    chain.editor_leaves();
}

#[test]
fn a_reload_whose_instance_fails_changes_nothing_and_the_editor_is_told() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    let init = new.recv();
    send(
        &new,
        json!({"jsonrpc":"2.0","id":init["id"],"error":{"code":-32603,"message":"bad flag"}}),
    );
    let notice = chain.editor.recv();
    assert_eq!(notice["method"], "_acp-conductor/config_rejected");
    assert_eq!(
        notice["params"]["message"],
        "the reload was abandoned: proxy `p1` answered initialize with an error: \
         {\"code\":-32603,\"message\":\"bad flag\"}; the chain is unchanged"
    );
    assert_eq!(chain.asked.lock().unwrap().retired, vec![new.id]);
    assert!(chain.asked.lock().unwrap().swapped.is_empty());
    // The old instance still serves.
    assert_eq!(chain.editor_sends(&prompt(1))["method"], "session/prompt");
}

#[test]
fn a_silent_new_instance_is_given_up_after_its_startup_timeout() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    new.recv();
    chain.sleep(Duration::from_secs(61));
    let notice = chain.editor.recv();
    assert_eq!(notice["method"], "_acp-conductor/config_rejected");
    assert!(
        notice["params"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer initialize within its startup_timeout"),
        "{notice}"
    );
    // Its exit later is not a failure of the chain.
    chain.exited(new.id, "killed", &[]);
    assert_eq!(chain.editor_sends(&prompt(1))["method"], "session/prompt");
}

#[test]
fn a_second_reload_waits_for_the_first_and_plans_name_proxies_only() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    let new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    let other = chain.new_peer();
    assert_eq!(
        chain.reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(other.id, "p1"),
        }])),
        Err(ReloadRefused::Busy)
    );
    let mut fresh = Spec::new(1).start();
    assert_eq!(
        fresh.reload(plan(vec![ReloadStep::Remove { position: 2 }])),
        Err(ReloadRefused::BadPosition(2))
    );
    assert_eq!(
        fresh.reload(plan(vec![ReloadStep::Remove { position: 0 }])),
        Err(ReloadRefused::BadPosition(0))
    );
    fresh.editor_sends(&prompt(1));
}

#[test]
fn a_reload_before_the_chain_is_initialized_swaps_at_once() {
    let chain = Spec::new(1).awaiting_initialize().start();
    let new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    assert_eq!(chain.asked.lock().unwrap().swapped.len(), 1);
    // The editor's initialize reaches the new instance.
    chain.editor.send(INITIALIZE);
    let mut new = new;
    assert_eq!(new.recv()["method"], "proxy/initialize");
}

#[test]
fn open_sessions_are_replayed_to_a_new_instance_and_the_agent_sees_them_once() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    let asked = chain.editor_sends(
        r#"{"jsonrpc":"2.0","id":"n","method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#,
    );
    send(
        chain.proxy(1),
        json!({"jsonrpc":"2.0","id":8,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}}),
    );
    let at_agent = chain.agent().recv();
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","id":at_agent["id"],"result":{"sessionId":"s1","modes":null}}),
    );
    assert_eq!(chain.proxy(1).recv()["id"], 8);
    send(
        chain.proxy(1),
        json!({"jsonrpc":"2.0","id":asked["id"],"result":{"sessionId":"s1","modes":null}}),
    );
    assert_eq!(chain.editor.recv()["result"]["sessionId"], "s1");

    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    warm(&mut new, "agent");
    // The session is opened at the new instance as the editor opened it.
    let replay = new.recv();
    assert_eq!(replay["method"], "session/new");
    assert_eq!(replay["params"], json!({"cwd":"/p","mcpServers":[]}));
    assert!(
        chain.editor.has_pending().is_none(),
        "not placed before it answered"
    );
    // Its forwarded copy is answered with what the agent answered; the agent sees nothing.
    send(
        &new,
        json!({"jsonrpc":"2.0","id":"copy","method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}}),
    );
    let copy = new.recv();
    assert_eq!(copy["id"], "copy");
    assert_eq!(copy["result"], json!({"sessionId":"s1","modes":null}));
    assert!(chain.agent().has_pending().is_none());
    send(
        &new,
        json!({"jsonrpc":"2.0","id":replay["id"],"result":{"sessionId":"s1"}}),
    );
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/config_reloaded"
    );
    // The session goes on through the new instance.
    chain.editor.send(&prompt(1));
    assert_eq!(new.recv()["params"]["sessionId"], "s1");
}

#[test]
fn a_closed_session_is_not_replayed() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    chain.editor.send(INITIALIZE);
    let init = chain.agent().recv();
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":1}}),
    );
    chain.editor.recv();
    for (id, method, params, result) in [
        (
            "1",
            "session/new",
            json!({"cwd":"/p"}),
            json!({"sessionId":"a"}),
        ),
        ("2", "session/close", json!({"sessionId":"a"}), json!({})),
    ] {
        send(
            &chain.editor,
            json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
        );
        let at = chain.agent().recv();
        send(
            chain.agent(),
            json!({"jsonrpc":"2.0","id":at["id"],"result":result}),
        );
        chain.editor.recv();
    }
    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Insert {
            before: 1,
            instance: instance(new.id, "p"),
        }]))
        .unwrap();
    let init = new.recv();
    send(&new, json!({"jsonrpc":"2.0","id":init["id"],"result":{}}));
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/config_reloaded"
    );
    assert!(new.has_pending().is_none(), "no session to replay");
}

#[test]
fn the_editors_reload_request_is_answered_with_what_changed() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":"r","method":"_acp-conductor/reload"}"#);
    assert_eq!(chain.reloads_wanted(), 1);
    // A second one while the first waits is refused.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":"again","method":"_acp-conductor/reload"}"#);
    let busy = chain.editor.recv();
    assert_eq!(busy["id"], "again");
    assert_eq!(
        busy["error"]["message"],
        "another reload is still starting its proxies"
    );
    assert_eq!(chain.reloads_wanted(), 1);
    let mut new = chain.new_peer();
    chain
        .reload(plan(vec![ReloadStep::Replace {
            position: 1,
            instance: instance(new.id, "p1"),
        }]))
        .unwrap();
    warm(&mut new, "agent");
    let answer = chain.editor.recv();
    assert_eq!(
        answer,
        json!({"jsonrpc":"2.0","id":"r","result":{"changes":["the changes"]}})
    );
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/config_reloaded"
    );
    assert!(chain.agent().has_pending().is_none(), "not passed on");
}

#[test]
fn the_editors_reload_request_hears_an_unchanged_or_invalid_file() {
    let mut chain = Spec::new(1).awaiting_initialize().start();
    initialize(&mut chain);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"_acp-conductor/reload"}"#);
    chain.with_router(|router| router.reload_unchanged());
    assert_eq!(
        chain.editor.recv(),
        json!({"jsonrpc":"2.0","id":1,"result":{"changes":[]}})
    );
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"_acp-conductor/reload"}"#);
    chain.with_router(|router| router.reload_rejected("c.toml:3:1: unknown key `x`"));
    let refused = chain.editor.recv();
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["message"], "c.toml:3:1: unknown key `x`");
    let notice = chain.editor.recv();
    assert_eq!(notice["method"], "_acp-conductor/config_rejected");
    assert_eq!(notice["params"]["message"], "c.toml:3:1: unknown key `x`");
    assert_eq!(chain.reloads_wanted(), 2);
}

#[test]
fn a_reload_that_restarts_the_agent_answers_what_it_had_and_loses_its_sessions() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    chain.editor.send(INITIALIZE);
    let init = chain.agent().recv();
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":1}}),
    );
    chain.editor.recv();
    send(
        &chain.editor,
        json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p"}}),
    );
    let at = chain.agent().recv();
    send(
        chain.agent(),
        json!({"jsonrpc":"2.0","id":at["id"],"result":{"sessionId":"s1"}}),
    );
    chain.editor.recv();
    chain.editor.send(&prompt(2));
    chain.agent().recv();
    chain
        .reload(ReloadPlan {
            steps: vec![ReloadStep::RestartAgent],
            changes: vec!["agent changed (args): restarted".to_owned()],
        })
        .unwrap();
    let answered = chain.editor.recv();
    assert_eq!(answered["id"], 2);
    assert_eq!(
        answered["error"]["message"],
        "agent `agent` was restarted by a configuration reload (on_reload = \"restart\")"
    );
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/config_reloaded"
    );
    // Started again and initialized as before.
    let agent = chain.restarted(1);
    let init = agent.recv();
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"], json!({"protocolVersion":1}));
    send(
        agent,
        json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":1}}),
    );
    assert_eq!(
        chain.editor.recv()["method"],
        "_acp-conductor/component_restarted"
    );
    // The old session is lost; the conductor says so without asking the new agent.
    chain.editor.send(&prompt(3));
    let lost = chain.editor.recv();
    assert_eq!(lost["id"], 3);
    assert!(
        lost["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer has session `s1`"),
        "{lost}"
    );
}
