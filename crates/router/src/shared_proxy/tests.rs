//! Tests of a shared proxy's routing (`routes.rs`), in memory: frames in from connections
//! and from the proxy, and where each one goes, rewritten, for every rule of the module.

use bytes::Bytes;
use serde_json::{Value, json};

use super::{Connection, Delivery, Routes};

fn frame(value: Value) -> Bytes {
    Bytes::from(serde_json::to_vec(&value).unwrap())
}

fn parsed(bytes: &Bytes) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// A shared proxy's routes with `n` connections attached (numbered from 1).
fn routes(n: Connection) -> Routes {
    let mut routes = Routes::new("guard");
    for c in 1..=n {
        routes.attach(c);
    }
    routes
}

fn from(routes: &mut Routes, connection: Connection, value: Value) -> Vec<Delivery> {
    let mut out = Vec::new();
    routes.route_from_connection(connection, frame(value), &mut out);
    out
}

fn from_proxy(routes: &mut Routes, value: Value) -> Vec<Delivery> {
    let mut out = Vec::new();
    routes.route_from_proxy(frame(value), &mut out);
    out
}

/// The one frame sent to the proxy.
fn to_proxy(out: &[Delivery]) -> Value {
    match out {
        [Delivery::ToProxy(f)] => parsed(f),
        other => panic!("expected one frame to the proxy, got {other:?}"),
    }
}

