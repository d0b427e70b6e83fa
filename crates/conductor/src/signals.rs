//! The signals that stop the conductor (SIGTERM, SIGINT, SIGHUP), by name: `run` hands each
//! to its router (but SIGHUP, which reloads `run`'s configuration); `serve` drains on the
//! first SIGTERM or SIGINT and stops on the second (SIGHUP reloads its configuration), and
//! tells its chains when to stop ([`ChainStops`]). The one place their stop handlers are
//! installed.

use acp_link::event::Event;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{mpsc, watch};

/// What stops one chain: the process's signals (`run`, `doctor --probe`), or whoever runs
/// the chain (`serve`, which drains first), naming why.
pub(crate) enum ChainStops {
    Signals,
    Told(watch::Receiver<Option<&'static str>>),
}

impl ChainStops {
    /// Hands each stop to the chain's router as it comes, as [`Event::Signal`] (a signal may
    /// come more than once), until the router is gone.
    pub(crate) async fn forward(self, events: mpsc::Sender<Event>) {
        match self {
            ChainStops::Signals => {
                let Some(mut signals) = StopSignals::install() else {
                    return;
                };
                loop {
                    let name = signals.next().await;
                    if events.send(Event::Signal(name)).await.is_err() {
                        return;
                    }
                }
            }
            ChainStops::Told(mut told) => {
                let why = match told.wait_for(Option::is_some).await {
                    Ok(why) => why.expect("waited for Some"),
                    Err(_) => return,
                };
                let _ = events.send(Event::Signal(why)).await;
            }
        }
    }
}

/// SIGHUP's name: `run` and `serve` reload their configuration on it (`doctor --probe`
/// stops).
pub(crate) const HANGUP: &str = "SIGHUP";

/// A handler for SIGHUP alone (`serve`'s reloads); `None`, with a warning, when it cannot be
/// installed.
pub(crate) fn hangups() -> Option<Signal> {
    signal(SignalKind::hangup())
        .inspect_err(|error| {
            tracing::warn!(
                "cannot handle SIGHUP ({error}): the configuration will not reload on it"
            );
        })
        .ok()
}

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
