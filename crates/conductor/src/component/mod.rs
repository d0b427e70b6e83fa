//! The components of a chain (proxies and the agent) and how each is started.
//! Every kind ends up as the same thing for the router: a readable and a writable byte stream.

pub mod native;
pub mod stderr_tail;
pub mod wasm;

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use crate::event::{Event, LinkId};
use crate::transport::{Outbox, ReadGate};

/// A started component: the link the router talks to it through, and its lifecycle.
#[derive(Debug)]
pub struct Running {
    pub outbox: Outbox,
    pub gate: Arc<ReadGate>,
    pub lifecycle: Lifecycle,
}

/// What the chain needs to take a component down once routing is over. Deliberately
/// holds no outbox: the router's is the only one, so dropping the router closes stdin.
#[derive(Debug)]
pub struct Lifecycle {
    /// Becomes true once the component has fully stopped (process reaped, task ended).
    pub stopped: watch::Receiver<bool>,
    /// For native children: the process group to signal on shutdown.
    pub process_group: Option<i32>,
}

/// What every component starter needs from the chain.
#[derive(Debug, Clone)]
pub struct Wiring {
    pub link: LinkId,
    pub name: String,
    pub events: mpsc::Sender<Event>,
    pub max_line: usize,
    pub queue_limit: usize,
    pub write_timeout: std::time::Duration,
}

impl Wiring {
    /// Starts the reader and writer tasks for a component that talks over a pair of byte
    /// streams (a child's stdout/stdin, an in-memory pipe) and returns the router's handles.
    pub fn connect_streams<R, W>(
        &self,
        from_component: R,
        to_component: W,
    ) -> (Outbox, Arc<ReadGate>)
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (outbox, outbox_rx) = Outbox::new(self.queue_limit);
        let gate = Arc::new(ReadGate::default());
        tokio::spawn(crate::transport::write_async(
            self.link,
            to_component,
            outbox_rx,
            self.events.clone(),
            self.write_timeout,
        ));
        tokio::spawn(crate::transport::read_async(
            self.link,
            from_component,
            self.events.clone(),
            gate.clone(),
            self.max_line,
        ));
        (outbox, gate)
    }
}
