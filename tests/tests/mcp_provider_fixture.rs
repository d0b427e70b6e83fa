//! The `test-mcp-provider` fixture on its own, driven over its stdio by a test playing the
//! conductor on both sides; the MCP-over-ACP tests are only as good as this peer.

use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::test_chain::fresh_dir;
use serde_json::{Value, json};

const PROVIDER: &str = env!("CARGO_BIN_EXE_test-mcp-provider");

const STATELESS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A launched provider with the recording of its MCP events.
struct Provider {
    process: Editor,
    record: std::path::PathBuf,
    dir: std::path::PathBuf,
    /// The next id this test uses for a request wrapped in `proxy/successor`.
    next_id: u64,
}

impl Provider {
    fn launch(label: &str, args: &[&str]) -> Self {
        let dir = fresh_dir(label);
        let record = dir.join("provider.record");
        let mut all = vec!["--record", record.to_str().unwrap()];
        all.extend_from_slice(args);
        Self {
            process: Editor::launch(PROVIDER.as_ref(), &all, &[]),
            record,
            dir,
            next_id: 100,
        }
    }

    /// The next line the provider writes, with its id exactly as written.
    fn next(&mut self) -> (String, Value) {
        let line = self.process.recv_line();
        let raw = RawMessage::parse(&line).unwrap();
        let id = raw.id().map(|id| id.get().to_string()).unwrap_or_default();
        (id, serde_json::from_str(&line).unwrap())
    }

