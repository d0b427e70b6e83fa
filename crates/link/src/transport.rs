//! The one place a task that moves a peer's bytes is spawned: the links' own read and write
//! loops, the tasks a message-framed transport runs behind its source and sink (a WebSocket's
//! connect and read, an HTTP stream's reader), the server that accepts served connections,
//! and the MCP bridge shim's copy loops. Knows no protocol.
//!
//! Keeping them here keeps one rule checkable: such a task runs on the runtime that runs the
//! links (the routing thread, in `run`), never on a thread of its own, and a new way of
//! reaching a peer adds its tasks through this module, not around it.

use std::future::Future;

use tokio::task::JoinHandle;

/// Spawns `work`, which moves bytes between a peer and a link, on the current runtime.
pub fn spawn<F>(work: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(work)
}
