//! The trace of a routed chain, read back from its file: every frame in and out on its link,
//! `mapsTo` pairing ids hop to hop both ways, `cancels`, shims named after their server,
//! held frames recorded once routed, and the router's component events.

use serde_json::{Value, json};

use super::harness::{Chain, Spec};
use crate::spec::{AfterRestarts, FailurePolicy, OnFailure};

/// The message records of `link` in direction `dir`, in file order.
fn on<'a>(records: &'a [Value], link: &str, dir: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["type"] == "message" && r["link"] == link && r["dir"] == dir)
        .collect()
}

/// The one record of `link` in direction `dir` with this id and kind.
fn record<'a>(records: &'a [Value], link: &str, dir: &str, kind: &str, id: Value) -> &'a Value {
    let found: Vec<&Value> = on(records, link, dir)
        .into_iter()
        .filter(|r| r["kind"] == kind && r["id"] == id)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {dir} {kind} with id {id} on {link} in {records:#?}"
    );
    found[0]
}

fn index_of(records: &[Value], wanted: &Value) -> usize {
    records
        .iter()
        .position(|r| std::ptr::eq(r, wanted))
        .expect("a record of the list")
}

fn maps_to(link: &str, id: Value) -> Value {
    json!({ "link": link, "id": id })
}

#[tokio::test]
async fn a_request_maps_hop_to_hop_to_the_agent_and_its_answer_all_the_way_back() {
    let mut chain = Spec::new(2).traced().start();
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":"e1","method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
    );
    assert_eq!(chain.proxy(1).recv().await["id"], 1);
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":10,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}"#,
    );
    assert_eq!(chain.proxy(2).recv().await["id"], 1);
    chain.proxy(2).send(
        r#"{"jsonrpc":"2.0","id":20,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}}"#,
    );
    assert_eq!(chain.agent().recv().await["id"], 1);
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    assert_eq!(chain.proxy(2).recv().await["id"], 20);
    chain
        .proxy(2)
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    assert_eq!(chain.proxy(1).recv().await["id"], 10);
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#);
    let delivered_line = chain.editor.recv_text().await;
    let records = chain.trace_records().await;

    // Toward the agent: each hop's request names the id it was forwarded under.
    let asked = record(&records, "editor", "in", "request", json!("e1"));
    assert_eq!(asked["mapsTo"], maps_to("p1", json!(1)));
    assert_eq!(asked["method"], "session/prompt");
    assert_eq!(asked["session"], "s1");
    let hop1 = record(&records, "p1", "out", "request", json!(1));
    assert!(
        index_of(&records, asked) < index_of(&records, hop1),
        "a frame in precedes what it causes"
    );
    assert_eq!(hop1["mapsTo"], Value::Null);
    let wrapped = record(&records, "p1", "in", "request", json!(10));
    assert_eq!(wrapped["wrapped"], "proxy/successor");
    assert_eq!(wrapped["method"], "session/prompt");
    assert_eq!(wrapped["mapsTo"], maps_to("p2", json!(1)));
    record(&records, "p2", "out", "request", json!(1));
    let last = record(&records, "p2", "in", "request", json!(20));
    assert_eq!(last["mapsTo"], maps_to("agent", json!(1)));
    let at_agent = record(&records, "agent", "out", "request", json!(1));
    assert_eq!(at_agent["payload"]["method"], "session/prompt");

    // And back: each response names the link and id it answers there.
    let answer = record(&records, "agent", "in", "response", json!(1));
    assert_eq!(answer["mapsTo"], maps_to("p2", json!(20)));
    assert_eq!(
        answer["method"], "session/prompt",
        "named after its request"
    );
    let answer = record(&records, "p2", "in", "response", json!(1));
    assert_eq!(answer["mapsTo"], maps_to("p1", json!(10)));
    assert_eq!(answer["method"], "session/prompt");
    let answer = record(&records, "p1", "in", "response", json!(1));
    assert_eq!(answer["mapsTo"], maps_to("editor", json!("e1")));
    let delivered = record(&records, "editor", "out", "response", json!("e1"));
    assert_eq!(delivered["mapsTo"], Value::Null);
    assert_eq!(
        delivered["payload"],
        json!({"jsonrpc":"2.0","id":"e1","result":{"stopReason":"end_turn"}})
    );
    assert_eq!(delivered["bytes"], delivered_line.len());
    assert_eq!(records.last().unwrap()["type"], "end");
}

