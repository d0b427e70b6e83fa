//! The trait a proxy implements: four hooks, each passing its message through by default.
//! Says what a proxy may decide; how decisions reach the wire is the serve loop's business.

use crate::action::{NotificationAction, RequestAction};
use crate::message::{Notification, Request};
use crate::peers::Peers;

/// A proxy: override the hooks for the traffic you care about; everything else passes
/// through unchanged.
///
/// Hooks see ACP methods as the ends of the chain name them: the conductor's
/// `proxy/initialize` arrives at [`on_editor_request`](Self::on_editor_request) as
/// `initialize`, and messages from the successor arrive already taken out of their
/// `proxy/successor` envelope. Matched `$/cancel_request` notifications are rewritten and
/// passed on by the kit; a hook sees only those naming a request it answered or deferred
/// (forwarding one of those sends nothing, since no one on the other side knows that id).
pub trait Proxy: Sized + 'static {
    /// A request from the editor side, on its way to the agent.
    fn on_editor_request(
        &mut self,
        peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        let _ = (peers, request);
        RequestAction::Forward
    }

    /// A notification from the editor side, on its way to the agent.
    fn on_editor_notification(
        &mut self,
        peers: &mut Peers<Self>,
        notification: &Notification<'_>,
    ) -> NotificationAction {
        let _ = (peers, notification);
        NotificationAction::Forward
    }

    /// A request from the agent side (permission, fs, terminal, ...), on its way to the editor.
    fn on_agent_request(
        &mut self,
        peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        let _ = (peers, request);
        RequestAction::Forward
    }

    /// A notification from the agent side (`session/update`, ...), on its way to the editor.
    fn on_agent_notification(
        &mut self,
        peers: &mut Peers<Self>,
        notification: &Notification<'_>,
    ) -> NotificationAction {
        let _ = (peers, notification);
        NotificationAction::Forward
    }
}
