//! The signals that stop the conductor (SIGTERM, SIGINT, SIGHUP), by name: `run` hands each
//! to its router (but SIGHUP, which reloads its configuration), `serve` stops on the first.
//! The one place their handlers are installed.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// SIGHUP's name: `run` reloads its configuration on it.
pub(crate) const HANGUP: &str = "SIGHUP";

pub(crate) struct StopSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl StopSignals {
    /// The handlers, installed; `None`, with a warning, when they cannot be.
    pub(crate) fn install() -> Option<StopSignals> {
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(term), Ok(int), Ok(hup)) => Some(StopSignals { term, int, hup }),
            _ => {
                tracing::warn!("could not install signal handlers");
                None
            }
        }
    }

    /// The name of the next one to arrive.
    pub(crate) async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => HANGUP,
        }
    }
}
