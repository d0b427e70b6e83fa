//! The judge bites: for every link kind, lines that break the schema (a missing field, a wrong
//! tag, a response to nothing, a method out of place) are rejected, and their good twins pass.

use acp_conformance_judge::judge::{Judged, judge_link};
use acp_conformance_judge::legacy::Legacy;
use acp_conformance_judge::links::{LinkKind, LinkRecord};

/// The verdict on `written`, the peer having sent `peer_sent` before.
fn judge(kind: LinkKind, peer_sent: &[&str], written: &str) -> Judged {
    let record = LinkRecord::new(
        "test",
        kind,
        vec![written.to_string()],
        peer_sent.iter().map(|l| l.to_string()).collect(),
    );
    judge_link(&record).remove(0)
}

#[track_caller]
fn rejected(kind: LinkKind, peer_sent: &[&str], written: &str) -> String {
    let judged = judge(kind, peer_sent, written);
    match judged.verdict {
        Err(error) => error,
        Ok(()) => panic!("{kind}: accepted {written} ({})", judged.what),
    }
}

#[track_caller]
fn accepted(kind: LinkKind, peer_sent: &[&str], written: &str) -> Judged {
    let judged = judge(kind, peer_sent, written);
    if let Err(error) = &judged.verdict {
        panic!("{kind}: rejected {written}: {error}");
    }
    judged
}

const CHUNK: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;

#[test]
fn editor_link_rejects_what_an_agent_may_not_say() {
    let editor = LinkKind::Editor;
    accepted(editor, &[], CHUNK);
    // An update without its content, and an update kind the schema does not have.
    let error = rejected(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}"#,
    );
    assert!(error.contains("content"), "{error}");
    rejected(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_monologue","text":"x"}}}"#,
    );
    // A permission request without options.
    rejected(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"}}}"#,
    );
    // A method the schema does not know, and a proxy method toward the editor.
    rejected(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"session/explode","params":{}}"#,
    );
    rejected(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}"#,
    );
    // The envelope: no `jsonrpc`, and an error whose code is a string.
    rejected(
        editor,
        &[],
        r#"{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#,
    );
    let asked =
        [r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#];
    rejected(
        editor,
        &asked,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":"-32000","message":"x"}}"#,
    );
    // A result judged by the editor's method: session/new needs a sessionId.
    accepted(
        editor,
        &asked,
        r#"{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1"}}"#,
    );
    let error = rejected(
        editor,
        &asked,
        r#"{"jsonrpc":"2.0","id":3,"result":{"id":"s1"}}"#,
    );
    assert!(error.contains("sessionId"), "{error}");
    // A response to an id the editor never used.
    rejected(
        editor,
        &asked,
        r#"{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1"}}"#,
    );
    // An extension notification passes through the schema's extension variant.
    accepted(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","method":"_vendor/event","params":{"any":1}}"#,
    );
}

#[test]
fn agent_link_rejects_what_a_client_may_not_say() {
    let agent = LinkKind::Agent;
    accepted(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
    );
    rejected(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientCapabilities":{}}}"#,
    );
    rejected(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#,
    );
    rejected(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":1}}"#,
    );
    accepted(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#,
    );
    // What an agent says is out of place toward the agent.
    rejected(agent, &[], CHUNK);
    // A response to the agent's fs/read_text_file needs the content.
    let asked = [
        r#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#,
    ];
    accepted(
        agent,
        &asked,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":"text"}}"#,
    );
    rejected(
        agent,
        &asked,
        r#"{"jsonrpc":"2.0","id":7,"result":{"text":"text"}}"#,
    );
}

#[test]
fn proxy_link_judges_the_envelope_and_what_it_wraps() {
    let proxy = LinkKind::Proxy;
    accepted(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
    );
    rejected(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{}}"#,
    );
    rejected(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"_proxy/initialize","params":{}}"#,
    );
    // A wrapped agent→client message is judged as one.
    accepted(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}}"#,
    );
    rejected(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan"}}}}"#,
    );
    rejected(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"params":{}}}"#,
    );
    // A client→agent request wrapped is in the wrong direction.
    rejected(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/","mcpServers":[]}}}"#,
    );
    // Plain, a client→agent request.
    rejected(
        proxy,
        &[],
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s"}}"#,
    );
    // The answer to the proxy's wrapped `initialize` is an InitializeResponse.
    let asked = [
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    ];
    accepted(
        proxy,
        &asked,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    );
    rejected(
        proxy,
        &asked,
        r#"{"jsonrpc":"2.0","id":0,"result":{"agentCapabilities":{}}}"#,
    );
    // The answer to a permission request the proxy passed toward the editor.
    let asked = [r#"{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{}}"#];
    accepted(
        proxy,
        &asked,
        r#"{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"cancelled"}}}"#,
    );
    rejected(
        proxy,
        &asked,
        r#"{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"maybe"}}}"#,
    );
}

