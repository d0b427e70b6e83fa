//! The proxy's id table: every request it sends gets an id from one counter, and the entry
//! says where the response goes. Knows nothing about I/O or the wire format.

use std::collections::HashMap;

use acp_wire::IdKey;

use crate::action::ForwardedResponseHook;
use crate::chain::Chain;
use crate::message::{Response, Side};

/// A hook run on the response to a request a proxy sent itself.
pub type OriginatedResponseHook<P> = Box<dyn FnOnce(&mut P, &mut Chain<P>, Response<'_>)>;

/// Where the response to one of our requests goes.
pub(crate) enum Pending<P> {
    /// We passed on a request from `from`; its response goes back there under `origin_id`.
    Forwarded(Forwarded<P>),
    /// A hook sent this request; the response goes to the hook, never out.
    Originated(OriginatedResponseHook<P>),
}

pub(crate) struct Forwarded<P> {
    pub from: Side,
    /// The id the requester used, as JSON text, to be written back byte-for-byte.
    pub origin_id: Box<str>,
    pub origin_key: IdKey,
    pub method: Box<str>,
    pub then: Option<ForwardedResponseHook<P>>,
}

pub(crate) struct PendingRequests<P> {
    next_id: u64,
    entries: HashMap<u64, Pending<P>>,
}

impl<P> PendingRequests<P> {
    pub fn new() -> Self {
        PendingRequests {
            next_id: 1,
            entries: HashMap::new(),
        }
    }

    /// Records `pending` and returns the id to send the request under.
    pub fn register(&mut self, pending: Pending<P>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.entries.insert(id, pending);
        id
    }

    pub fn complete(&mut self, id: u64) -> Option<Pending<P>> {
        self.entries.remove(&id)
    }

    /// Our id for the request `from` sent under `origin`, if we forwarded it and it is open.
    pub fn find_forwarded(&self, from: Side, origin: &IdKey) -> Option<u64> {
        self.entries.iter().find_map(|(id, p)| match p {
            Pending::Forwarded(f) if f.from == from && f.origin_key == *origin => Some(*id),
            _ => None,
        })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarded(from: Side, id: &str) -> Pending<()> {
        Pending::Forwarded(Forwarded {
            from,
            origin_id: id.into(),
            origin_key: IdKey::of(&acp_wire::RawValue::from_string(id.into()).unwrap()),
            method: "m".into(),
            then: None,
        })
    }

    #[test]
    fn ids_are_unique_and_complete_once() {
        let mut p = PendingRequests::new();
        let a = p.register(forwarded(Side::Editor, "0"));
        let b = p.register(Pending::Originated(Box::new(|_, _, _| {})));
        assert_ne!(a, b);
        assert!(p.complete(a).is_some());
        assert!(p.complete(a).is_none());
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn finds_forwarded_by_side_and_decoded_id() {
        let mut p = PendingRequests::new();
        let ours = p.register(forwarded(Side::Agent, r#""a""#));
        let key = IdKey::of(&acp_wire::RawValue::from_string(r#""\u0061""#.into()).unwrap());
        assert_eq!(p.find_forwarded(Side::Agent, &key), Some(ours));
        assert_eq!(p.find_forwarded(Side::Editor, &key), None);
    }
}
