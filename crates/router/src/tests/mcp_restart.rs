//! An agent's MCP calls to a provider being started again, in memory with a made-up clock:
//! they wait for it, bounded by its `request_timeout`, and a connection that died with the
//! old instance is made again (with the client's handshake) before they go on.

use std::time::Duration;

use serde_json::json;

use super::harness::{Chain, Peer, Spec};
use crate::policy::{AfterRestarts, FailurePolicy, OnFailure};

const REQUEST_TIMEOUT: Duration = Duration::from_millis(200);

/// Proxy 1 restarts on failure (after 250 ms, the first backoff) and must answer within
/// [`REQUEST_TIMEOUT`].
fn restarting_chain() -> Chain {
    let policy = FailurePolicy {
        on_failure: OnFailure::Restart {
            then: AfterRestarts::Fail,
        },
        request_timeout: Some(REQUEST_TIMEOUT),
        ..FailurePolicy::default()
    };
    Spec::new(1).on_failure(1, policy).start()
}

/// Proxy 1 declares `n-1` (as `member`) in a session the agent gets; a shim names it.
fn shim_for(chain: &mut Chain, member: &str) -> Peer {
    let setup = json!({"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes",member:"n-1"}]}}});
    chain.proxy(1).send(&setup.to_string());
    chain.agent().recv();
    let mut shim = chain.connect_shim();
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text(), r#"{"mcpBridge":"ok"}"#);
    shim
}

const CLIENT_INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}"#;

fn call(id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"recall"}}}}"#)
}

/// Proxy 1 answers request `asked` with `result`.
fn answer(chain: &mut Chain, asked: &serde_json::Value, result: serde_json::Value) {
    let reply = json!({"jsonrpc":"2.0","id":asked["id"],"result":result});
    chain.proxy(1).send(&reply.to_string());
}

fn kill_provider(chain: &mut Chain) {
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "was killed by signal 9", &[]);
}

/// A call held past the provider's `request_timeout` is answered with an MCP error naming
/// the provider and never sent.
fn assert_held_call_times_out(chain: &mut Chain, shim: &mut Peer) {
    shim.send(&call("late"));
    chain.sleep(REQUEST_TIMEOUT - Duration::from_millis(1));
    assert!(
        shim.has_pending().is_none(),
        "held until its request_timeout"
    );
    chain.sleep(Duration::from_millis(1));
    let late = shim.recv();
    assert_eq!(late["id"], "late");
    assert_eq!(late["error"]["code"], -32001);
    assert_eq!(
        late["error"]["message"],
        "MCP server `notes`: proxy `p1` is being restarted and did not run again within its request_timeout (200 ms)"
    );
}

#[test]
fn a_connection_that_died_with_its_provider_is_made_again_and_held_calls_are_bounded() {
    let mut chain = restarting_chain();
    let mut shim = shim_for(&mut chain, "id");
    let connect = chain.proxy(1).recv();
    assert_eq!(connect["params"]["method"], "mcp/connect");
    answer(&mut chain, &connect, json!({"connectionId":"c-1"}));
    shim.send(CLIENT_INITIALIZE);
    let initialize = chain.proxy(1).recv();
    assert_eq!(initialize["params"]["params"]["method"], "initialize");
    answer(
        &mut chain,
        &initialize,
        json!({"protocolVersion":"2025-06-18"}),
    );
    assert_eq!(shim.recv()["id"], 0);
    shim.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    chain.proxy(1).recv();

    kill_provider(&mut chain);
    assert_held_call_times_out(&mut chain, &mut shim);
    // Sent later, it waits for the restart (250 ms after the failure), within its limit.
    shim.send(&call("t2"));
    let p1 = chain.restarted(1);
    let reconnect = p1.recv();
    assert_eq!(reconnect["params"]["method"], "mcp/connect");
    assert_eq!(reconnect["params"]["params"]["acpId"], "n-1");
    answer(&mut chain, &reconnect, json!({"connectionId":"c-2"}));
    // The client's handshake, made again on the new connection, then its held call.
    let handshake = chain.proxy(1).recv();
    let inner = &handshake["params"]["params"];
    assert_eq!(inner["connectionId"], "c-2");
    assert_eq!(inner["method"], "initialize");
    assert_eq!(inner["params"]["clientInfo"]["name"], "a");
    let initialized = chain.proxy(1).recv();
    assert_eq!(
        initialized["params"]["params"]["method"],
        "notifications/initialized"
    );
    assert!(initialized.get("id").is_none());
    let held = chain.proxy(1).recv();
    assert_eq!(held["params"]["params"]["connectionId"], "c-2");
    assert_eq!(held["params"]["params"]["method"], "tools/call");
    // The handshake's answer goes nowhere; the call's reaches the client.
    answer(
        &mut chain,
        &handshake,
        json!({"protocolVersion":"2025-06-18"}),
    );
    answer(&mut chain, &held, json!({"content":[]}));
    assert_eq!(
        shim.recv_text(),
        r#"{"jsonrpc":"2.0","id":"t2","result":{"content":[]}}"#
    );
    assert!(shim.has_pending().is_none());
}

#[test]
fn a_call_held_for_a_connectionless_provider_ends_at_its_request_timeout() {
    let mut chain = restarting_chain();
    let mut shim = shim_for(&mut chain, "serverId");
    kill_provider(&mut chain);
    assert_held_call_times_out(&mut chain, &mut shim);
    shim.send(&call("t2"));
    let p1 = chain.restarted(1);
    let held = p1.recv();
    let inner = &held["params"]["params"];
    assert_eq!(inner["method"], "tools/call", "only the call still held");
    assert_eq!(inner["serverId"], "n-1");
    answer(&mut chain, &held, json!({"result":{"content":[]}}));
    assert_eq!(
        shim.recv_text(),
        r#"{"jsonrpc":"2.0","id":"t2","result":{"content":[]}}"#
    );
}
