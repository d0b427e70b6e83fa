//! What the router hears about: what links read and write, component instances ending, bridge
//! shims connecting, signals. Plain data; producers are the link loops, the supervisor and the run.

pub use acp_router::ExitStatus;

use crate::{Link, LinkEvent, LinkId};

#[derive(Debug)]
pub enum Event {
    /// Something a link's reader or writer saw.
    Link { link: LinkId, event: LinkEvent },
    /// The component instance behind `link` is gone (exited, crashed, could not start).
    Exited {
        link: LinkId,
        reason: String,
        /// How its process ended; `None` for a WASM instance or one that never started.
        status: Option<ExitStatus>,
        stderr_tail: Vec<String>,
    },
    /// An MCP bridge shim dialed the conductor's private socket; this is its link.
    ShimConnected(Link),
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(&'static str),
}
