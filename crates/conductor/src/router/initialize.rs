//! The two rewrites initialization needs: reading the agent's MCP capabilities and telling
//! proxies MCP-over-ACP is available. Everything else in the response stays byte-for-byte.

use acp_wire::RawValue;
use acp_wire::splice::{Members, set_path};

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
