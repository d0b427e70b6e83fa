//! The MCP client against in-memory servers: handshakes, pages, deadlines, servers that go away.
//! Must not know the demo agent.

use super::test_support::*;
use super::*;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use std::time::Instant;

async fn open(name: &str, timeout: Duration) -> (McpConnection, ServerEnd) {
    let (transport, theirs) = duplex_transport();
    let mut server = ServerEnd::new(theirs);
    let (connection, ()) = tokio::join!(
        McpConnection::open(name, transport, timeout),
        server.handshake()
    );
    (connection.unwrap(), server)
}

#[tokio::test]
async fn handshake_names_the_demo_agent_and_every_tools_page_is_read() {
    let (transport, theirs) = duplex_transport();
    let mut server = ServerEnd::new(theirs);
    let script = async {
        let initialize = server.recv().await;
        assert_eq!(initialize["method"], "initialize");
        let params = &initialize["params"];
        assert_eq!(params["protocolVersion"], "2025-06-18");
        assert_eq!(
            params["clientInfo"],
            json!({"name": "acp-conductor-demo-agent", "version": env!("CARGO_PKG_VERSION")})
        );
        // An older revision is fine for tools.
        let result = json!({"protocolVersion": "2025-03-26", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}});
        server.answer(&initialize, result).await;
        assert_eq!(server.recv().await["method"], "notifications/initialized");
        server
    };
    let (connection, mut server) =
        tokio::join!(McpConnection::open("s", transport, REQUEST_TIMEOUT), script);
    let connection = connection.unwrap();

    let script = async {
        let first = server.recv().await;
        assert_eq!(first["method"], "tools/list");
        let page = json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}], "nextCursor": "p2"});
        server.answer(&first, page).await;
        let second = server.recv().await;
        assert_eq!(second["params"]["cursor"], "p2");
        server
            .answer(
                &second,
                json!({"tools": [{"name": "c", "inputSchema": {"type": "object"}}]}),
            )
            .await;
    };
    let (tools, ()) = tokio::join!(connection.list_tools(), script);
    assert_eq!(tools.unwrap(), ["a", "b", "c"]);
}

