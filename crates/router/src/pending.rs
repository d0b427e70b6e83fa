//! What the router waits for on each link: for every request it sent there, where the
//! response goes (the link and id it came from) and what else the response is for.

use std::time::Duration;

use acp_wire::{IdKey, OutgoingRequests, RawValue};
use bytes::Bytes;
use std::time::Instant;

use crate::link::LinkId;

/// The requests the conductor sent on one link, by the id it chose there.
pub type PendingRequests = OutgoingRequests<Pending>;

/// What to do with the response besides relaying it.
#[derive(Debug)]
pub enum Purpose {
    Relay,
    /// The agent's answer to `initialize`: read its capabilities, advertise MCP-over-ACP
    /// to the proxy that asked.
    AgentInitialize,
    /// `proxy/initialize` to a proxy whose dialect is not pinned: on -32601, retry the same
    /// params as `_proxy/initialize`.
    ProxyInitialize {
        params: Option<Bytes>,
    },
    /// The agent's `mcp/connect`: its result names the connection later messages use.
    McpConnect,
    /// A request the MCP bridge made for the shim that is the entry's origin.
    Bridge(BridgeCall),
    /// The `initialize` the conductor sent a component it started again; the answer is its
    /// own.
    Reinitialize,
}

/// What a bridge request was for, so its response can be turned into MCP.
#[derive(Debug)]
pub enum BridgeCall {
    Connect,
    /// An MCP request of the agent's; the entry's origin id is the MCP id.
    Reply,
    /// The agent's `initialize` to a connectionless provider, answered from `server/discover`.
    Discover,
    /// The fallback when `server/discover` failed: `tools/list`.
    ProbeTools,
    /// An MCP request sent connectionless with this `requestId`.
    Stateless {
        request_id: String,
    },
    Disconnect,
    /// The agent's client's `initialize`, made again by the bridge on a connection that
    /// replaced one that died with its provider; the answer is dropped.
    Handshake,
}

/// One request the conductor sent and waits to hear back about.
#[derive(Debug)]
pub struct Pending {
    /// The link the request came from, where the response goes.
    pub origin: LinkId,
    /// The id the origin used, as its exact JSON text.
    pub origin_id: Box<str>,
    pub method: Box<str>,
    pub purpose: Purpose,
    /// When the component must have answered (and the limit that set it), if its policy
    /// sets one.
    pub deadline: Option<(Instant, Duration)>,
}

/// Our id for the request `origin` sent with id `key`, if it is still pending in `requests`.
/// Ids match as JSON-RPC ids do: strings by their decoded text, numbers by their literal.
pub fn find_forwarded(requests: &PendingRequests, origin: LinkId, key: &IdKey) -> Option<u64> {
    requests.find(|p| p.origin == origin && raw_key(&p.origin_id).as_ref() == Some(key))
}

fn raw_key(text: &str) -> Option<IdKey> {
    serde_json::from_str::<&RawValue>(text).ok().map(IdKey::of)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(origin: usize, id: &str) -> Pending {
        Pending {
            origin: LinkId(origin),
            origin_id: id.into(),
            method: "m".into(),
            purpose: Purpose::Relay,
            deadline: None,
        }
    }

    fn key(text: &str) -> IdKey {
        IdKey::of(&RawValue::from_string(text.into()).unwrap())
    }

    #[test]
    fn ids_are_per_link_counters_starting_at_one() {
        let mut p = PendingRequests::new();
        assert_eq!(p.register(pending(0, "0")), 1);
        assert_eq!(p.register(pending(0, "\"0\"")), 2);
        assert_eq!(p.complete(1).unwrap().origin_id.as_ref(), "0");
        assert!(p.complete(1).is_none(), "a response is matched once");
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn finds_by_origin_and_normalized_id() {
        let mut p = PendingRequests::new();
        let a = p.register(pending(0, r#""a""#));
        let b = p.register(pending(2, r#""a""#));
        let c = p.register(pending(0, "0"));
        assert_eq!(find_forwarded(&p, LinkId(0), &key(r#""\u0061""#)), Some(a));
        assert_eq!(find_forwarded(&p, LinkId(2), &key(r#""a""#)), Some(b));
        assert_eq!(find_forwarded(&p, LinkId(0), &key("0")), Some(c));
        assert_eq!(find_forwarded(&p, LinkId(0), &key(r#""0""#)), None);
        assert_eq!(find_forwarded(&p, LinkId(1), &key(r#""a""#)), None);
    }
}
