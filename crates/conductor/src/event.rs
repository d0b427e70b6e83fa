//! What the router hears about: frames read from links, writers catching up or failing,
//! components exiting, signals. Plain data; producers are the transport and component tasks.

use acp_wire::FrameError;
use bytes::Bytes;

/// Index of a link in the chain: 0 is the editor (or parent conductor), then the proxies in
/// order, then the agent.
pub type LinkId = usize;

#[derive(Debug)]
pub enum Event {
    Read {
        link: LinkId,
        event: ReadEvent,
    },
    /// A congested outbox fell below its resume mark: senders paused on it may go on.
    Drained {
        link: LinkId,
    },
    /// Writing to the peer failed (`stalled: false`, usually because it is exiting) or
    /// made no progress for the write timeout (`stalled: true`).
    WriteFailed {
        link: LinkId,
        reason: String,
        stalled: bool,
    },
    /// The component behind the link is gone (exited, crashed, could not start).
    Exited {
        link: LinkId,
        reason: String,
        stderr_tail: Vec<String>,
    },
    /// SIGTERM, SIGINT or SIGHUP.
    Signal(&'static str),
    /// An MCP bridge shim dialed the conductor's private socket.
    ShimConnected(tokio::net::UnixStream),
}

#[derive(Debug)]
pub enum ReadEvent {
    Frames(Vec<Bytes>),
    TooLong(FrameError),
    /// End of the peer's output; `Some` if it ended with a read error.
    Closed(Option<String>),
}
