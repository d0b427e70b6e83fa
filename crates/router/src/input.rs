//! What the core is told: a link's frames and ends, a component instance gone, a bridge shim
//! connected, a signal. Plain data; the driver turns what its links and supervisor report into it.

use crate::link::{LinkEvent, LinkId};

#[derive(Debug)]
pub enum Input {
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
    /// An MCP bridge shim dialed the conductor's private socket on this new link, whose
    /// reader waits at a closed gate until the core resumes it.
    ShimConnected(LinkId),
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(&'static str),
}

/// How a component's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Code(i32),
    Signal(i32),
}
