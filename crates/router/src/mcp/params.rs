//! The params of `mcp/connect`, `mcp/message` and `mcp/disconnect`: reading the members
//! that route them and writing the ones the bridge sends. Inner MCP payloads stay raw bytes.

use acp_wire::RawValue;
use acp_wire::encode::json_string;
use acp_wire::splice::Members;

/// The routing members of an `mcp/*` params object, plus the flattened inner message.
#[derive(Debug, Default)]
pub struct McpFields<'a> {
    pub connection_id: Option<String>,
    pub acp_id: Option<String>,
    pub server_id: Option<String>,
    /// The connectionless form's caller-chosen id of the inner request.
    pub request_id: Option<String>,
    pub method: Option<String>,
    pub params: Option<&'a RawValue>,
}

impl<'a> McpFields<'a> {
    pub fn read(params: Option<&'a RawValue>) -> McpFields<'a> {
        let Some(members) = params.and_then(Members::of) else {
            return McpFields::default();
        };
        let string = |key: &str| {
            members
                .get(key)
                .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
        };
        McpFields {
            connection_id: string("connectionId"),
            acp_id: string("acpId"),
            server_id: string("serverId"),
            request_id: string("requestId"),
            method: string("method"),
            params: members.get("params").filter(|p| p.get() != "null"),
        }
    }
}

/// Where a bridged `mcp/message` goes on the provider's side.
#[derive(Debug, Clone, Copy)]
pub enum Address<'a> {
    /// An open connection (the RFD's form and the `serverId` + `mcp/connect` form).
    Connection(&'a str),
    /// The connectionless form: the server, and the id of this one inner request.
    Stateless {
        server_id: &'a str,
        request_id: &'a str,
    },
}

/// `{"connectionId":..,"method":..,"params":..}` or `{"serverId":..,"requestId":..,...}`.
pub fn message_params(address: Address<'_>, method: &str, params: Option<&str>) -> String {
    let mut out = Vec::with_capacity(64 + params.map_or(0, str::len));
    match address {
        Address::Connection(id) => {
            out.extend_from_slice(b"{\"connectionId\":");
            json_string(&mut out, id);
        }
        Address::Stateless {
            server_id,
            request_id,
        } => {
            out.extend_from_slice(b"{\"serverId\":");
            json_string(&mut out, server_id);
            out.extend_from_slice(b",\"requestId\":");
            json_string(&mut out, request_id);
        }
    }
    out.extend_from_slice(b",\"method\":");
    json_string(&mut out, method);
    if let Some(p) = params {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(p.as_bytes());
    }
    out.push(b'}');
    String::from_utf8(out).expect("built from UTF-8")
}

/// `{"<member>":"<id>"}`: the params of `mcp/connect` or `mcp/disconnect`.
pub fn single(member: &str, id: &str) -> String {
    serde_json::json!({ member: id }).to_string()
}

/// The `connectionId` of an `mcp/connect` result.
pub fn connection_id(result: &RawValue) -> Option<String> {
    Members::of(result)?
        .get("connectionId")
        .and_then(|v| serde_json::from_str(v.get()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn reads_routing_members() {
        let p = raw(
            r#"{"connectionId":"c1","method":"tools/call","params":{"name":"echo"},"_meta":{}}"#,
        );
        let f = McpFields::read(Some(&p));
        assert_eq!(f.connection_id.as_deref(), Some("c1"));
        assert_eq!(f.method.as_deref(), Some("tools/call"));
        assert_eq!(f.params.unwrap().get(), r#"{"name":"echo"}"#);
        let s = raw(r#"{"serverId":"s","requestId":"r","method":"ping","params":null}"#);
        let f = McpFields::read(Some(&s));
        assert_eq!(f.server_id.as_deref(), Some("s"));
        assert_eq!(f.request_id.as_deref(), Some("r"));
        assert!(f.params.is_none());
        let c = raw(r#"{"acpId":"a"}"#);
        assert_eq!(McpFields::read(Some(&c)).acp_id.as_deref(), Some("a"));
        assert!(McpFields::read(None).method.is_none());
        assert!(McpFields::read(Some(&raw("[1]"))).method.is_none());
    }

    #[test]
    fn writes_message_params() {
        let p = message_params(Address::Connection("c\"1"), "tools/list", Some("{}"));
        assert_eq!(
            p,
            r#"{"connectionId":"c\"1","method":"tools/list","params":{}}"#
        );
        let s = message_params(
            Address::Stateless {
                server_id: "s",
                request_id: "r1",
            },
            "notifications/initialized",
            None,
        );
        assert_eq!(
            s,
            r#"{"serverId":"s","requestId":"r1","method":"notifications/initialized"}"#
        );
        assert_eq!(single("acpId", "x"), r#"{"acpId":"x"}"#);
    }

    #[test]
    fn reads_connection_ids() {
        assert_eq!(
            connection_id(&raw(r#"{"connectionId":"conn-1","_meta":{}}"#)).as_deref(),
            Some("conn-1")
        );
        assert_eq!(connection_id(&raw(r#"{"connectionId":1}"#)), None);
        assert_eq!(connection_id(&raw("null")), None);
    }
}