#[tokio::test]
async fn a_tool_result_reads_as_its_text_with_the_whole_result_kept() {
    let (connection, mut server) = open("s", REQUEST_TIMEOUT).await;
    let script = async {
        let call = server.recv().await;
        assert_eq!(call["method"], "tools/call");
        assert_eq!(call["params"]["name"], "b");
        assert_eq!(call["params"]["arguments"], json!({"x": 1}));
        let result = json!({"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "", "mimeType": "image/png"}], "isError": true});
        server.answer(&call, result).await;
        let call = server.recv().await;
        server
            .answer(&call, json!({"content": [], "structuredContent": {"n": 2}}))
            .await;
    };
    let (x1, empty) = (json!({"x": 1}), json!({}));
    let calls = async {
        let first = connection.call_tool("b", &x1).await.unwrap();
        let second = connection.call_tool("b", &empty).await.unwrap();
        (first, second)
    };
    let ((first, second), ()) = tokio::join!(calls, script);
    assert_eq!(first.text, "one\n[image content]");
    assert!(first.is_error);
    assert_eq!(second.text, r#"{"n":2}"#);
    assert!(!second.is_error);
    assert_eq!(second.raw["structuredContent"]["n"], 2);
}

#[tokio::test]
async fn an_error_answer_is_a_refusal_naming_server_and_method() {
    let (connection, mut server) = open("notes", REQUEST_TIMEOUT).await;
    let script = async {
        let call = server.recv().await;
        server
                .send(json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32602, "message": "unknown tool: t"}}))
                .await;
    };
    let empty = json!({});
    let (result, ()) = tokio::join!(connection.call_tool("t", &empty), script);
    let error = result.unwrap_err();
    assert!(
        matches!(error, McpError::Refused { code: -32602, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "MCP server `notes` answered tools/call with error -32602: unknown tool: t"
    );
    assert!(!connection.is_closed());
}

#[tokio::test]
async fn a_refused_or_malformed_handshake_fails_open() {
    let (transport, theirs) = duplex_transport();
    let mut server = ServerEnd::new(theirs);
    let script = async {
        let initialize = server.recv().await;
        server
                .send(json!({"jsonrpc": "2.0", "id": initialize["id"], "error": {"code": -32602, "message": "unsupported version"}}))
                .await;
    };
    let (opened, ()) = tokio::join!(McpConnection::open("s", transport, REQUEST_TIMEOUT), script);
    assert_eq!(
        opened.unwrap_err().to_string(),
        "MCP server `s` answered initialize with error -32602: unsupported version"
    );

    let (transport, theirs) = duplex_transport();
    let mut server = ServerEnd::new(theirs);
    let script = async {
        let initialize = server.recv().await;
        server
            .answer(&initialize, json!({"capabilities": {}}))
            .await;
    };
    let (opened, ()) = tokio::join!(McpConnection::open("s", transport, REQUEST_TIMEOUT), script);
    // What is wrong with it is rmcp's to say.
    let error = opened.unwrap_err().to_string();
    assert!(
        error.starts_with("MCP server `s` answered initialize with something unexpected: "),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_going_away_mid_call_fails_the_call_at_once() {
    let (connection, mut server) = open("notes", REQUEST_TIMEOUT).await;
    let started = Instant::now();
    let script = async move {
        let call = server.recv().await;
        assert_eq!(call["method"], "tools/call");
        drop(server);
    };
    let empty = json!({});
    let (result, ()) = tokio::join!(connection.call_tool("t", &empty), script);
    let error = result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP server `notes` went away before answering tools/call"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(connection.is_closed());
    // Later requests fail the same way without waiting.
    let again = tokio::time::timeout(Duration::from_secs(5), connection.list_tools())
        .await
        .expect("no wait on a closed connection");
    assert!(matches!(again, Err(McpError::Closed { .. })), "{again:?}");
}

#[tokio::test]
async fn a_timeout_fails_the_request_and_tells_the_server() {
    let (connection, mut server) = open("slow", Duration::from_millis(200)).await;
    let call = async {
        let error = connection.call_tool("t", &json!({})).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "MCP server `slow` did not answer tools/call within 0.2 s"
        );
    };
    let script = async {
        let request = server.recv().await;
        let cancelled = server.recv().await;
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], request["id"]);
        // A late answer is ignored; the connection still works.
        server.answer(&request, json!({"content": []})).await;
        let list = server.recv().await;
        server.answer(&list, json!({"tools": []})).await;
    };
    let ((), ()) = tokio::join!(
        async {
            call.await;
            assert!(!connection.is_closed());
            assert_eq!(connection.list_tools().await.unwrap(), Vec::<String>::new());
        },
        script
    );
}

#[test]
fn only_stdio_declarations_are_kept() {
    let declared = json!([
        {"name": "notes", "command": "/bin/shim", "args": ["mcp-bridge", "--server", "n"], "env": []},
        {"type": "stdio", "name": "typed", "command": "tool", "args": [], "env": [{"name": "K", "value": "v"}]},
        {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
        {"type": "sse", "name": "events", "url": "https://example.com/sse", "headers": []},
        {"type": "acp", "name": "proxied", "id": "p-1"},
        {"name": "no-command", "args": []},
        {"name": "bad-args", "command": "x", "args": [1]},
        {"name": "bad-env", "command": "x", "env": [{"name": "K"}]},
        {"name": "bare", "command": "x"},
    ]);
    assert_eq!(
        StdioServer::from_declarations(&declared),
        [
            StdioServer {
                name: "notes".into(),
                command: "/bin/shim".into(),
                args: vec!["mcp-bridge".into(), "--server".into(), "n".into()],
                env: vec![],
            },
            StdioServer {
                name: "typed".into(),
                command: "tool".into(),
                args: vec![],
                env: vec![("K".into(), "v".into())],
            },
            StdioServer {
                name: "bare".into(),
                command: "x".into(),
                args: vec![],
                env: vec![],
            },
        ]
    );
    assert_eq!(StdioServer::from_declarations(&Value::Null), []);
    assert_eq!(StdioServer::from_declarations(&json!({"a": 1})), []);
}

fn notes_servers(names: &[&str], seen: &Seen) -> SessionServers {
    let servers = names
        .iter()
        .map(|name| StdioServer {
            name: (*name).to_owned(),
            command: "unused".to_owned(),
            args: vec![],
            env: vec![],
        })
        .collect();
    SessionServers::new(
        servers,
        PathBuf::from("/"),
        notes_launcher(seen.clone()),
        REQUEST_TIMEOUT,
    )
}

#[tokio::test]
async fn servers_start_on_first_use_once_and_again_after_going_away() {
    let seen = Seen::default();
    let mut servers = notes_servers(&["a", "b"], &seen);
    assert!(launches(&seen).is_empty());

    // The first server offering the tool wins; the second is not started for it.
    let search = servers.find_tool("recall").await;
    assert_eq!(search.found, Some(0));
    assert!(search.failures.is_empty());
    assert_eq!(launches(&seen), ["a"]);
    let search = servers.find_tool("nope").await;
    assert_eq!(search.found, None);
    assert_eq!(launches(&seen), ["a", "b"]);
    let listed = servers.list_tools().await;
    assert_eq!(listed.len(), 2);
    for (_, tools) in listed {
        assert_eq!(tools.unwrap(), NOTES_TOOLS);
    }
    assert_eq!(launches(&seen), ["a", "b"]);

    let remembered = servers
        .call_tool(0, "remember", &json!({"note": "n1"}))
        .await
        .unwrap();
    assert_eq!(remembered.text, "Noted (note 1).");
    let crashed = servers.call_tool(0, "crash", &json!({})).await.unwrap_err();
    assert_eq!(
        crashed.to_string(),
        "MCP server `a` went away before answering tools/call"
    );
    // Started again, with a fresh state.
    let recalled = servers.call_tool(0, "recall", &json!({})).await.unwrap();
    assert_eq!(recalled.text, "No notes yet.");
    assert_eq!(launches(&seen), ["a", "b", "a"]);
    servers.close().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_reported_and_skipped() {
    let missing = StdioServer {
        name: "missing".to_owned(),
        command: "/nonexistent/acp-demo-mcp-server".to_owned(),
        args: vec![],
        env: vec![],
    };
    let mut servers = SessionServers::new(
        vec![missing],
        PathBuf::from("/"),
        process_launcher(),
        REQUEST_TIMEOUT,
    );
    let search = servers.find_tool("remember").await;
    assert_eq!(search.found, None);
    let [failure] = &search.failures[..] else {
        panic!("{search:?}")
    };
    assert!(
        failure.to_string().starts_with(
            "could not start MCP server `missing` (/nonexistent/acp-demo-mcp-server): "
        ),
        "{failure}"
    );
}

/// A directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let path = std::env::temp_dir().join(format!(
            "acp-demo-mcp-{}-{label}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path.canonicalize().unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A stdio MCP server in POSIX sh: tools `where` (says `$GREETING $1 in $(pwd)`) and `die`
/// (exits 3 mid-call); writes "closed" to the file `$2` when its input ends.
const SH_SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"where","inputSchema":{"type":"object"}},{"name":"die","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
    *'"name":"where"'*)
      echo "where was called" >&2
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s %s in %s"}]}}\n' "$id" "$GREETING" "$1" "$(pwd -P)" ;;
    *'"name":"die"'*)
      exit 3 ;;
  esac
done
echo closed > "$2"
"#;

fn sh_servers(dir: &TempDir) -> SessionServers {
    let marker = dir.0.join("marker").to_string_lossy().into_owned();
    let server = StdioServer {
        name: "sh".to_owned(),
        command: "sh".to_owned(),
        args: vec![
            "-c".into(),
            SH_SERVER.into(),
            "sh".into(),
            "arg1".into(),
            marker,
        ],
        env: vec![("GREETING".into(), "hello".into())],
    };
    SessionServers::new(
        vec![server],
        dir.0.clone(),
        process_launcher(),
        REQUEST_TIMEOUT,
    )
}

#[cfg(unix)]
#[tokio::test]
async fn a_process_server_gets_args_env_and_cwd_and_its_input_closed_at_the_end() {
    let dir = TempDir::new("process");
    let mut servers = sh_servers(&dir);
    let search = servers.find_tool("where").await;
    assert_eq!(search.found, Some(0), "{:?}", search.failures);
    let result = servers.call_tool(0, "where", &json!({})).await.unwrap();
    assert_eq!(result.text, format!("hello arg1 in {}", dir.0.display()));
    assert!(!dir.0.join("marker").exists());
    servers.close().await;
    // The server saw its input end and exited on its own, within the grace period.
    assert_eq!(
        std::fs::read_to_string(dir.0.join("marker")).unwrap(),
        "closed\n"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_process_exiting_mid_call_is_an_error_with_its_status() {
    let dir = TempDir::new("exit");
    let mut servers = sh_servers(&dir);
    let started = Instant::now();
    let error = servers.call_tool(0, "die", &json!({})).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "MCP server `sh` went away before answering tools/call (exit status: 3)"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The next use starts it again.
    let result = servers.call_tool(0, "where", &json!({})).await.unwrap();
    assert!(result.text.starts_with("hello arg1 in "), "{}", result.text);
    servers.close().await;
}
