//! What the driver hands on for a reload: a request from whoever watches the configuration,
//! the instances the components started for it, and the core's plan. Knows no config file
//! and decides nothing: the components say what to start, the core where each goes.

use acp_link::Link;
use acp_router::ReloadPlan;

/// A reload asked of a running chain.
#[derive(Debug)]
pub enum ReloadRequest<R> {
    /// The configuration to run from now on, read and checked.
    Apply(R),
    /// The new configuration could not be used: nothing changes; the editor is told why.
    Rejected(String),
}

/// What the components made of a reload request.
#[derive(Debug)]
pub enum ReloadStart {
    /// The new configuration runs the same chain: nothing to do.
    Unchanged,
    /// New instances were started on `links`; `plan` says where each goes and what leaves.
    Begun { plan: ReloadPlan, links: Vec<Link> },
}

/// Components that can begin a reload from a request of type `Request`.
pub trait Reloading {
    type Request: Send + 'static;

    /// Starts the instances `request` needs (nothing takes a place yet) and says where they
    /// go; on [`ReloadStart::Unchanged`] nothing was started.
    fn start_reload(&mut self, request: Self::Request) -> ReloadStart;
}