/// The one frame sent to a connection, and which.
fn to_connection(out: &[Delivery]) -> (Connection, Value) {
    match out {
        [Delivery::ToConnection(c, f)] => (*c, parsed(f)),
        other => panic!("expected one frame to a connection, got {other:?}"),
    }
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn successor(method: &str, params: Value) -> Value {
    json!({"method": method, "params": params})
}

#[test]
fn requests_go_under_the_hubs_ids_and_answers_come_back_under_the_connections() {
    let mut r = routes(2);
    let prompt = json!({"sessionId": "s", "prompt": []});
    let first = to_proxy(&from(
        &mut r,
        1,
        request(json!(0), "session/prompt", prompt.clone()),
    ));
    let second = to_proxy(&from(
        &mut r,
        2,
        request(json!(0), "session/prompt", prompt),
    ));
    assert_ne!(
        first["id"], second["id"],
        "the same id from two connections"
    );
    let answer = from_proxy(
        &mut r,
        result(second["id"].clone(), json!({"stopReason": "end_turn"})),
    );
    assert_eq!(
        to_connection(&answer),
        (2, result(json!(0), json!({"stopReason": "end_turn"})))
    );
    // A string id comes back byte for byte.
    let asked = to_proxy(&from(
        &mut r,
        1,
        request(json!("a-1"), "session/prompt", json!({"sessionId": "s"})),
    ));
    let (c, answer) = to_connection(&from_proxy(&mut r, result(asked["id"].clone(), json!({}))));
    assert_eq!((c, answer["id"].clone()), (1, json!("a-1")));
    // Answered once: a second answer goes nowhere.
    assert!(from_proxy(&mut r, result(asked["id"].clone(), json!({}))).is_empty());
}

#[test]
fn sessions_are_qualified_by_connection_on_the_way_in_and_out() {
    let mut r = routes(2);
    // The editor's prompt, a plain call.
    let sent = to_proxy(&from(
        &mut r,
        2,
        request(
            json!(3),
            "session/prompt",
            json!({"sessionId": "1", "prompt": [{"type": "text", "text": "hi"}]}),
        ),
    ));
    assert_eq!(sent["params"]["sessionId"], "2/1");
    assert_eq!(sent["params"]["prompt"][0]["text"], "hi");
    // An update from the agent, wrapped, toward the proxy.
    let update = notification(
        "proxy/successor",
        successor(
            "session/update",
            json!({"sessionId": "1", "update": {"x": 1}}),
        ),
    );
    let sent = to_proxy(&from(&mut r, 1, update));
    assert_eq!(sent["method"], "proxy/successor");
    assert_eq!(sent["params"]["method"], "session/update");
    assert_eq!(sent["params"]["params"]["sessionId"], "1/1");
    assert_eq!(sent["params"]["params"]["update"]["x"], 1);
    // The proxy passes that update on to connection 1's editor, and asks connection 2's for
    // a permission: each goes to its own connection, with the session as it knows it.
    let out = from_proxy(
        &mut r,
        notification("session/update", json!({"sessionId": "1/1", "update": {}})),
    );
    assert_eq!(
        to_connection(&out),
        (
            1,
            notification("session/update", json!({"sessionId": "1", "update": {}}))
        )
    );
    let out = from_proxy(
        &mut r,
        request(
            json!(9),
            "session/request_permission",
            json!({"sessionId": "2/1"}),
        ),
    );
    assert_eq!(
        to_connection(&out),
        (
            2,
            request(
                json!(9),
                "session/request_permission",
                json!({"sessionId": "1"})
            )
        )
    );
    // Its answer goes back to the proxy as it came.
    assert_eq!(
        to_proxy(&from(
            &mut r,
            2,
            result(json!(9), json!({"outcome": {"outcome": "cancelled"}}))
        )),
        result(json!(9), json!({"outcome": {"outcome": "cancelled"}}))
    );
    // A wrapped request of the proxy's to the successor, named by session.
    let out = from_proxy(
        &mut r,
        request(
            json!(10),
            "proxy/successor",
            successor("session/prompt", json!({"sessionId": "1/1", "prompt": []})),
        ),
    );
    let (c, sent) = to_connection(&out);
    assert_eq!(
        (c, sent["params"]["params"]["sessionId"].clone()),
        (1, json!("1"))
    );
    assert_eq!(sent["id"], 10);
}

#[test]
fn a_new_sessions_id_is_qualified_in_the_agents_answer_and_plain_in_the_editors() {
    let mut r = routes(1);
    let new = to_proxy(&from(
        &mut r,
        1,
        request(
            json!(1),
            "session/new",
            json!({"cwd": "/", "mcpServers": []}),
        ),
    ));
    // The proxy forwards it to the successor; its answer carries the agent's session id.
    let out = from_proxy(
        &mut r,
        request(
            json!(5),
            "proxy/successor",
            successor("session/new", json!({"cwd": "/", "mcpServers": []})),
        ),
    );
    assert_eq!(to_connection(&out).0, 1);
    let answer = to_proxy(&from(
        &mut r,
        1,
        result(json!(5), json!({"sessionId": "sess-1", "modes": null})),
    ));
    assert_eq!(
        answer["result"],
        json!({"sessionId": "1/sess-1", "modes": null})
    );
    // The proxy answers the editor with what it saw: the editor gets the agent's id.
    let out = from_proxy(
        &mut r,
        result(
            new["id"].clone(),
            json!({"sessionId": "1/sess-1", "modes": null}),
        ),
    );
    assert_eq!(
        to_connection(&out),
        (
            1,
            result(json!(1), json!({"sessionId": "sess-1", "modes": null}))
        )
    );
}

#[test]
fn set_up_requests_take_turns_and_what_the_proxy_sends_meanwhile_is_the_setters() {
    let mut r = routes(2);
    let init = |id| request(json!(id), "proxy/initialize", json!({"protocolVersion": 1}));
    let first = to_proxy(&from(&mut r, 1, init(0)));
    assert!(
        from(&mut r, 2, init(0)).is_empty(),
        "connection 2 waits its turn"
    );
    // The proxy initializes its successor: that is connection 1's.
    let out = from_proxy(
        &mut r,
        request(
            json!(1),
            "proxy/successor",
            successor("initialize", json!({"protocolVersion": 1})),
        ),
    );
    assert_eq!(to_connection(&out).0, 1);
    assert_eq!(
        to_proxy(&from(
            &mut r,
            1,
            result(json!(1), json!({"protocolVersion": 1}))
        )),
        result(json!(1), json!({"protocolVersion": 1}))
    );
    // Its answer to connection 1 lets connection 2's request go.
    let out = from_proxy(
        &mut r,
        result(first["id"].clone(), json!({"protocolVersion": 1})),
    );
    let [Delivery::ToConnection(1, _), Delivery::ToProxy(second)] = out.as_slice() else {
        panic!("expected the answer, then the waiting request: {out:?}");
    };
    let second = parsed(second);
    assert_eq!(second["method"], "proxy/initialize");
    // Now the proxy's successor initialize is connection 2's.
    let out = from_proxy(
        &mut r,
        request(
            json!(2),
            "proxy/successor",
            successor("initialize", json!({})),
        ),
    );
    assert_eq!(to_connection(&out).0, 2);
}

#[test]
fn a_connection_keeps_its_requests_in_order_while_it_waits() {
    let mut r = routes(2);
    let setting_up = to_proxy(&from(
        &mut r,
        1,
        request(json!(0), "session/new", json!({"cwd": "/"})),
    ));
    assert!(
        from(
            &mut r,
            2,
            request(json!(0), "session/new", json!({"cwd": "/"}))
        )
        .is_empty()
    );
    // A session-scoped request behind it waits too, so it cannot overtake.
    assert!(
        from(
            &mut r,
            2,
            request(json!(1), "session/prompt", json!({"sessionId": "x"}))
        )
        .is_empty()
    );
    // A notification does not wait.
    assert_eq!(
        to_proxy(&from(
            &mut r,
            2,
            notification("session/cancel", json!({"sessionId": "x"}))
        ))["params"]["sessionId"],
        "2/x"
    );
    let out = from_proxy(
        &mut r,
        result(setting_up["id"].clone(), json!({"sessionId": "1/a"})),
    );
    let methods: Vec<Value> = out
        .iter()
        .filter_map(|d| match d {
            Delivery::ToProxy(f) => Some(parsed(f)["method"].clone()),
            Delivery::ToConnection(..) => None,
        })
        .collect();
    assert_eq!(methods, [json!("session/new"), json!("session/prompt")]);
}

#[test]
fn the_setter_may_set_up_more_while_its_turn_lasts() {
    // An agent answering session/new may first connect to the proxy's MCP server over ACP:
    // that mcp/connect, a set-up request of the same connection, must not wait for the
    // session/new it is part of.
    let mut r = routes(2);
    to_proxy(&from(
        &mut r,
        1,
        request(json!(0), "session/new", json!({"cwd": "/"})),
    ));
    let connect = request(
        json!(7),
        "proxy/successor",
        successor("mcp/connect", json!({"acpId": "u-1"})),
    );
    let sent = to_proxy(&from(&mut r, 1, connect));
    assert_eq!(sent["params"]["method"], "mcp/connect");
    // The proxy's answer names the MCP connection: from now on it routes to connection 1.
    let out = from_proxy(
        &mut r,
        result(sent["id"].clone(), json!({"connectionId": "m-9"})),
    );
    assert_eq!(
        to_connection(&out),
        (1, result(json!(7), json!({"connectionId": "m-9"})))
    );
    let message = request(
        json!(11),
        "proxy/successor",
        successor(
            "mcp/message",
            json!({"connectionId": "m-9", "method": "tools/list"}),
        ),
    );
    let out = from_proxy(&mut r, message);
    assert_eq!(to_connection(&out).0, 1);
}

#[test]
fn mcp_messages_from_the_agent_side_do_not_wait_for_a_turn() {
    let mut r = routes(2);
    to_proxy(&from(
        &mut r,
        1,
        request(json!(0), "session/new", json!({})),
    ));
    let message = request(
        json!(3),
        "proxy/successor",
        successor(
            "mcp/message",
            json!({"connectionId": "m", "method": "tools/call"}),
        ),
    );
    assert_eq!(
        to_proxy(&from(&mut r, 2, message))["params"]["method"],
        "mcp/message"
    );
}

#[test]
fn cancellations_name_the_request_as_each_side_sent_it() {
    let mut r = routes(2);
    let sent = to_proxy(&from(
        &mut r,
        2,
        request(json!("p"), "session/prompt", json!({"sessionId": "s"})),
    ));
    let cancel = to_proxy(&from(
        &mut r,
        2,
        notification("$/cancel_request", json!({"requestId": "p"})),
    ));
    assert_eq!(
        cancel,
        notification("$/cancel_request", json!({"requestId": sent["id"].clone()}))
    );
    // Naming a request this connection did not send: nothing to cancel.
    assert!(
        from(
            &mut r,
            1,
            notification("$/cancel_request", json!({"requestId": "p"}))
        )
        .is_empty()
    );
    // The proxy cancels a request it sent to connection 1: it goes there as it is.
    from_proxy(
        &mut r,
        request(
            json!(40),
            "session/request_permission",
            json!({"sessionId": "1/s"}),
        ),
    );
    let out = from_proxy(
        &mut r,
        notification("$/cancel_request", json!({"requestId": 40})),
    );
    assert_eq!(
        to_connection(&out),
        (
            1,
            notification("$/cancel_request", json!({"requestId": 40}))
        )
    );
}

#[test]
fn a_request_cancelled_while_it_waits_is_answered_and_never_sent() {
    let mut r = routes(2);
    let first = to_proxy(&from(
        &mut r,
        1,
        request(json!(0), "session/new", json!({})),
    ));
    assert!(from(&mut r, 2, request(json!("n"), "session/new", json!({}))).is_empty());
    let out = from(
        &mut r,
        2,
        notification("$/cancel_request", json!({"requestId": "n"})),
    );
    let (c, answer) = to_connection(&out);
    assert_eq!((c, answer["id"].clone()), (2, json!("n")));
    assert_eq!(answer["error"]["code"], -32800);
    // Connection 1's turn ends: nothing of connection 2's is left to send.
    let out = from_proxy(
        &mut r,
        result(first["id"].clone(), json!({"sessionId": "1/a"})),
    );
    assert_eq!(to_connection(&out).0, 1);
}

#[test]
fn a_connection_that_leaves_is_answered_for_and_passes_its_turn_on() {
    let mut r = routes(2);
    to_proxy(&from(
        &mut r,
        1,
        request(json!(0), "session/new", json!({})),
    ));
    assert!(from(&mut r, 2, request(json!(0), "session/new", json!({}))).is_empty());
    from_proxy(
        &mut r,
        request(
            json!(77),
            "session/request_permission",
            json!({"sessionId": "1/s"}),
        ),
    );
    let mut out = Vec::new();
    r.detach(1, &mut out);
    let [Delivery::ToProxy(error), Delivery::ToProxy(waiting)] = out.as_slice() else {
        panic!("expected the error for the proxy's request, then connection 2's: {out:?}");
    };
    let error = parsed(error);
    assert_eq!(error["id"], 77);
    assert_eq!(error["error"]["code"], -32603);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("closed")
    );
    assert_eq!(parsed(waiting)["method"], "session/new");
    // What the proxy still sends for connection 1 belongs to nobody.
    let out = from_proxy(
        &mut r,
        request(
            json!(78),
            "session/request_permission",
            json!({"sessionId": "1/s"}),
        ),
    );
    assert_eq!(to_proxy(&out)["error"]["code"], -32603);
    assert!(
        from(
            &mut r,
            1,
            request(json!(1), "session/prompt", json!({"sessionId": "s"}))
        )
        .is_empty()
    );
}

