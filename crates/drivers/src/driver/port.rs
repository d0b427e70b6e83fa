//! The core's port to the components, over the driver's [`Components`]: a restart's new
//! link (or a shim's) is kept here by id, and the core gets the id. Knows no routing.

use bytes::Bytes;

use super::Components;
use super::link_handles::LinkHandles;
use acp_link::{Link, LinkId};
use acp_metrics::labels::LinkKind;
use acp_router::topology::Position;
use acp_router::{BridgeEndpoint, BridgeForm, HttpBridgeSession, Launched, Restarted};

/// The components, and the handles of every link the core knows.
pub(super) struct Port<C> {
    components: C,
    pub(super) handles: LinkHandles,
    /// The kind of peer at each chain position, for the metrics of a restart's new link.
    kinds: Vec<LinkKind>,
}

impl<C> Port<C> {
    pub(super) fn new(components: C, kinds: Vec<LinkKind>) -> Port<C> {
        Port {
            components,
            handles: LinkHandles::default(),
            kinds,
        }
    }

    /// Keeps `link`'s handles; the core knows it by the returned id.
    pub(super) fn keep(&mut self, link: Link, kind: LinkKind) -> LinkId {
        let id = link.id;
        self.handles.keep(link, kind);
        id
    }

    pub(super) fn inner(&mut self) -> &mut C {
        &mut self.components
    }

    /// The components; the links' handles are dropped.
    pub(super) fn into_inner(self) -> C {
        self.components
    }
}

impl<C: Components> acp_router::Components for Port<C> {
    fn restart(&mut self, position: Position) -> Restarted {
        let super::Restarted {
            link,
            initialize_params,
        } = self.components.restart(position);
        let kind = self.kinds.get(position).copied().unwrap_or(LinkKind::Proxy);
        Restarted {
            link: self.keep(link, kind),
            initialize_params,
        }
    }

    fn stop(&mut self, position: Position) {
        self.components.stop(position);
    }

    fn initialized(&mut self, position: Position, params: Bytes) {
        self.components.initialized(position, params);
    }

    fn bridge(&mut self) -> std::io::Result<BridgeEndpoint> {
        self.components.bridge()
    }

    fn bridge_form(&self) -> BridgeForm {
        self.components.bridge_form()
    }

    fn http_bridge(&mut self, server_ids: &[String]) -> std::io::Result<HttpBridgeSession> {
        self.components.http_bridge(server_ids)
    }

    fn close_http_bridge(&mut self, key: &str) {
        self.components.close_http_bridge(key);
    }

    fn launched(&self, position: Position) -> Option<Launched> {
        self.components.launched(position)
    }

    fn swapped(&mut self, placements: &[acp_router::Placement]) {
        self.components.swapped(placements);
    }

    fn retire(&mut self, link: LinkId) {
        self.components.retire(link);
    }
}
