//! The connectionless form of MCP-over-ACP (the official SDK's `mcp/message {serverId,
//! requestId}` speaking stateless MCP 2026-07-28): the request `_meta` it needs, its
//! `{"result"}`/`{"error"}` outcome envelope, and the `initialize` answer the bridge makes up.

use acp_wire::RawValue;
use acp_wire::splice::{Members, set_path};

/// The MCP revision connectionless providers speak.
pub const REVISION: &str = "2026-07-28";
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// MCP revisions with an `initialize` handshake that the bridge can answer, oldest first.
const HANDSHAKE_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// What the agent's MCP client said in its `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientHello {
    /// The revision it asked for, when it named one.
    pub protocol_version: Option<String>,
    /// Its `capabilities` object as JSON text (`{}` when it sent none).
    pub capabilities: String,
}

impl ClientHello {
    pub fn read(params: Option<&RawValue>) -> ClientHello {
        let members = params.and_then(Members::of);
        let get = |key: &str| members.as_ref().and_then(|m| m.get(key));
        let protocol_version =
            get("protocolVersion").and_then(|v| serde_json::from_str(v.get()).ok());
        let capabilities = get("capabilities")
            .filter(|v| v.get().trim_start().starts_with('{'))
            .map_or_else(|| "{}".to_string(), |v| v.get().to_string());
        ClientHello {
            protocol_version,
            capabilities,
        }
    }

    /// Before the agent's `initialize` arrives (a client that skips it).
    pub fn unknown() -> ClientHello {
        ClientHello {
            protocol_version: None,
            capabilities: "{}".to_string(),
        }
    }
}

/// `params` with the per-request `_meta` a stateless provider requires; everything else
/// kept. `params` that are absent or not an object become `{"_meta":{...}}`. A client that
/// speaks the stateless revision itself names its revision there already: its params go as
/// they are.
pub fn with_request_meta(params: Option<&RawValue>, hello: &ClientHello) -> String {
    if let Some(params) = params
        && names_a_revision(params)
    {
        return params.get().to_string();
    }
    let version = serde_json::to_string(REVISION).expect("a string serializes");
    let empty;
    let params = match params.filter(|p| p.get().trim_start().starts_with('{')) {
        Some(p) => p,
        None => {
            empty = RawValue::from_string("{}".to_string()).expect("valid JSON");
            &empty
        }
    };
    let step = set_path(params, &["_meta", VERSION_KEY], &version);
    let step = RawValue::from_string(step).expect("set_path writes valid JSON");
    set_path(&step, &["_meta", CAPABILITIES_KEY], &hello.capabilities)
}

/// Whether request `params` carry `_meta["io.modelcontextprotocol/protocolVersion"]`: the
/// client speaks a stateless revision itself.
pub fn names_a_revision(params: &RawValue) -> bool {
    Members::of(params)
        .and_then(|m| m.get("_meta"))
        .and_then(Members::of)
        .is_some_and(|meta| meta.get(VERSION_KEY).is_some())
}

/// The inner MCP outcome of a connectionless `mcp/message` result.
#[derive(Debug)]
pub enum InnerOutcome<'a> {
    Result(&'a RawValue),
    Error(&'a RawValue),
    /// Neither member: the provider broke the envelope.
    Malformed,
}

pub fn inner_outcome(result: &RawValue) -> InnerOutcome<'_> {
    let Some(members) = Members::of(result) else {
        return InnerOutcome::Malformed;
    };
    if let Some(error) = members.get("error") {
        return InnerOutcome::Error(error);
    }
    match members.get("result") {
        Some(result) => InnerOutcome::Result(result),
        None => InnerOutcome::Malformed,
    }
}