#[test]
fn what_names_no_one_goes_to_the_only_connection_or_is_refused() {
    let mut r = routes(1);
    let out = from_proxy(
        &mut r,
        request(
            json!(1),
            "proxy/successor",
            successor("session/list", json!({})),
        ),
    );
    assert_eq!(to_connection(&out).0, 1);
    r.attach(2);
    let out = from_proxy(
        &mut r,
        request(
            json!(2),
            "proxy/successor",
            successor("session/list", json!({})),
        ),
    );
    let refused = to_proxy(&out);
    assert_eq!(refused["id"], 2);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("guard")
    );
    assert!(from_proxy(&mut r, notification("x/ping", json!({}))).is_empty());
    // A session of no connection, or not qualified at all.
    let out = from_proxy(
        &mut r,
        request(
            json!(3),
            "session/request_permission",
            json!({"sessionId": "9/s"}),
        ),
    );
    assert_eq!(to_proxy(&out)["id"], 3);
    let out = from_proxy(
        &mut r,
        request(
            json!(4),
            "session/request_permission",
            json!({"sessionId": "plain"}),
        ),
    );
    assert_eq!(to_proxy(&out)["id"], 4);
}

#[test]
fn an_invalid_message_from_the_proxy_is_answered_when_it_is_a_call() {
    let mut r = routes(2);
    let mut out = Vec::new();
    r.route_from_proxy(Bytes::from_static(br#"{"id":5,"method":"x"}"#), &mut out);
    let refused = to_proxy(&out);
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(5), json!(-32600))
    );
    let mut out = Vec::new();
    r.route_from_proxy(Bytes::from_static(br#"{"jsonrpc":"2.0","id":5}"#), &mut out);
    assert!(out.is_empty());
}

#[test]
fn session_ids_with_slashes_and_escapes_survive() {
    let mut r = routes(12);
    let sent = to_proxy(&from(
        &mut r,
        12,
        request(
            json!(1),
            "session/prompt",
            json!({"sessionId": "a/b\"c\u{e9}"}),
        ),
    ));
    assert_eq!(sent["params"]["sessionId"], "12/a/b\"c\u{e9}");
    let out = from_proxy(
        &mut r,
        notification("session/update", json!({"sessionId": "12/a/b\"c\u{e9}"})),
    );
    assert_eq!(
        to_connection(&out),
        (
            12,
            notification("session/update", json!({"sessionId": "a/b\"c\u{e9}"}))
        )
    );
}

#[test]
fn frames_that_need_no_rewrite_pass_byte_for_byte() {
    let mut r = routes(1);
    let raw = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"session/update","params":{ "sessionId" : "1/s", "n":1.0e2 }}"#);
    let mut out = Vec::new();
    r.route_from_proxy(raw.clone(), &mut out);
    let [Delivery::ToConnection(1, f)] = out.as_slice() else {
        panic!("{out:?}")
    };
    // Rewritten only where the session is; the number keeps its text.
    assert!(std::str::from_utf8(f).unwrap().contains("\"n\":1.0e2"));
    let raw =
        Bytes::from_static(br#"{"jsonrpc":"2.0","method":"x/note","params":{ "k" : 1.0e2 }}"#);
    let mut out = Vec::new();
    r.route_from_connection(1, raw.clone(), &mut out);
    assert_eq!(out, [Delivery::ToProxy(raw)]);
}

/// The raw bytes of the one frame delivered, and where.
fn delivered_text(out: &[Delivery]) -> String {
    match out {
        [Delivery::ToProxy(f)] | [Delivery::ToConnection(_, f)] => {
            String::from_utf8(f.to_vec()).unwrap()
        }
        other => panic!("expected one frame, got {other:?}"),
    }
}

#[test]
fn answers_keep_their_bytes_and_member_order_with_only_the_id_and_session_changed() {
    let mut r = routes(1);
    // The connection asks; the proxy answers with `result` before `id`, spaced as it likes.
    from(
        &mut r,
        1,
        request(json!("a"), "session/prompt", json!({"sessionId": "s"})),
    );
    let answer = r#"{"result":{ "stopReason":"end_turn" },"jsonrpc":"2.0","id":1}"#;
    let mut out = Vec::new();
    r.route_from_proxy(Bytes::from(answer), &mut out);
    assert_eq!(
        delivered_text(&out),
        r#"{"result":{ "stopReason":"end_turn" },"jsonrpc":"2.0","id":"a"}"#
    );

    // A session in the answer is unqualified in place.
    from(
        &mut r,
        1,
        request(json!(7), "session/new", json!({"cwd": "/"})),
    );
    let answer = r#"{"result":{"sessionId":"1/s2","x":1} ,"id":2,"jsonrpc":"2.0"}"#;
    let mut out = Vec::new();
    r.route_from_proxy(Bytes::from(answer), &mut out);
    assert_eq!(
        delivered_text(&out),
        r#"{"result":{"sessionId":"s2","x":1} ,"id":7,"jsonrpc":"2.0"}"#
    );

    // The connection's answer to the proxy's request gets its session qualified in place.
    let mut out = Vec::new();
    r.route_from_proxy(
        frame(request(
            json!(40),
            "session/request_permission",
            json!({"sessionId": "1/s"}),
        )),
        &mut out,
    );
    let mut out = Vec::new();
    r.route_from_connection(
        1,
        Bytes::from(r#"{"result":{"sessionId":"s","outcome":{}} ,"id":40,"jsonrpc":"2.0"}"#),
        &mut out,
    );
    assert_eq!(
        delivered_text(&out),
        r#"{"result":{"sessionId":"1/s","outcome":{}} ,"id":40,"jsonrpc":"2.0"}"#
    );
}
