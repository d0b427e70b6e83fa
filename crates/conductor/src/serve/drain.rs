//! How `serve` ends: the first SIGTERM or SIGINT (or `POST /drain`) drains, no new connection
//! is admitted and each open one closes once its client has no request in flight; after
//! `--drain-timeout`, or at a second signal, the chains left are told to stop (their pending
//! requests answered `-32002`). Knows the admission and the chains' stop, not the transport.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use acp_metrics::labels::ChainState;
use acp_remote::serve::Admission;
use tokio::sync::watch;

use crate::signals::{HANGUP, StopSignals};

/// Whether this `serve` drains, shared by the drain and the chains (for the chains gauge);
/// main thread only.
#[derive(Clone, Default)]
pub(super) struct DrainState(Rc<Cell<bool>>);

impl DrainState {
    pub(super) fn is_draining(&self) -> bool {
        self.0.get()
    }

    /// The state a chain counts itself in now.
    pub(super) fn chain_state(&self) -> ChainState {
        if self.is_draining() {
            ChainState::Draining
        } else {
            ChainState::Running
        }
    }

    /// From now on chains count as draining; the ones running move over.
    fn start(&self) {
        self.0.set(true);
        if let Some(metrics) = acp_metrics::get() {
            metrics.draining.set(1);
            let running = metrics.chains(ChainState::Running);
            metrics.chains(ChainState::Draining).inc_by(running.set(0));
        }
    }
}

/// Returns when serving should end: every connection has closed after a drain, or the
/// chains left have been told to stop (through `stop_chains`).
pub(super) async fn until_drained(
    admission: Admission,
    state: DrainState,
    stop_chains: watch::Sender<Option<&'static str>>,
    timeout: Duration,
) {
    let mut signals = StopSignals::install();
    let mut draining = admission.draining();
    let why = tokio::select! {
        name = next_signal(&mut signals) => name,
        _ = draining.wait_for(|draining| *draining) => "POST /drain",
    };
    admission.drain();
    state.start();
    tracing::info!(
        "{why}: draining; no new connections, {} open close once their requests in flight are \
         answered (at most {timeout:?})",
        admission.open()
    );
    tokio::select! {
        () = admission.all_closed() => {
            tracing::info!("drained: every connection has closed");
            return;
        }
        () = tokio::time::sleep(timeout) => {
            tracing::info!(
                "--drain-timeout ({timeout:?}) has passed: stopping the {} chains left",
                admission.open()
            );
        }
        name = next_signal(&mut signals) => {
            tracing::info!("{name} while draining: stopping the {} chains left now", admission.open());
        }
    }
    stop_chains.send_replace(Some(why));
}

/// The next signal that stops `serve`: SIGTERM or SIGINT (SIGHUP reloads, `reload.rs`).
async fn next_signal(signals: &mut Option<StopSignals>) -> &'static str {
    let Some(signals) = signals else {
        return std::future::pending().await;
    };
    loop {
        let name = signals.next().await;
        if name != HANGUP {
            return name;
        }
    }
}