/// The answer to the agent's `initialize`, made from the provider's `server/discover`
/// result when it gave one (its capabilities, serverInfo and instructions), else from the
/// fact that it lists tools. The revision is the client's when the bridge knows it, else
/// the newest handshake revision.
pub fn initialize_result(hello: &ClientHello, discovered: Option<&RawValue>, name: &str) -> String {
    let version = hello
        .protocol_version
        .as_deref()
        .filter(|v| HANDSHAKE_REVISIONS.contains(v))
        .unwrap_or(HANDSHAKE_REVISIONS[HANDSHAKE_REVISIONS.len() - 1]);
    let discovered = discovered.and_then(Members::of);
    let member = |key: &str| {
        discovered
            .as_ref()
            .and_then(|m| m.get(key))
            .filter(|v| v.get().trim_start().starts_with('{'))
            .map(|v| v.get().to_string())
    };
    let capabilities = member("capabilities").unwrap_or_else(|| r#"{"tools":{}}"#.to_string());
    // Revision 2026-07-28 moved `serverInfo` into `_meta`; earlier drafts had it on top.
    let server_info = member("serverInfo")
        .or_else(|| {
            discovered
                .as_ref()
                .and_then(|m| m.get("_meta"))
                .and_then(Members::of)
                .and_then(|meta| meta.get(SERVER_INFO_KEY).map(|v| v.get().to_string()))
                .filter(|v| v.trim_start().starts_with('{'))
        })
        .unwrap_or_else(|| serde_json::json!({ "name": name, "version": "unknown" }).to_string());
    let mut out = String::from("{\"protocolVersion\":");
    out.push_str(&serde_json::to_string(version).expect("a string serializes"));
    out.push_str(",\"capabilities\":");
    out.push_str(&capabilities);
    out.push_str(",\"serverInfo\":");
    out.push_str(&server_info);
    if let Some(instructions) = discovered
        .as_ref()
        .and_then(|m| m.get("instructions"))
        .filter(|v| v.get().trim_start().starts_with('"'))
    {
        out.push_str(",\"instructions\":");
        out.push_str(instructions.get());
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    fn json(s: &str) -> serde_json::Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn reads_the_client_hello() {
        let p = raw(
            r#"{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"x","version":"1"}}"#,
        );
        let h = ClientHello::read(Some(&p));
        assert_eq!(h.protocol_version.as_deref(), Some("2025-06-18"));
        assert_eq!(h.capabilities, r#"{"sampling":{}}"#);
        let bare = ClientHello::read(None);
        assert_eq!(bare, ClientHello::unknown());
        let odd = ClientHello::read(Some(&raw(r#"{"protocolVersion":3,"capabilities":[]}"#)));
        assert_eq!(odd, ClientHello::unknown());
    }

    #[test]
    fn adds_meta_keeping_params() {
        let hello = ClientHello {
            protocol_version: Some("2025-11-25".into()),
            capabilities: r#"{"elicitation":{}}"#.into(),
        };
        let p = raw(r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":7}}"#);
        let out = json(&with_request_meta(Some(&p), &hello));
        assert_eq!(out["name"], "echo");
        assert_eq!(out["arguments"]["text"], "hi");
        assert_eq!(out["_meta"]["progressToken"], 7);
        assert_eq!(out["_meta"][VERSION_KEY], REVISION);
        assert_eq!(
            out["_meta"][CAPABILITIES_KEY],
            json(r#"{"elicitation":{}}"#)
        );
        for absent in [None, Some(raw("null")), Some(raw("[1]"))] {
            let out = json(&with_request_meta(absent.as_deref(), &hello));
            assert_eq!(out["_meta"][VERSION_KEY], REVISION);
            assert!(out["_meta"][CAPABILITIES_KEY].is_object());
        }
    }

    #[test]
    fn a_stateless_clients_own_meta_is_kept_byte_for_byte() {
        let own = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}},"cursor":null}"#;
        assert_eq!(
            with_request_meta(Some(&raw(own)), &ClientHello::unknown()),
            own
        );
        assert!(names_a_revision(&raw(own)));
        assert!(!names_a_revision(&raw(r#"{"_meta":{"progressToken":1}}"#)));
        assert!(!names_a_revision(&raw("[]")));
    }

    #[test]
    fn reads_inner_outcomes() {
        let r = raw(r#"{"result":{"tools":[]}}"#);
        assert!(
            matches!(inner_outcome(&r), InnerOutcome::Result(v) if v.get() == r#"{"tools":[]}"#)
        );
        let e = raw(r#"{"error":{"code":-32602,"message":"bad"}}"#);
        assert!(matches!(inner_outcome(&e), InnerOutcome::Error(v) if v.get().contains("-32602")));
        let null = raw(r#"{"result":null}"#);
        assert!(matches!(inner_outcome(&null), InnerOutcome::Result(v) if v.get() == "null"));
        assert!(matches!(inner_outcome(&raw("{}")), InnerOutcome::Malformed));
        assert!(matches!(inner_outcome(&raw("7")), InnerOutcome::Malformed));
    }

    #[test]
    fn initialize_from_discovery() {
        let hello = ClientHello {
            protocol_version: Some("2025-06-18".into()),
            capabilities: "{}".into(),
        };
        let d = raw(
            r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"p","version":"2"},"instructions":"use me"}"#,
        );
        let out = json(&initialize_result(&hello, Some(&d), "tools"));
        assert_eq!(out["protocolVersion"], "2025-06-18");
        assert_eq!(out["capabilities"]["tools"]["listChanged"], true);
        assert_eq!(out["serverInfo"]["name"], "p");
        assert_eq!(out["instructions"], "use me");
        // As rmcp 3.11 answers: serverInfo under `_meta`.
        let sdk = raw(
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sdk-tools","version":"0.1.0"}}}"#,
        );
        let out = json(&initialize_result(&hello, Some(&sdk), "declared"));
        assert_eq!(
            out["serverInfo"],
            json(r#"{"name":"sdk-tools","version":"0.1.0"}"#)
        );
    }

    #[test]
    fn initialize_without_discovery() {
        let out = json(&initialize_result(&ClientHello::unknown(), None, "tools"));
        assert_eq!(out["protocolVersion"], "2025-11-25");
        assert_eq!(out["capabilities"], json(r#"{"tools":{}}"#));
        assert_eq!(out["serverInfo"]["name"], "tools");
        assert!(out.get("instructions").is_none());
        let future = ClientHello {
            protocol_version: Some("2099-01-01".into()),
            capabilities: "{}".into(),
        };
        let out = json(&initialize_result(&future, None, "tools"));
        assert_eq!(out["protocolVersion"], "2025-11-25");
    }
}
