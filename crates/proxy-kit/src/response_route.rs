//! Where the response to each request the proxy sent goes: back to the side a forwarded
//! request came from, or to the hook that sent it. Knows nothing about I/O or the wire format.
//!
//! The ids themselves come from [`acp_wire::OutgoingRequests`], the table every sender of
//! requests in this workspace uses.

use acp_wire::{IdKey, OutgoingRequests};

use crate::action::ForwardedResponseHook;
use crate::message::{Response, Side};
use crate::peers::Peers;

/// A hook run on the response to a request a proxy sent itself.
pub type OriginatedResponseHook<P> = Box<dyn FnOnce(&mut P, &mut Peers<P>, Response<'_>)>;

/// Where the response to one of our requests goes.
pub(crate) enum ResponseRoute<P> {
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

/// The proxy's requests in flight, by the id it sent each with.
pub(crate) type InFlight<P> = OutgoingRequests<ResponseRoute<P>>;

/// Our id for the request `from` sent under `origin`, if we forwarded it and it is open.
pub(crate) fn find_forwarded<P>(
    in_flight: &InFlight<P>,
    from: Side,
    origin: &IdKey,
) -> Option<u64> {
    in_flight.find(|route| {
        matches!(route, ResponseRoute::Forwarded(f) if f.from == from && f.origin_key == *origin)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarded(from: Side, id: &str) -> ResponseRoute<()> {
        ResponseRoute::Forwarded(Forwarded {
            from,
            origin_id: id.into(),
            origin_key: IdKey::of(&acp_wire::RawValue::from_string(id.into()).unwrap()),
            method: "m".into(),
            then: None,
        })
    }

    #[test]
    fn forwarded_and_originated_requests_share_one_id_sequence() {
        let mut in_flight = InFlight::new();
        let a = in_flight.register(forwarded(Side::Editor, "0"));
        let b = in_flight.register(ResponseRoute::Originated(Box::new(|_, _, _| {})));
        assert_ne!(a, b);
        assert!(in_flight.complete(a).is_some());
        assert!(in_flight.complete(a).is_none());
        assert_eq!(in_flight.len(), 1);
    }

    #[test]
    fn finds_forwarded_by_side_and_decoded_id() {
        let mut in_flight = InFlight::new();
        let ours = in_flight.register(forwarded(Side::Agent, r#""a""#));
        in_flight.register(ResponseRoute::Originated(Box::new(|_, _, _| {})));
        let key = IdKey::of(&acp_wire::RawValue::from_string(r#""\u0061""#.into()).unwrap());
        assert_eq!(find_forwarded(&in_flight, Side::Agent, &key), Some(ours));
        assert_eq!(find_forwarded(&in_flight, Side::Editor, &key), None);
    }
}