#[tokio::test]
async fn an_agent_request_maps_to_the_editor_and_the_answer_back_to_the_agent() {
    let mut chain = Spec::new(1).traced().start();
    chain
        .agent()
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#);
    let wrapped = chain.proxy(1).recv().await;
    assert_eq!(wrapped["id"], 1);
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#);
    assert_eq!(chain.editor.recv().await["id"], 1);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}"#);
    assert_eq!(chain.proxy(1).recv().await["id"], 3);
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}"#);
    assert_eq!(chain.agent().recv().await["id"], 7);
    let records = chain.trace_records().await;

    let asked = record(&records, "agent", "in", "request", json!(7));
    assert_eq!(asked["mapsTo"], maps_to("p1", json!(1)));
    let out = record(&records, "p1", "out", "request", json!(1));
    assert_eq!(out["wrapped"], "proxy/successor");
    assert_eq!(out["method"], "fs/read_text_file");
    let asked = record(&records, "p1", "in", "request", json!(3));
    assert_eq!(asked["mapsTo"], maps_to("editor", json!(1)));
    let answer = record(&records, "editor", "in", "response", json!(1));
    assert_eq!(answer["mapsTo"], maps_to("p1", json!(3)));
    assert_eq!(answer["method"], "fs/read_text_file");
    let answer = record(&records, "p1", "in", "response", json!(1));
    assert_eq!(answer["mapsTo"], maps_to("agent", json!(7)));
    assert_eq!(
        answer["wrapped"], "proxy/successor",
        "answers a wrapped request"
    );
    record(&records, "agent", "out", "response", json!(7));
}

#[tokio::test]
async fn a_cancel_records_the_request_it_names_on_the_next_hop() {
    let mut chain = Spec::new(1).traced().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s"}}"#);
    assert_eq!(chain.proxy(1).recv().await["id"], 1);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}"#);
    assert_eq!(chain.proxy(1).recv().await["params"]["requestId"], 1);
    chain
        .proxy(1)
        .send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"cancelled"}}"#);
    assert_eq!(chain.editor.recv().await["error"]["code"], -32800);
    let records = chain.trace_records().await;

    let cancel = &on(&records, "editor", "in")[1];
    assert_eq!(cancel["kind"], "notification");
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["mapsTo"], Value::Null);
    assert_eq!(cancel["cancels"], maps_to("p1", json!(1)));
    let error = record(&records, "p1", "in", "error", json!(1));
    assert_eq!(error["mapsTo"], maps_to("editor", json!(5)));
    assert_eq!(error["method"], "session/prompt");
}

#[tokio::test]
async fn what_the_conductor_answers_itself_maps_nowhere() {
    let mut chain = Spec::new(1).traced().start();
    chain.editor.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{}}}"#,
    );
    assert_eq!(chain.editor.recv().await["error"]["code"], -32601);
    let records = chain.trace_records().await;
    let refused = record(&records, "editor", "in", "request", json!(2));
    assert_eq!(refused["mapsTo"], Value::Null);
    let error = record(&records, "editor", "out", "error", json!(2));
    assert_eq!(error["method"], "session/new");
    assert_eq!(error["wrapped"], "proxy/successor");
    assert!(on(&records, "p1", "out").is_empty());
}

#[tokio::test]
async fn a_line_over_the_limit_is_an_invalid_record_without_payload() {
    let mut spec = Spec::new(0).traced();
    spec.limits.max_line = 64;
    let mut chain = spec.start();
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{{"text":"{}"}}}}"#,
        "x".repeat(100)
    );
    chain.editor.send(&line);
    assert_eq!(chain.editor.recv().await["id"], 9);
    let records = chain.trace_records().await;
    let dropped = &on(&records, "editor", "in")[0];
    assert_eq!(dropped["kind"], "invalid");
    assert_eq!(dropped["id"], 9);
    assert_eq!(dropped["bytes"], line.len());
    assert!(dropped.get("payload").is_none());
    assert_eq!(dropped["mapsTo"], Value::Null);
    record(&records, "editor", "out", "error", json!(9));
}

const DECLARING_SESSION: &str = r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/w","mcpServers":[{"type":"acp","name":"notes","id":"n-1"}]}}}"#;