    /// Plays both neighbours through `proxy/initialize` and `session/new`; returns the
    /// `mcpServers` the successor saw.
    fn start(&mut self) -> Value {
        self.process.send_line(
            r#"{"jsonrpc":"2.0","id":"i","method":"proxy/initialize","params":{"protocolVersion":1}}"#,
        );
        let (id, forwarded) = self.next();
        assert_eq!(id, "0");
        assert_eq!(forwarded["method"], "proxy/successor");
        assert_eq!(
            forwarded["params"],
            json!({ "method": "initialize", "params": { "protocolVersion": 1 } })
        );
        self.process.send_line(
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"x":2}}}"#,
        );
        let (id, answer) = self.next();
        assert_eq!(id, r#""i""#);
        assert_eq!(
            answer["result"],
            json!({ "protocolVersion": 1, "agentCapabilities": { "x": 2 } })
        );

        self.process.send_line(r#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/","mcpServers":[{"name":"other","command":"x","args":[],"env":[]}]}}"#);
        let (id, forwarded) = self.next();
        assert_eq!(id, "1");
        assert_eq!(forwarded["params"]["method"], "session/new");
        assert_eq!(forwarded["params"]["params"]["cwd"], "/");
        self.process
            .send_line(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#);
        let (id, answer) = self.next();
        assert_eq!(id, "7");
        assert_eq!(answer["result"]["sessionId"], "s");
        forwarded["params"]["params"]["mcpServers"].clone()
    }

    /// Sends `method` with `params` (raw JSON) from the successor, wrapped, as a request;
    /// returns the id it used.
    fn send_wrapped(&mut self, method: &str, params: &str) -> String {
        let id = self.next_id.to_string();
        self.next_id += 1;
        self.process.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"proxy/successor","params":{{"method":"{method}","params":{params}}}}}"#
        ));
        id
    }

    /// A wrapped request from the successor and the provider's response to it.
    fn call(&mut self, method: &str, params: &str) -> Value {
        let id = self.send_wrapped(method, params);
        let (answered, response) = self.next();
        assert_eq!(answered, id, "{response}");
        response
    }

    fn recorded(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

/// The connection forms, `rfd` and `server-id`, differ only in their declaration and connect.
fn connection_form(variant: &str, id_field: &str, connect_field: &str) {
    let mut provider = Provider::launch(
        &format!("mcp-provider-{variant}"),
        &["--variant", variant, "--name", "kit"],
    );
    let servers = provider.start();
    assert_eq!(
        servers,
        json!([
            { "name": "other", "command": "x", "args": [], "env": [] },
            { "type": "acp", "name": "kit", id_field: "kit-1" },
        ])
    );

    let other_field = if connect_field == "acpId" {
        "serverId"
    } else {
        "acpId"
    };
    let refused = provider.call("mcp/connect", &format!(r#"{{"{other_field}":"kit-1"}}"#));
    assert_eq!(refused["error"]["code"], -32602);
    let refused = provider.call("mcp/connect", &format!(r#"{{"{connect_field}":"kit-2"}}"#));
    assert_eq!(refused["error"]["code"], -32602);
    let connect = format!(r#"{{"{connect_field}":"kit-1"}}"#);
    let first = provider.call("mcp/connect", &connect);
    assert_eq!(first["result"], json!({ "connectionId": "kit-1-conn-1" }));
    let second = provider.call("mcp/connect", &connect);
    assert_eq!(second["result"], json!({ "connectionId": "kit-1-conn-2" }));

    let message = |method: &str, params: &str| {
        format!(r#"{{"connectionId":"kit-1-conn-1","method":"{method}","params":{params}}}"#)
    };
    let init = provider.call(
        "mcp/message",
        &message("initialize", r#"{"protocolVersion":"2025-11-25"}"#),
    );
    assert_eq!(
        init["result"],
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "kit", "version": "1.0.0" },
        })
    );
    let init = provider.call(
        "mcp/message",
        &message("initialize", r#"{"protocolVersion":"2024-11-05"}"#),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    provider.process.send_line(r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"mcp/message","params":{"connectionId":"kit-1-conn-1","method":"notifications/initialized"}}}"#);

    let tools = provider.call("mcp/message", &message("tools/list", "{}"));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["echo", "add", "whoami", "fail", "ask", "progress", "die"]
    );
    assert_eq!(
        tools["result"]["tools"][1]["inputSchema"]["properties"]["b"]["type"],
        "number"
    );

    let call = |name: &str, arguments: &str| {
        message(
            "tools/call",
            &format!(r#"{{"name":"{name}","arguments":{arguments}}}"#),
        )
    };
    let echo = provider.call("mcp/message", &call("echo", r#"{"text":"hi"}"#));
    assert_eq!(
        echo["result"],
        json!({ "content": [{ "type": "text", "text": "hi" }] })
    );
    let add = provider.call("mcp/message", &call("add", r#"{"a":2,"b":3}"#));
    assert_eq!(text(&add["result"]), "5");
    let add = provider.call("mcp/message", &call("add", r#"{"a":0.5,"b":1}"#));
    assert_eq!(text(&add["result"]), "1.5");
    let whoami = provider.call(
        "mcp/message",
        r#"{"connectionId":"kit-1-conn-2","method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
    );
    assert_eq!(text(&whoami["result"]), "kit-1-conn-2");
    let fail = provider.call("mcp/message", &call("fail", "{}"));
    assert_eq!(
        fail["error"],
        json!({ "code": -32000, "message": "fail: failed as asked" })
    );
    let unknown = provider.call("mcp/message", &call("nope", "{}"));
    assert_eq!(unknown["error"]["code"], -32602);
    let unknown = provider.call("mcp/message", &message("resources/list", "{}"));
    assert_eq!(unknown["error"]["code"], -32601);
    let ping = provider.call("mcp/message", &message("ping", "null"));
    assert_eq!(ping["result"], json!({}));

    // `ask`: a sampling request goes out under the provider's own id (2, after the two
    // relayed requests), and other calls are served while it is out.
    let ask = provider.send_wrapped("mcp/message", &call("ask", r#"{"question":"why?"}"#));
    let (sampling_id, sampling) = provider.next();
    assert_eq!(sampling_id, "2");
    assert_eq!(sampling["method"], "proxy/successor");
    assert_eq!(
        sampling["params"],
        json!({ "method": "mcp/message", "params": {
            "connectionId": "kit-1-conn-1",
            "method": "sampling/createMessage",
            "params": {
                "messages": [{ "role": "user", "content": { "type": "text", "text": "why?" } }],
                "maxTokens": 64,
            },
        }})
    );
    let echo = provider.call("mcp/message", &call("echo", r#"{"text":"meanwhile"}"#));
    assert_eq!(text(&echo["result"]), "meanwhile");
    provider.process.send_line(r#"{"jsonrpc":"2.0","id":2,"result":{"role":"assistant","content":{"type":"text","text":"because"},"model":"m"}}"#);
    let (id, answer) = provider.next();
    assert_eq!(id, ask);
    assert_eq!(text(&answer["result"]), "answer: because");

    // A failed sampling fails the call; a cancelled call cancels its sampling.
    let ask = provider.send_wrapped("mcp/message", &call("ask", r#"{"question":"q"}"#));
    let (sampling_id, _) = provider.next();
    provider.process.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{sampling_id},"error":{{"code":-1,"message":"no model"}}}}"#
    ));
    let (id, answer) = provider.next();
    assert_eq!(id, ask);
    assert_eq!(
        answer["error"],
        json!({ "code": -32000, "message": "sampling failed: no model" })
    );
    // The conductor cancels the call plain (hop-scoped), or wrapped as older ones did; either
    // way the sampling request is cancelled plain, under the provider's own id.
    for cancel_line in [
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":ASK}}"#,
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"$/cancel_request","params":{"requestId":ASK}}}"#,
    ] {
        let ask = provider.send_wrapped("mcp/message", &call("ask", r#"{"question":"q"}"#));
        let (sampling_id, _) = provider.next();
        provider
            .process
            .send_line(&cancel_line.replace("ASK", &ask));
        let (id, answer) = provider.next();
        assert_eq!(id, ask);
        assert_eq!(answer["error"]["code"], -32800);
        let (_, cancel) = provider.next();
        assert_eq!(
            cancel,
            json!({
                "jsonrpc": "2.0",
                "method": "$/cancel_request",
                "params": { "requestId": sampling_id.parse::<u64>().unwrap() }
            })
        );
    }

    // `progress`: the notifications, then the answer.
    let progress = provider.send_wrapped(
        "mcp/message",
        &message(
            "tools/call",
            r#"{"name":"progress","arguments":{},"_meta":{"progressToken":"tok"}}"#,
        ),
    );
    let (_, log) = provider.next();
    assert_eq!(
        log,
        json!({ "jsonrpc": "2.0", "method": "proxy/successor", "params": {
            "method": "mcp/message",
            "params": {
                "connectionId": "kit-1-conn-1",
                "method": "notifications/message",
                "params": { "level": "info", "logger": "kit", "data": "progress from kit" },
            },
        }})
    );
    let (_, notification) = provider.next();
    assert_eq!(
        notification["params"]["params"]["params"],
        json!({ "progressToken": "tok", "progress": 1, "total": 1 })
    );
    let (id, done) = provider.next();
    assert_eq!(id, progress);
    assert_eq!(text(&done["result"]), "done");

    let closed = provider.call("mcp/disconnect", r#"{"connectionId":"kit-1-conn-2"}"#);
    assert_eq!(closed["result"], json!({}));
    let closed = provider.call("mcp/disconnect", r#"{"connectionId":"kit-1-conn-2"}"#);
    assert_eq!(closed["error"]["code"], -32602);
    let gone = provider.call(
        "mcp/message",
        r#"{"connectionId":"kit-1-conn-2","method":"ping"}"#,
    );
    assert_eq!(gone["error"]["code"], -32602);

    // Other traffic from the successor still reaches the predecessor, under the
    // provider's own ids.
    provider.send_wrapped("fs/read_text_file", r#"{"path":"/f"}"#);
    let (id, plain) = provider.next();
    assert_eq!(
        id, "6",
        "after its own ids 0 to 5 (four sampling requests among them)"
    );
    assert_eq!(plain["method"], "fs/read_text_file");

    let recorded = provider.recorded();
    let request = |method: &str| json!({ "event": "request", "method": method, "connectionId": "kit-1-conn-1" });
    assert_eq!(
        recorded[..5],
        [
            json!({ "event": "connect", "connectionId": "kit-1-conn-1" }),
            json!({ "event": "connect", "connectionId": "kit-1-conn-2" }),
            request("initialize"),
            request("initialize"),
            json!({ "event": "notification", "method": "notifications/initialized", "connectionId": "kit-1-conn-1" }),
        ]
    );
    assert_eq!(
        recorded.last().unwrap(),
        &json!({ "event": "disconnect", "connectionId": "kit-1-conn-2" })
    );

    let die = provider.send_wrapped("mcp/message", &call("die", "{}"));
    assert_eq!(provider.process.wait_exit().code(), Some(3), "{die}");
}

#[test]
fn rfd_provider_declares_by_id_and_serves_connections() {
    connection_form("rfd", "id", "acpId");
}

#[test]
fn server_id_provider_declares_by_server_id_and_connects_by_it() {
    connection_form("server-id", "serverId", "serverId");
}

#[test]
fn connectionless_provider_speaks_stateless_mcp_without_connections() {
    let mut provider = Provider::launch(
        "mcp-provider-connectionless",
        &["--variant", "connectionless", "--id", "srv"],
    );
    let servers = provider.start();
    assert_eq!(
        servers[1],
        json!({ "type": "acp", "name": "tools", "serverId": "srv" })
    );

    let refused = provider.call("mcp/connect", r#"{"serverId":"srv"}"#);
    assert_eq!(refused["error"]["code"], -32601);

    let message = |request_id: &str, method: &str, params: &str| {
        format!(
            r#"{{"serverId":"srv","requestId":{request_id},"method":"{method}","params":{params}}}"#
        )
    };
    let with_meta = |fields: &str| format!(r#"{{{fields}"_meta":{STATELESS_META}}}"#);
    let init = provider.call(
        "mcp/message",
        &message(
            "1",
            "initialize",
            &with_meta(r#""protocolVersion":"2025-11-25","#),
        ),
    );
    assert_eq!(
        init["result"]["error"],
        json!({ "code": -32601, "message": "stateless server: initialize is not supported" })
    );
    let bare = provider.call("mcp/message", &message("2", "tools/list", "{}"));
    assert_eq!(bare["result"]["error"]["code"], -32602);
    assert!(
        bare["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("io.modelcontextprotocol/protocolVersion")
    );
    let half = provider.call(
        "mcp/message",
        &message(
            "3",
            "ping",
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        ),
    );
    assert!(
        half["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("io.modelcontextprotocol/clientCapabilities")
    );
    let discover = provider.call(
        "mcp/message",
        &message("4", "server/discover", &with_meta("")),
    );
    assert_eq!(
        discover["result"],
        json!({ "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "tools", "version": "1.0.0" },
            "instructions": "fixture tools",
        }})
    );
    let call = |request_id: &str, name: &str, arguments: &str| {
        message(
            request_id,
            "tools/call",
            &with_meta(&format!(r#""name":"{name}","arguments":{arguments},"#)),
        )
    };
    let add = provider.call("mcp/message", &call("5", "add", r#"{"a":40,"b":2}"#));
    assert_eq!(text(&add["result"]["result"]), "42");
    let whoami = provider.call("mcp/message", &call("6", "whoami", "{}"));
    assert_eq!(text(&whoami["result"]["result"]), "connectionless");
    let fail = provider.call("mcp/message", &call("7", "fail", "{}"));
    assert_eq!(
        fail["result"],
        json!({ "error": { "code": -32000, "message": "fail: failed as asked" } })
    );
    let ask = provider.call("mcp/message", &call("8", "ask", r#"{"question":"q"}"#));
    assert_eq!(
        ask["result"]["error"],
        json!({ "code": -32000, "message": "ask needs a connection" })
    );
    let elsewhere = provider.call(
        "mcp/message",
        r#"{"serverId":"other","requestId":9,"method":"ping"}"#,
    );
    assert_eq!(elsewhere["error"]["code"], -32602);

    let progress = provider.send_wrapped("mcp/message", &call(r#""p""#, "progress", "{}"));
    let (_, log) = provider.next();
    assert_eq!(
        log["params"],
        json!({ "method": "mcp/message", "params": {
            "serverId": "srv",
            "requestId": "p",
            "method": "notifications/message",
            "params": { "level": "info", "logger": "tools", "data": "progress from tools" },
        }})
    );
    // Without a progress token, the answer comes next.
    let (id, done) = provider.next();
    assert_eq!(id, progress);
    assert_eq!(text(&done["result"]["result"]), "done");

    let recorded = provider.recorded();
    let event = |request_id: Value, method: &str, meta: bool| json!({ "event": "request", "method": method, "requestId": request_id, "meta": meta });
    assert_eq!(
        recorded,
        [
            event(json!(1), "initialize", true),
            event(json!(2), "tools/list", false),
            event(json!(3), "ping", false),
            event(json!(4), "server/discover", true),
            event(json!(5), "tools/call", true),
            event(json!(6), "tools/call", true),
            event(json!(7), "tools/call", true),
            event(json!(8), "tools/call", true),
            event(json!("p"), "tools/call", true),
        ]
    );
}
