//! Requests the conductor sent on one link and has not yet seen answered: the id it chose
//! there, mapped to where the request came from and the id it had there.

use std::collections::HashMap;

use acp_wire::{IdKey, RawValue};
use bytes::Bytes;

use super::bridge::BridgeCall;
use crate::event::LinkId;

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
}

#[derive(Debug)]
pub struct Pending {
    pub origin: LinkId,
    /// The id the origin used, as its exact JSON text.
    pub origin_id: Box<str>,
    pub method: Box<str>,
    pub purpose: Purpose,
}

#[derive(Debug, Default)]
pub struct PendingRequests {
    next_id: u64,
    entries: HashMap<u64, Pending>,
}

impl PendingRequests {
    /// Records a request about to be sent and returns the id to send it with.
    pub fn register(&mut self, pending: Pending) -> u64 {
        self.next_id += 1;
        self.entries.insert(self.next_id, pending);
        self.next_id
    }

    pub fn complete(&mut self, id: u64) -> Option<Pending> {
        self.entries.remove(&id)
    }

    /// Our id for the request `origin` sent with id `key`, if still pending here.
    pub fn find(&self, origin: LinkId, key: &IdKey) -> Option<u64> {
        self.entries.iter().find_map(|(id, p)| {
            (p.origin == origin && raw_key(&p.origin_id).as_ref() == Some(key)).then_some(*id)
        })
    }

    /// Removes and returns every entry for which `take` is true.
    pub fn take_where(&mut self, mut take: impl FnMut(&Pending) -> bool) -> Vec<Pending> {
        let ids: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, p)| take(p))
            .map(|(id, _)| *id)
            .collect();
        ids.into_iter()
            .filter_map(|id| self.entries.remove(&id))
            .collect()
    }

    pub fn count_from(&self, origin: LinkId) -> usize {
        self.entries.values().filter(|p| p.origin == origin).count()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn raw_key(text: &str) -> Option<IdKey> {
    serde_json::from_str::<&RawValue>(text).ok().map(IdKey::of)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(origin: LinkId, id: &str) -> Pending {
        Pending {
            origin,
            origin_id: id.into(),
            method: "m".into(),
            purpose: Purpose::Relay,
        }
    }

    fn key(text: &str) -> IdKey {
        IdKey::of(&RawValue::from_string(text.into()).unwrap())
    }

    #[test]
    fn ids_are_per_link_counters_starting_at_one() {
        let mut p = PendingRequests::default();
        assert_eq!(p.register(pending(0, "0")), 1);
        assert_eq!(p.register(pending(0, "\"0\"")), 2);
        assert_eq!(p.complete(1).unwrap().origin_id.as_ref(), "0");
        assert!(p.complete(1).is_none(), "a response is matched once");
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn finds_by_origin_and_normalized_id() {
        let mut p = PendingRequests::default();
        let a = p.register(pending(0, r#""a""#));
        let b = p.register(pending(2, r#""a""#));
        let c = p.register(pending(0, "0"));
        assert_eq!(p.find(0, &key(r#""\u0061""#)), Some(a));
        assert_eq!(p.find(2, &key(r#""a""#)), Some(b));
        assert_eq!(p.find(0, &key("0")), Some(c));
        assert_eq!(p.find(0, &key(r#""0""#)), None);
        assert_eq!(p.find(1, &key(r#""a""#)), None);
    }

    #[test]
    fn take_where_removes_only_matching() {
        let mut p = PendingRequests::default();
        p.register(pending(0, "1"));
        p.register(pending(3, "2"));
        p.register(pending(0, "3"));
        assert_eq!(p.count_from(0), 2);
        let taken = p.take_where(|e| e.origin == 0);
        assert_eq!(taken.len(), 2);
        assert_eq!(p.len(), 1);
        assert_eq!(p.count_from(0), 0);
    }
}
