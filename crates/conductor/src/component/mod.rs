//! The components of a chain (proxies and the agent) and how each is started.
//! Every kind ends up as the same thing for the router: a readable and a writable byte stream.

pub mod builtin;
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
