//! MCP over ACP in every wire form, bridged for a stdio agent and spoken by an agent that
//! speaks it: providers of the RFD, `serverId` and connectionless forms, the editor's own, and
//! one built on the official Rust ACP SDK.

use acp_conductor_tests::binaries::SDK_PROVIDER;
use acp_conductor_tests::editor::prompt_params;
use serde_json::json;

use super::chains::{Chain, Form};
use super::editor_client::{answer, editor_server_declaration, initialize_params};
use super::judge::{self, ACP_DECLARATION_WITH_ID};
use super::links::LinkKind;
use super::report::Report;

/// The MCP servers of the chain: the editor's and one provider per wire form.
const SERVERS: [&str; 4] = ["editor-tools", "tools-rfd", "tools-sid", "tools-cl"];

/// A chain of one provider per wire form in front of the conformance agent.
fn providers(label: &str, agent_args: &[&str]) -> Chain {
    let mut chain = Chain::new(label, agent_args);
    chain
        .provider("prov-rfd", "tools-rfd", Form::Rfd)
        .provider("prov-sid", "tools-sid", Form::ServerId)
        .provider("prov-cl", "tools-cl", Form::Connectionless);
    chain
}

/// Opens a session declaring the editor's server, has the agent use every server, checks
/// what it reported, and returns the judged run.
fn use_every_server(chain: &Chain, scenario: &str) -> Report {
    let mut editor = chain.launch();
    let init = editor.request_answering("initialize", initialize_params(), answer);
    assert_eq!(
        init.result()["agentCapabilities"]["mcpCapabilities"]["acp"],
        true
    );
    let new = editor.request_answering(
        "session/new",
        json!({ "cwd": "/work/project", "mcpServers": [editor_server_declaration()] }),
        answer,
    );
    let session = new.result()["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    let turn = editor.request_answering("session/prompt", prompt_params(&session, "mcp"), answer);
    assert_eq!(turn.result()["stopReason"], "end_turn", "{}", turn.response);
    let said = turn.chunk_texts();
    for server in SERVERS {
        let listed = format!("mcp {server}: tools/list ok");
        assert!(said.contains(&listed), "no {listed:?} in {said:#?}");
    }
    for server in ["tools-rfd", "tools-sid", "tools-cl"] {
        let echoed = format!("mcp {server}: tools/call echo ok");
        assert!(said.contains(&echoed), "no {echoed:?} in {said:#?}");
    }
    assert!(
        said.contains(&"mcp editor-tools: tools/call open_files ok".to_string()),
        "{said:#?}"
    );

    // The other session setups declare servers too, and are rewritten (or not) the same way.
    for method in ["session/load", "session/resume", "session/fork"] {
        let params = json!({
            "sessionId": session,
            "cwd": "/work/project",
            "mcpServers": [editor_server_declaration()]
        });
        editor.request_answering(method, params, answer).result();
    }

    let (links, status) = chain.finish(&mut editor);
    assert!(status.success(), "{status}: {}", editor.stderr());
    let report = Report::of(&links);
    report.assert_conformant(scenario);
    report
}

#[test]
fn bridged_for_a_stdio_agent_in_every_wire_form() {
    let chain = providers("conformance-mcp-bridged", &[]);
    let report = use_every_server(&chain, "MCP bridged");
    report.assert_covers(&[
        // The editor's server, declared with `serverId`: schema 1.20's mcp/message from the
        // start (no mcp/connect reaches the editor; checked below).
        (LinkKind::Editor, "request mcp/message"),
        // Connection forms at the providers, and the answers to their sampling requests.
        (
            LinkKind::Proxy,
            "request mcp/connect (legacy) in proxy/successor",
        ),
        (
            LinkKind::Proxy,
            "request mcp/message (legacy) in proxy/successor",
        ),
        (
            LinkKind::Proxy,
            "notification mcp/message (legacy) in proxy/successor",
        ),
        (
            LinkKind::Proxy,
            "result of mcp/message in proxy/successor (legacy)",
        ),
        (
            LinkKind::Proxy,
            "request mcp/disconnect (legacy) in proxy/successor",
        ),
        // The connectionless form at its provider, by the schema.
        (LinkKind::Proxy, "request mcp/message in proxy/successor"),
        // The declarations rewritten into stdio servers for the agent, in every setup.
        (LinkKind::Agent, "request session/new"),
        (LinkKind::Agent, "request session/load"),
        (LinkKind::Agent, "request session/resume"),
        (LinkKind::Agent, "request session/fork"),
        // MCP toward the agent's stdio client: results, sampling requests, notifications.
        (LinkKind::Shim, "MCP result"),
        (LinkKind::Shim, "MCP request sampling/createMessage"),
        (LinkKind::Shim, "MCP notification notifications/progress"),
    ]);
    assert!(report.legacy_counts().contains_key(ACP_DECLARATION_WITH_ID));
    assert!(
        !report.judged_any(LinkKind::Editor, "mcp/connect"),
        "the bridge tried mcp/connect on a server declared with serverId"
    );
}

#[test]
fn spoken_over_acp_by_the_agent_in_every_wire_form() {
    let chain = providers("conformance-mcp-over-acp", &["--acp"]);
    let report = use_every_server(&chain, "MCP over ACP");
    report.assert_covers(&[
        // The declarations reach the agent as they are, the RFD's `id` among them.
        (LinkKind::Agent, "request session/new"),
        (LinkKind::Agent, "request session/fork"),
        // The answers to the agent's MCP requests: on connections, and schema 1.20's carrier.
        (LinkKind::Agent, "result of mcp/connect (legacy)"),
        (LinkKind::Agent, "result of mcp/message (legacy)"),
        (LinkKind::Agent, "error of mcp/connect (legacy)"),
        (LinkKind::Agent, "result of mcp/message"),
        (LinkKind::Agent, "result of mcp/disconnect (legacy)"),
        // What providers send the agent: a sampling request on a connection, and
        // notifications on a connection and for a connectionless request.
        (LinkKind::Agent, "request mcp/message (legacy)"),
        (LinkKind::Agent, "notification mcp/message (legacy)"),
        (LinkKind::Agent, "notification mcp/message"),
        // The agent's MCP at the providers and the editor.
        (
            LinkKind::Proxy,
            "request mcp/connect (legacy) in proxy/successor",
        ),
        (LinkKind::Proxy, "request mcp/message in proxy/successor"),
        (
            LinkKind::Proxy,
            "result of mcp/message in proxy/successor (legacy)",
        ),
        (LinkKind::Editor, "request mcp/connect (legacy)"),
        (LinkKind::Editor, "request mcp/message"),
    ]);
    assert!(
        !report.counts().contains_key(&LinkKind::Shim),
        "no shim for an agent that speaks it"
    );
    // Every entry of the judge's allow-list is needed: none is there for nothing.
    let allow_list = judge::allow_list();
    assert!(!allow_list.is_empty(), "the judge excuses no legacy form");
    for form in allow_list {
        assert!(
            report.legacy_counts().contains_key(&form),
            "{form} never seen"
        );
    }
}

#[test]
fn an_official_sdk_provider_bridged_behind_a_wiretap() {
    let mut chain = Chain::new("conformance-mcp-sdk", &[]);
    let provider = chain.chain.binaries.workspace_program(&SDK_PROVIDER);
    chain.tapped("sdk", &provider, &[]);
    let mut editor = chain.launch();
    editor
        .request_answering("initialize", initialize_params(), answer)
        .result();
    let new = editor.request_answering(
        "session/new",
        json!({ "cwd": "/work/project", "mcpServers": [] }),
        answer,
    );
    let session = new.result()["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    let turn = editor.request_answering("session/prompt", prompt_params(&session, "mcp"), answer);
    assert_eq!(turn.result()["stopReason"], "end_turn", "{}", turn.response);
    let said = turn.chunk_texts();
    for line in [
        "mcp sdk-tools: tools/list ok",
        "mcp sdk-tools: tools/call echo ok",
    ] {
        assert!(said.contains(&line.to_string()), "no {line:?} in {said:#?}");
    }

    let (links, status) = chain.finish(&mut editor);
    assert!(status.success(), "{status}: {}", editor.stderr());
    let report = Report::of(&links);
    report.assert_conformant("an official SDK provider");
    report.assert_covers(&[
        (LinkKind::Proxy, "request proxy/initialize"),
        (LinkKind::Proxy, "result of initialize in proxy/successor"),
        (LinkKind::Proxy, "result of session/new in proxy/successor"),
        // It declares `serverId`: the bridge speaks schema 1.20's mcp/message from the start.
        (LinkKind::Proxy, "request mcp/message in proxy/successor"),
        (LinkKind::Shim, "MCP result"),
    ]);
    report.assert_never(&["mcp/connect"]);
}

/// Bridged over HTTP (`mcp_bridge = "http"`): the session setups the agent receives declare
/// the providers' servers as `http` servers, which the schema crate reads as `McpServerHttp`.
#[test]
fn bridged_over_http_the_agent_gets_http_servers() {
    let mut chain = providers("conformance-mcp-http", &[]);
    chain.chain.conductor_setting("mcp_bridge", "\"http\"");
    let mut editor = chain.launch();
    editor.request_answering("initialize", initialize_params(), answer);
    let new = editor.request_answering(
        "session/new",
        json!({ "cwd": "/work/project", "mcpServers": [editor_server_declaration()] }),
        answer,
    );
    let session = new.result()["sessionId"].clone();
    let fork = json!({ "sessionId": session, "cwd": "/work/project", "mcpServers": [] });
    editor
        .request_answering("session/fork", fork, answer)
        .result();
    let (links, status) = chain.finish(&mut editor);
    assert!(status.success(), "{status}: {}", editor.stderr());
    let agent = links
        .iter()
        .find(|link| link.kind == LinkKind::Agent)
        .expect("the agent's link");
    let setup: serde_json::Value = agent
        .written
        .iter()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .find(|message| message["method"] == "session/new")
        .expect("the agent got session/new");
    let servers = setup["params"]["mcpServers"].as_array().expect("servers");
    assert_eq!(servers.len(), SERVERS.len(), "{setup}");
    for server in servers {
        assert_eq!(server["type"], "http", "{server}");
        assert!(
            server["url"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:"),
            "{server}"
        );
        assert_eq!(server["headers"][0]["name"], "Authorization", "{server}");
    }
    let report = Report::of(&links);
    report.assert_conformant("MCP bridged over HTTP");
    report.assert_covers(&[
        (LinkKind::Agent, "request session/new"),
        (LinkKind::Agent, "request session/fork"),
    ]);
}