#[test]
fn parent_link_is_a_proxy_seen_from_its_conductor() {
    let parent = LinkKind::Parent;
    let asked = [
        r#"{"jsonrpc":"2.0","id":"init","method":"proxy/initialize","params":{"protocolVersion":1}}"#,
    ];
    accepted(
        parent,
        &asked,
        r#"{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":1}}"#,
    );
    rejected(
        parent,
        &asked,
        r#"{"jsonrpc":"2.0","id":"init","result":{}}"#,
    );
    // Toward the parent, client→agent messages are wrapped and agent→client ones plain.
    accepted(
        parent,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/","mcpServers":[]}}}"#,
    );
    rejected(
        parent,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/new","params":{"mcpServers":[]}}}"#,
    );
    accepted(parent, &[], CHUNK);
    rejected(
        parent,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
    );
    // The answer to a wrapped agent→client request the parent passed on.
    let asked = [
        r#"{"jsonrpc":"2.0","id":9,"method":"proxy/successor","params":{"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}}"#,
    ];
    accepted(
        parent,
        &asked,
        r#"{"jsonrpc":"2.0","id":9,"result":{"terminalId":"t"}}"#,
    );
    rejected(
        parent,
        &asked,
        r#"{"jsonrpc":"2.0","id":9,"result":{"terminal":"t"}}"#,
    );
}

#[test]
fn shim_link_judges_the_json_rpc_envelope_only() {
    let shim = LinkKind::Shim;
    accepted(
        shim,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
    );
    accepted(
        shim,
        &[],
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
    );
    rejected(shim, &[], r#"{"jsonrpc":"1.0","id":1,"result":{}}"#);
    rejected(shim, &[], r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
    rejected(shim, &[], r#"["not", "an", "object"]"#);
    rejected(shim, &[], "not json");
}

#[test]
fn only_the_named_legacy_forms_are_excused() {
    let editor = LinkKind::Editor;
    let judged = accepted(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"mcp/connect","params":{"acpId":"tools-1"}}"#,
    );
    assert_eq!(judged.legacy, Some(Legacy::McpConnect));
    // Still an envelope to judge.
    rejected(
        editor,
        &[],
        r#"{"id":1,"method":"mcp/connect","params":{"acpId":"tools-1"}}"#,
    );
    // `mcp/message` with neither connectionId nor serverId is no form at all.
    rejected(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"mcp/message","params":{"method":"tools/list"}}"#,
    );
    // Schema 1.20's form is judged by the schema.
    accepted(
        editor,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"mcp/message","params":{"serverId":"t","requestId":"r","method":"tools/list"}}"#,
    );
    // A declaration's `id` is read as `serverId`; the rest is still judged.
    let agent = LinkKind::Agent;
    let judged = accepted(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[{"type":"acp","name":"t","id":"t-1"}]}}"#,
    );
    assert_eq!(judged.legacy, Some(Legacy::AcpDeclarationWithId));
    rejected(
        agent,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"mcpServers":[{"type":"acp","name":"t","id":"t-1"}]}}"#,
    );
}

#[test]
fn an_error_may_answer_an_invalid_line_and_nothing_else_may() {
    let editor = LinkKind::Editor;
    let sent = [
        r#"{"jsonrpc":"2.0","id":41,"params":{}}"#,
        r#"{"jsonrpc":"2.0","id":42,"method":"#,
    ];
    for id in ["41", "42", "null"] {
        accepted(
            editor,
            &sent,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"invalid"}}}}"#
            ),
        );
    }
    rejected(
        editor,
        &sent,
        r#"{"jsonrpc":"2.0","id":43,"error":{"code":-32600,"message":"x"}}"#,
    );
    rejected(editor, &sent, r#"{"jsonrpc":"2.0","id":41,"result":{}}"#);
}
