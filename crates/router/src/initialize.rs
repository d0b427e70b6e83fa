//! The rewrites initialization needs: the protocol version the chain is started with, reading
//! the agent's MCP capabilities, and telling proxies MCP-over-ACP is available. Every other
//! byte of the request and the response is kept.

use acp_wire::RawValue;
use acp_wire::splice::{Members, set_path};

/// The newest ACP protocol version the conductor routes. Version 2 (unstable in schema 1.20)
/// changes messages the router looks into, so a chain is never started with it.
pub const NEWEST_PROTOCOL_VERSION: u16 = 1;

/// The params the chain is initialized with, when they differ from the editor's: the version
/// the editor asked for, unless the conductor only routes an older one (as `initialize` is
/// negotiated, for `proxy/initialize` from a parent as well). A `protocolVersion` that is not
/// a version number is left for the agent to judge, as are params without one.
pub fn negotiate_version(params: &RawValue) -> Option<String> {
    let requested = Members::of(params)?.get("protocolVersion")?.get();
    let requested: u64 = requested.parse().ok()?;
    (requested > u64::from(NEWEST_PROTOCOL_VERSION)).then(|| {
        set_path(
            params,
            &["protocolVersion"],
            &NEWEST_PROTOCOL_VERSION.to_string(),
        )
    })
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
    fn a_newer_version_than_the_conductor_routes_is_negotiated_down_and_nothing_else_moves() {
        let params = raw(
            r#"{"protocolVersion":2,"clientCapabilities":{"fs":{"readTextFile":true}},"x":"\u0041"}"#,
        );
        assert_eq!(
            negotiate_version(&params).as_deref(),
            Some(
                r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}},"x":"\u0041"}"#
            )
        );
        assert!(negotiate_version(&raw(r#"{"protocolVersion":65535}"#)).is_some());
    }

    #[test]
    fn a_version_the_conductor_routes_or_no_version_number_is_left_as_sent() {
        for params in [
            r#"{"protocolVersion":1}"#,
            r#"{"protocolVersion":0}"#,
            r#"{"protocolVersion":"2"}"#,
            r#"{"protocolVersion":1.5}"#,
            r#"{"protocolVersion":-3}"#,
            r#"{"clientCapabilities":{}}"#,
            r#"[]"#,
        ] {
            assert_eq!(negotiate_version(&raw(params)), None, "{params}");
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
