//! `$/cancel_request` is hop-scoped: it names the sender's id for a request on its own link,
//! goes on plain to the link the request was forwarded to under the id known there, and is
//! never wrapped; a cancel for a request no longer waiting goes nowhere.

use super::harness::{Spec, json};

#[test]
fn a_cancel_names_the_id_each_hop_knows() {
    let mut chain = Spec::new(2).start();
    let at_p1 = chain
        .editor_sends(r#"{"jsonrpc":"2.0","id":"turn-1","method":"session/prompt","params":{}}"#);
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":70,"method":"proxy/successor","params":{{"method":"session/prompt","params":{}}}}}"#,
        at_p1["params"]
    ));
    let at_p2 = chain.proxy(2).recv();
    chain.proxy(2).send(
        r#"{"jsonrpc":"2.0","id":80,"method":"proxy/successor","params":{"method":"session/prompt","params":{}}}"#,
    );
    let at_agent = chain.agent().recv();

    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"turn-1"}}"#);
    assert_eq!(
        chain.proxy(1).recv(),
        json(&format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_p1["id"]
        ))
    );
    // The proxy cancels its own `proxy/successor` request 70, plain, as schema 1.20 says.
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":70}}"#);
    assert_eq!(
        chain.proxy(2).recv(),
        json(&format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_p2["id"]
        ))
    );
    // Proxies of earlier SDK releases wrap it; it means the same.
    chain.proxy(2).send(
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"$/cancel_request","params":{"requestId":80}}}"#,
    );
    assert_eq!(
        chain.agent().recv(),
        json(&format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_agent["id"]
        ))
    );
}

#[test]
fn a_cancel_keeps_the_other_members_of_its_params() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{}}"#);
    chain.editor.send(
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"_meta":{"why":"user"},"requestId":5}}"#,
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"_meta":{"why":"user"},"requestId":1}}"#
    );
}

#[test]
fn string_ids_match_by_their_decoded_text_numbers_by_their_literal() {
    let mut chain = Spec::new(0).start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{}}"#);
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#);
    chain.agent().recv();
    // "\u0061" is "a"; "1" is not 1.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"\u0061"}}"#);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"1"}}"#);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#);
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#
    );
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}"#,
        "the cancel naming the string \"1\" matched nothing and went nowhere"
    );
}

#[test]
fn a_cancel_for_an_answered_request_goes_nowhere() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    chain.editor.recv();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}"#);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
    assert_eq!(
        chain.agent().recv_text(),
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
        "the late cancel was dropped, the next message arrives"
    );
}

#[test]
fn the_agents_cancel_reaches_a_proxy_plain_naming_its_proxy_successor_request() {
    let mut chain = Spec::new(1).start();
    chain.agent().send(
        r#"{"jsonrpc":"2.0","id":"ask-1","method":"session/request_permission","params":{}}"#,
    );
    let at_p1 = chain.proxy(1).recv();
    assert_eq!(at_p1["method"], "proxy/successor");

    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"ask-1"}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_p1["id"]
        ),
        "not wrapped: the cancel names the proxy/successor request of this hop"
    );

    // The proxy cancels what it forwarded to the editor, plain, naming its own id.
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":"p-9","method":"session/request_permission","params":{}}"#);
    let at_editor = chain.editor.recv();
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p-9"}}"#);
    assert_eq!(
        chain.editor.recv_text(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_editor["id"]
        )
    );
}

#[test]
fn a_cancel_is_matched_by_its_sender_as_well_as_its_id() {
    let mut chain = Spec::new(1).start();
    // The editor's request 7 waits at the proxy; the proxy's own request 7 waits at the agent.
    let at_p1 =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{}}"#);
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"session/load","params":{}}}"#,
    );
    let at_agent = chain.agent().recv();

    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#);
    assert_eq!(
        chain.proxy(1).recv_text(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_p1["id"]
        ),
        "the editor's cancel is for the editor's request"
    );
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#);
    assert_eq!(
        chain.agent().recv_text(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            at_agent["id"]
        ),
        "the proxy's cancel is for the proxy's request"
    );
}
