//! A std-only kit for writing ACP proxies: the author writes hooks, the kit runs the stdin/stdout
//! loop and the proxy-chain protocol. Knows no async runtime, no threads and no particular proxy.
//!
//! A proxy sits between an editor-side predecessor and an agent-side successor, both reached
//! through one stdio channel to the conductor. The kit answers `proxy/initialize` (in the
//! dialect it was addressed in), wraps and unwraps `proxy/successor`, chooses the id of every
//! request it sends and routes each response back, and forwards whatever a hook does not touch
//! with its payload bytes unchanged. A proxy implements [`Proxy`], overriding only the hooks it
//! needs:
//!
//! ```no_run
//! use proxy_kit::{Peers, NotificationAction, Notification, Proxy};
//!
//! struct CountUpdates(u64);
//!
//! impl Proxy for CountUpdates {
//!     fn on_agent_notification(
//!         &mut self,
//!         _peers: &mut Peers<Self>,
//!         notification: &Notification<'_>,
//!     ) -> NotificationAction {
//!         if notification.method() == "session/update" {
//!             self.0 += 1;
//!             proxy_kit::debug!("{} updates so far", self.0);
//!         }
//!         NotificationAction::Forward
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     proxy_kit::log::init("count-updates", None);
//!     proxy_kit::run(CountUpdates(0))
//! }
//! ```
//!
//! The same source builds natively and for `wasm32-wasip1` / `wasm32-wasip2`: stdin is read
//! with blocking reads and everything runs on the calling thread. stdout carries the protocol
//! only; logs go to stderr through [`log`].
#![deny(clippy::print_stdout)]

mod action;
pub mod json;
pub mod log;
mod message;
pub mod path;
mod peers;
mod proxy;
mod response_route;
mod serve;
pub mod session;
#[cfg(not(target_family = "wasm"))]
pub mod testing;

pub use acp_wire::error_code;
pub use acp_wire::successor::EnvelopeMeta;
pub use acp_wire::{Outcome, RawValue};
pub use action::{
    ForwardedResponseHook, NotificationAction, RequestAction, ResponseAction, RpcError,
};
pub use message::{Notification, Request, RequestHandle, Response, Side};
pub use peers::Peers;
pub use proxy::Proxy;
pub use serve::{run, serve};

/// The proxy-authoring guide, compiled as a doctest so its example cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/proxies.md")]
pub struct ProxiesGuide;
