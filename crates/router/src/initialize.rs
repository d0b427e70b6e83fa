//! What initialization means to the router: the protocol version the agent answered, reading
//! the agent's MCP capabilities, and telling proxies MCP-over-ACP is available. Every other byte
//! of the request and the response is kept.
//!
//! The version is not negotiated here: the editor's `initialize` (and a parent's
//! `proxy/initialize`) reaches every component with the version and params the editor wrote, the
//! agent answers with the version it supports (the one asked for, or its latest), and the editor
//! decides, as ACP has it. Lowering the version on the way would hand a version 1 agent the params
//! of version 2 (`info`, `capabilities`) under a version 1 label, so that it saw no
//! `clientCapabilities` at all (issue 23); passing both on lets a version 1 agent answer 1. So
//! that an editor that asked for version 2 can read that answer, it gets version 2's `info` and
//! `capabilities` beside version 1's members ([`readable_by_newer_editor`]).

use acp_wire::RawValue;
use acp_wire::splice::{Members, set_path};

/// The newest ACP protocol version whose messages the router reads where it looks into them
/// (MCP-over-ACP declarations and capabilities). Version 2 is unstable in schema 1.20.
pub const NEWEST_PROTOCOL_VERSION: u16 = 1;

/// The version an agent's `InitializeResponse` chose, when it is newer than
/// [`NEWEST_PROTOCOL_VERSION`] (worth a warning: the chain then runs a version the router reads
/// as version 1).
pub fn newer_version_answered(result: &RawValue) -> Option<u64> {
    let version: u64 = Members::of(result)?
        .get("protocolVersion")?
        .get()
        .parse()
        .ok()?;
    (version > u64::from(NEWEST_PROTOCOL_VERSION)).then_some(version)
}

/// The protocol version an `initialize` request asks for, when it names one as an integer.
pub fn requested_version(params: Option<&RawValue>) -> Option<u64> {
    Members::of(params?)?
        .get("protocolVersion")?
        .get()
        .parse()
        .ok()
}

/// What version 2 has where version 1 has `agentInfo` and no name is known: the SDKs' own
/// stand-in for a missing `info`.
const UNKNOWN_INFO: &str = r#"{"name":"unknown","version":"unknown"}"#;

/// The answer to an editor that asked for version 2 or newer, made readable to it when the
/// agent answered version 1: version 2's `info` (from `agentInfo`) and `capabilities` (from
/// `agentCapabilities`) are added beside version 1's own members, so that a version 2 client
/// can read the version it was answered with and decide (its schema requires `info`); a
/// version 1 client ignores them. `None` when there is nothing to add.
pub fn readable_by_newer_editor(result: &RawValue, asked: u64) -> Option<String> {
    let members = Members::of(result)?;
    let answered: u64 = members.get("protocolVersion")?.get().parse().ok()?;
    if asked < 2 || answered >= 2 {
        return None;
    }
    let mut text = None::<String>;
    if members.get("info").is_none() {
        let info = members.get("agentInfo").map_or(UNKNOWN_INFO, |v| v.get());
        text = Some(set_path(result, &["info"], info));
    }
    if members.get("capabilities").is_none()
        && let Some(capabilities) = members.get("agentCapabilities")
    {
        let so_far = match &text {
            Some(t) => RawValue::from_string(t.clone()).ok()?,
            None => RawValue::from_string(result.get().to_owned()).ok()?,
        };
        text = Some(set_path(&so_far, &["capabilities"], capabilities.get()));
    }
    text
}

/// What the conductor remembers of the agent's `InitializeResponse`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentCapabilities {
    /// The agent speaks MCP-over-ACP itself (`agentCapabilities.mcpCapabilities.acp`).
    pub mcp_over_acp: bool,
    /// The agent takes MCP servers over HTTP (`agentCapabilities.mcpCapabilities.http`).
    pub mcp_http: bool,
}

impl AgentCapabilities {
    pub fn read(result: &RawValue) -> AgentCapabilities {
        let mcp = Members::of(result)
            .and_then(|m| m.get("agentCapabilities"))
            .and_then(Members::of)
            .and_then(|m| m.get("mcpCapabilities"))
            .and_then(Members::of);
        let says = |key: &str| {
            mcp.as_ref()
                .and_then(|m| m.get(key))
                .is_some_and(|v| v.get() == "true")
        };
        AgentCapabilities {
            mcp_over_acp: says("acp"),
            mcp_http: says("http"),
        }
    }
}

