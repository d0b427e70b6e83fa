//! What a component's failure does to the chain and when silence counts as failure: the
//! policies the configuration sets and the core carries out. Plain data, no parsing.

use std::time::Duration;

/// What the conductor does when a component fails, and when a component that does not
/// answer counts as failed: `on_failure`, `restart_then`, `startup_timeout`, `request_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailurePolicy {
    pub on_failure: OnFailure,
    /// How long the component may take to answer `initialize` (or `proxy/initialize`).
    pub startup_timeout: Duration,
    /// How long it may take to answer any other request; `None` waits for ever (a prompt
    /// turn may run for many minutes).
    pub request_timeout: Option<Duration>,
}

impl Default for FailurePolicy {
    fn default() -> Self {
        Self {
            on_failure: OnFailure::Fail,
            startup_timeout: Duration::from_secs(60),
            request_timeout: None,
        }
    }
}

/// `on_failure`: what a component's failure does to the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// The chain goes down with it.
    #[default]
    Fail,
    /// A proxy is taken out and traffic flows around it from then on.
    Bypass,
    /// It is started again and initialized as before; once it has failed too often in a
    /// short time, `then` applies.
    Restart { then: AfterRestarts },
}

/// `restart_then`: what a component that keeps failing gets once restarting stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AfterRestarts {
    #[default]
    Fail,
    Bypass,
}