/// Proxy 1 declares `notes` (id `n-1`) in a session, and a shim for it connects as `c-7`.
async fn shim_for_notes(chain: &mut Chain) -> super::harness::Peer {
    chain.proxy(1).send(DECLARING_SESSION);
    chain.agent().recv().await;
    let mut shim = chain.connect_shim().await;
    shim.send(r#"{"mcpBridge":1,"server":"n-1"}"#);
    assert_eq!(shim.recv_text().await, r#"{"mcpBridge":"ok"}"#);
    let connect = chain.proxy(1).recv().await;
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"connectionId":"c-7"}}}}"#,
        connect["id"]
    ));
    shim
}

#[tokio::test]
async fn a_bridge_shim_link_is_named_after_its_server_and_its_ids_map_to_the_owner() {
    let mut chain = Spec::new(1).traced().start();
    let mut shim = shim_for_notes(&mut chain).await;
    shim.send(r#"{"jsonrpc":"2.0","id":"t1","method":"tools/call","params":{"name":"recall"}}"#);
    let message = chain.proxy(1).recv().await;
    let own = message["id"].clone();
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{own},"result":{{"content":[]}}}}"#
    ));
    assert_eq!(shim.recv().await["id"], "t1");
    chain.proxy(1).send(
        r#"{"jsonrpc":"2.0","id":40,"method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"c-7","method":"sampling/createMessage","params":{}}}}"#,
    );
    assert_eq!(shim.recv().await["id"], 1);
    shim.send(r#"{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}}"#);
    assert_eq!(chain.proxy(1).recv().await["id"], 40);
    shim.end.close();
    chain.proxy(1).recv().await; // mcp/disconnect
    let records = chain.trace_records().await;

    let shim_link = "shim:notes#1";
    let hello = &on(&records, shim_link, "in")[0];
    assert_eq!(
        hello["kind"], "invalid",
        "the bridge's handshake is not JSON-RPC"
    );
    assert_eq!(hello["position"], Value::Null);
    assert_eq!(
        on(&records, shim_link, "out")[0]["payload"]["mcpBridge"],
        "ok"
    );
    let call = record(&records, shim_link, "in", "request", json!("t1"));
    assert_eq!(call["mapsTo"], maps_to("p1", own.clone()));
    let answer = record(&records, "p1", "in", "response", own);
    assert_eq!(answer["mapsTo"], maps_to(shim_link, json!("t1")));
    assert_eq!(answer["method"], "mcp/message");
    let asked = record(&records, "p1", "in", "request", json!(40));
    assert_eq!(asked["method"], "mcp/message");
    assert_eq!(asked["mapsTo"], maps_to(shim_link, json!(1)));
    let answer = record(&records, shim_link, "in", "response", json!(1));
    assert_eq!(answer["mapsTo"], maps_to("p1", json!(40)));
    assert_eq!(answer["method"], "sampling/createMessage");
}

#[tokio::test(start_paused = true)]
async fn a_frame_held_for_a_restarting_proxy_is_recorded_once_where_it_went() {
    let policy = FailurePolicy {
        on_failure: OnFailure::Restart {
            then: AfterRestarts::Fail,
        },
        ..FailurePolicy::default()
    };
    let mut chain = Spec::new(1).on_failure(1, policy).traced().start();
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}"#);
    chain.proxy(1).recv().await;
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "was killed by signal 9", &[]).await;
    assert_eq!(chain.editor.recv().await["id"], 1);
    chain
        .editor
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s"}}"#);
    let p1 = chain.restarted(1).await;
    let held = p1.recv().await;
    assert_eq!(held["params"]["sessionId"], "s");
    let own = held["id"].clone();
    chain.proxy(1).send(&format!(
        r#"{{"jsonrpc":"2.0","id":{own},"result":{{"stopReason":"end_turn"}}}}"#
    ));
    assert_eq!(chain.editor.recv().await["id"], 2);
    let records = chain.trace_records().await;

    let sent = record(&records, "editor", "in", "request", json!(2));
    assert_eq!(sent["mapsTo"], maps_to("p1", own));
    let events: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["type"] == "component")
        .map(|r| (r["link"].as_str().unwrap(), r["event"].as_str().unwrap()))
        .collect();
    assert_eq!(events, [("p1", "failed"), ("p1", "restarted")]);
    let failed = records.iter().find(|r| r["event"] == "failed").unwrap();
    assert_eq!(
        failed["detail"],
        "proxy `p1` was killed by signal 9; restarting it"
    );
}