/// The result a proxy sees: the agent's, with `agentCapabilities.mcpCapabilities.acp: true`.
pub fn advertise_mcp_over_acp(result: &RawValue) -> String {
    set_path(
        result,
        &["agentCapabilities", "mcpCapabilities", "acp"],
        "true",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_version_answered_is_noticed_and_others_are_not() {
        assert_eq!(
            newer_version_answered(&raw(r#"{"protocolVersion":2,"agentCapabilities":{}}"#)),
            Some(2)
        );
        for result in [
            r#"{"protocolVersion":1}"#,
            r#"{"protocolVersion":0}"#,
            r#"{"protocolVersion":"2"}"#,
            r#"{"protocolVersion":1.5}"#,
            r#"{"agentCapabilities":{}}"#,
            r#"[]"#,
        ] {
            assert_eq!(newer_version_answered(&raw(result)), None, "{result}");
        }
    }

    #[test]
    fn a_version_1_answer_to_a_version_2_editor_gets_version_2s_info_and_capabilities() {
        let answer = raw(
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"name":"demo","version":"0.1"},"authMethods":[]}"#,
        );
        assert_eq!(
            readable_by_newer_editor(&answer, 2).as_deref(),
            Some(
                r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"name":"demo","version":"0.1"},"authMethods":[],"info":{"name":"demo","version":"0.1"},"capabilities":{"loadSession":true}}"#
            )
        );
        // No agentInfo: the SDKs' stand-in; no agentCapabilities: none added.
        assert_eq!(
            readable_by_newer_editor(&raw(r#"{"protocolVersion":1}"#), 3).as_deref(),
            Some(r#"{"protocolVersion":1,"info":{"name":"unknown","version":"unknown"}}"#)
        );
    }

    #[test]
    fn answers_that_need_nothing_are_left_alone() {
        let v1 = raw(r#"{"protocolVersion":1,"agentCapabilities":{}}"#);
        assert_eq!(readable_by_newer_editor(&v1, 1), None, "a version 1 editor");
        let v2 = raw(r#"{"protocolVersion":2,"info":{"name":"a","version":"1"}}"#);
        assert_eq!(readable_by_newer_editor(&v2, 2), None, "a version 2 answer");
        let both =
            raw(r#"{"protocolVersion":1,"info":{"name":"a","version":"1"},"capabilities":{}}"#);
        assert_eq!(readable_by_newer_editor(&both, 2), None, "already readable");
        assert_eq!(readable_by_newer_editor(&raw("[]"), 2), None);
        assert_eq!(
            readable_by_newer_editor(&raw(r#"{"protocolVersion":"1"}"#), 2),
            None
        );
    }

    #[test]
    fn the_requested_version_is_read_as_an_integer() {
        assert_eq!(
            requested_version(Some(&raw(r#"{"protocolVersion":2}"#))),
            Some(2)
        );
        assert_eq!(
            requested_version(Some(&raw(r#"{"protocolVersion":"2"}"#))),
            None
        );
        assert_eq!(requested_version(Some(&raw("{}"))), None);
        assert_eq!(requested_version(None), None);
    }

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn reads_acp_capability() {
        let yes = raw(r#"{"agentCapabilities":{"mcpCapabilities":{"acp":true}}}"#);
        let no = raw(r#"{"agentCapabilities":{"mcpCapabilities":{"http":true}}}"#);
        assert!(AgentCapabilities::read(&yes).mcp_over_acp);
        assert!(!AgentCapabilities::read(&no).mcp_over_acp);
        assert!(!AgentCapabilities::read(&raw("null")).mcp_over_acp);
        assert!(AgentCapabilities::read(&no).mcp_http);
        assert!(!AgentCapabilities::read(&yes).mcp_http);
    }

    #[test]
    fn advertises_without_touching_other_fields() {
        let r = raw(
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"x-extra":{"keep":true},"_meta":{"n":9007199254740993}}"#,
        );
        assert_eq!(
            advertise_mcp_over_acp(&r),
            r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"acp":true}},"x-extra":{"keep":true},"_meta":{"n":9007199254740993}}"#
        );
    }
}
