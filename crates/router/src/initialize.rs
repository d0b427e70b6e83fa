//! What initialization means to the router: the protocol version the agent answered, reading
//! the agent's MCP capabilities, and telling proxies MCP-over-ACP is available. Every other byte
//! of the request and the response is kept.
//!
//! The version is not negotiated here: the editor's `initialize` (and a parent's
//! `proxy/initialize`) reaches every component with the version and params the editor wrote, the
//! agent answers with the version it supports (the one asked for, or its latest), and the editor
//! decides, as ACP has it. Lowering the version on the way would hand a version 1 agent the params
//! of version 2 (`info`, `capabilities`) under a version 1 label, so that it saw no
//! `clientCapabilities` at all (issue 23); passing both on lets a version 1 agent answer 1.

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

/// What the conductor remembers of the agent's `InitializeResponse`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentCapabilities {
    /// The agent speaks MCP-over-ACP itself (`agentCapabilities.mcpCapabilities.acp`).
    pub mcp_over_acp: bool,
}

impl AgentCapabilities {
    pub fn read(result: &RawValue) -> AgentCapabilities {
        let acp = Members::of(result)
            .and_then(|m| m.get("agentCapabilities"))
            .and_then(Members::of)
            .and_then(|m| m.get("mcpCapabilities"))
            .and_then(Members::of)
            .and_then(|m| m.get("acp"))
            .is_some_and(|v| v.get() == "true");
        AgentCapabilities { mcp_over_acp: acp }
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
