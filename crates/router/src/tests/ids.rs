//! Ids: every request goes on with an id of the conductor's own, and its response comes back
//! with the requester's id byte for byte, whatever JSON that id was written as.

use super::harness::Spec;

#[test]
fn responses_come_back_with_the_requesters_exact_id_text() {
    let mut chain = Spec::new(1).start();
    let ids = [
        "0",
        r#""0""#,
        "9007199254740993",
        r#""\u0061\n""#,
        "-5",
        r#""""#,
    ];
    for id in ids {
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{}}}}"#
        ));
    }
    let mut own = Vec::new();
    for _ in ids {
        own.push(chain.proxy(1).recv()["id"].as_u64().unwrap());
    }
    assert_eq!(
        own,
        [1, 2, 3, 4, 5, 6],
        "the conductor's ids on a link count from 1"
    );
    // Answered out of order.
    for (n, own) in own.iter().enumerate().rev() {
        chain.proxy(1).send(&format!(
            r#"{{"jsonrpc":"2.0","id":{own},"result":{{"n":{n}}}}}"#
        ));
    }
    for (n, id) in ids.iter().enumerate().rev() {
        assert_eq!(
            chain.editor.recv_text(),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"n":{n}}}}}"#)
        );
    }
}

#[test]
fn requests_from_different_links_with_the_same_id_stay_apart() {
    let mut chain = Spec::new(1).start();
    // The editor and the proxy both use id 1 toward the agent.
    let to_proxy = chain.editor_sends(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"from":"editor"}}"#,
    );
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"x/own","params":{"from":"proxy"}}}"#,
    );
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{{"method":"session/prompt","params":{}}}}}"#,
        to_proxy["params"]
    ));
    let first = chain.agent().recv();
    let second = chain.agent().recv();
    assert_eq!(
        (first["id"].as_u64(), second["id"].as_u64()),
        (Some(1), Some(2))
    );
    // The agent answers the second first: each answer finds its own requester.
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":2,"result":{"to":"editor"}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"to":"proxy"}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":2,"result":{"to":"editor"}}"#
    );
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"to":"proxy"}}"#
    );
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        to_proxy["id"]
    ));
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
}

#[test]
fn a_response_to_no_pending_request_is_dropped_and_routing_goes_on() {
    let mut chain = Spec::new(0).start();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":42,"result":{"stray":true}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":"x","result":{"stray":true}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"after":true}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"after":true}}"#,
        "nothing of the stray responses reaches the editor"
    );
}

#[test]
fn a_response_is_delivered_once_even_if_the_peer_repeats_it() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":"r","method":"session/new","params":{}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"again"}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"x/after","params":{}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":"r","result":{"sessionId":"s"}}"#
    );
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","method":"x/after","params":{}}"#
    );
}

#[test]
fn error_responses_keep_their_error_bytes() {
    let mut chain = Spec::new(1).start();
    let own = chain.editor_sends(r#"{"jsonrpc":"2.0","id":3,"method":"session/load","params":{}}"#)
        ["id"]
        .clone();
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{own},"error":{{"code":-32002,"message":"no","data":{{"n":1.50}}}}}}"#
    ));
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"no","data":{"n":1.50}}}"#
    );
}

#[test]
fn a_response_comes_back_as_its_sender_wrote_it_with_only_the_id_changed() {
    let mut chain = Spec::new(1).start();
    // `result` before `id`, spaces and a member no schema knows: all of it stays.
    let to_proxy = chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":"ed-1","method":"session/prompt","params":{}}"#);
    let own = &to_proxy["id"];
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","result":{{ "stopReason":"end_turn" }}, "id" : {own} ,"x-extra":[1]}}"#
    ));
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","result":{ "stopReason":"end_turn" }, "id" : "ed-1" ,"x-extra":[1]}"#
    );

    // A proxy's request to its successor (proxy/successor) is answered the same way, errors too.
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"x/own","params":{}}}"#,
    );
    let at_agent = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"error":{{"code":-32000,"message":"no"}},"id":{},"jsonrpc":"2.0"}}"#,
        at_agent["id"]
    ));
    assert_eq!(
        chain.proxy(1).recv_text(),
        r#"{"error":{"code":-32000,"message":"no"},"id":7,"jsonrpc":"2.0"}"#
    );
}

#[test]
fn a_rewritten_initialize_result_keeps_its_members_in_place() {
    let mut chain = Spec::new(0).awaiting_initialize().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#);
    let at_agent = chain.agent().recv();
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","result":{{"protocolVersion":1,"agentCapabilities":{{}}}},"id":{}}}"#,
        at_agent["id"]
    ));
    assert_eq!(
        chain.editor.recv_text(),
        r#"{"jsonrpc":"2.0","result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}},"id":0}"#
    );
}
