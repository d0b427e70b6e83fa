//! Ordering: what one component sends another arrives in the order sent, so a notification
//! written after a response can never overtake it, through any number of proxies.

use super::harness::Spec;

#[test]
fn a_response_arrives_before_the_notifications_sent_after_it() {
    let mut chain = Spec::new(0).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    for n in 0..50 {
        chain.agent().send(&format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"n":{n}}}}}"#
        ));
    }
    assert_eq!(chain.editor.recv()["result"]["stopReason"], "end_turn");
    for n in 0..50 {
        assert_eq!(chain.editor.recv()["params"]["n"], n);
    }
}

#[test]
fn order_holds_through_three_proxies_for_interleaved_kinds() {
    let mut chain = Spec::new(3).start();
    // The agent sends a request, notifications and (later) its answer to the editor's
    // request; each proxy passes everything on toward the editor as it arrives.
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":"e","method":"session/prompt","params":{}}"#);
    let mut id_at = Vec::new();
    for k in 1..=3 {
        let request = chain.proxy(k).recv();
        id_at.push(request["id"].clone());
        chain.proxy(k).send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"proxy/successor","params":{{"method":"session/prompt","params":{{}}}}}}"#,
            100 + k
        ));
    }
    let at_agent = chain.agent().recv();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}"#);
    chain.agent().send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"stopReason":"end_turn"}}}}"#,
        at_agent["id"]
    ));
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":2}}"#);
    for k in (1..=3).rev() {
        let first = chain.proxy(k).recv();
        let second = chain.proxy(k).recv();
        let third = chain.proxy(k).recv();
        assert_eq!(first["params"]["params"]["n"], 1, "at p{k}");
        assert_eq!(second["id"], 100 + k, "at p{k}");
        assert_eq!(third["params"]["params"]["n"], 2, "at p{k}");
        // The proxy passes them on in the same order.
        chain
            .proxy(k)
            .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}"#);
        chain.proxy(k).send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"stopReason":"end_turn"}}}}"#,
            id_at[k - 1]
        ));
        chain
            .proxy(k)
            .send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"n":2}}"#);
    }
    assert_eq!(chain.editor.recv()["params"]["n"], 1);
    assert_eq!(chain.editor.recv()["id"], "e");
    assert_eq!(chain.editor.recv()["params"]["n"], 2);
}
