//! One chain per connection: the transport hands each admitted connection's ends here, and
//! the chain runs on the runtime's main thread (children are tied to the thread that spawns
//! them, see `supervisor::starter`) until the connection ends; then it is stopped and
//! its processes reaped by the same run path `acp-conductor run` uses.
//!
//! Proxies with `shared = true` are the exception: started once when serving starts, every
//! chain attaches to them (`component::shared`), and they stop when serving stops. A reload
//! (`reload.rs`) changes what the next chains start from.

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use acp_remote::serve::{Arrivals, ConnectionId, NewConnection, ReloadAsks};
use tokio::sync::{mpsc, watch};
use tracing::Instrument;

use super::drain::DrainState;
use super::reload::{OpenChains, Reloadable};
use crate::config::Config;
use crate::run;
use crate::signals::ChainStops;
use acp_drivers::component::shared::SharedProxies;
use acp_drivers::driver::ReloadRequest;
use acp_drivers::runtime::MainThread;
use acp_drivers::supervisor::ReloadTo;
use acp_router::topology::ChainMode;

/// Runs the chains; lives on the main thread.
pub(super) struct Runner {
    config: Config,
    mode: ChainMode,
    arrivals: Arrivals,
    /// `POST /reload` on the admin listener.
    reload_asks: ReloadAsks,
    /// Says when (and why) every chain left must stop.
    told: watch::Receiver<Option<&'static str>>,
    drain: DrainState,
}

impl Runner {
    pub(super) fn new(
        config: Config,
        mode: ChainMode,
        arrivals: Arrivals,
        reload_asks: ReloadAsks,
        told: watch::Receiver<Option<&'static str>>,
        drain: DrainState,
    ) -> Runner {
        Runner {
            config,
            mode,
            arrivals,
            reload_asks,
            told,
            drain,
        }
    }

    /// Starts the shared proxies, then a chain for each connection until `stop` completes
    /// (the drain is over), reloading the configuration when asked (`reload`); then waits up
    /// to `grace` for the chains still running to stop (each has been told to, or its client
    /// left), and stops the shared proxies. Must be driven inside a `LocalSet` on the main
    /// thread.
    pub(super) async fn run(
        mut self,
        main: MainThread,
        stop: impl Future<Output = ()>,
        grace: Duration,
    ) {
        let mut current = Reloadable::start(main, self.config, self.reload_asks);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                connection = self.arrivals.next() => match connection {
                    Some(connection) => {
                        let reloads = current.open.open(&connection.id);
                        let chain = run_chain(
                            main,
                            current.config.clone(),
                            self.mode,
                            connection,
                            Served {
                                shared: current.shared.clone(),
                                told: self.told.clone(),
                                drain: self.drain.clone(),
                                open: current.open.clone(),
                            },
                            reloads,
                        );
                        tokio::task::spawn_local(chain);
                    }
                    None => break,
                },
                ask = current.asked() => {
                    let answer = current.reload(main, for_connection).await;
                    if let Some(ask) = ask {
                        ask.answer(answer);
                    }
                }
                () = &mut stop => break,
            }
        }
        if let Err(running) = self.arrivals.close(grace).await {
            tracing::warn!(
                "{running} chains still running {grace:?} after the server stopped; leaving them"
            );
        }
        current.stop().await;
    }
}

/// What every chain of this `serve` shares.
struct Served {
    shared: Rc<SharedProxies>,
    told: watch::Receiver<Option<&'static str>>,
    drain: DrainState,
    open: OpenChains,
}

async fn run_chain(
    main: MainThread,
    config: Rc<Config>,
    mode: ChainMode,
    connection: NewConnection,
    served: Served,
    reloads: mpsc::Receiver<ReloadRequest<ReloadTo>>,
) {
    let NewConnection {
        id,
        from_client,
        to_client,
        admitted,
    } = connection;
    let config = for_connection(&config, &id);
    let span = tracing::info_span!("connection", id = %id);
    let counted = acp_metrics::get();
    if let Some(metrics) = counted {
        metrics.chains(served.drain.chain_state()).inc();
    }
    async {
        tracing::info!("client connected: starting its chain");
        let finish = run::run_chain(
            main,
            &config,
            mode,
            move |links| links.messages(from_client, to_client),
            None,
            &served.shared,
            ChainStops::Told(served.told),
            Some(reloads),
        )
        .await;
        tracing::info!("chain stopped ({finish:?})");
    }
    .instrument(span)
    .await;
    if let Some(metrics) = counted {
        metrics.chains(served.drain.chain_state()).dec();
    }
    served.open.closed(&id);
    drop(admitted);
    // What the chain allocated is free now: hand the heap's free pages back.
    trim_heap();
}

/// The config as one connection's run uses it (at its start, and after each reload that
/// changes open chains): a trace file of its own, named after the
/// connection, so that concurrent chains never write into one file.
fn for_connection(config: &Config, id: &ConnectionId) -> Config {
    let mut config = config.clone();
    if let Some(file) = &config.conductor.trace.file {
        config.conductor.trace.file = Some(per_connection_file(file, id));
    }
    config
}

fn per_connection_file(file: &std::path::Path, id: &ConnectionId) -> PathBuf {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let name = match file.extension() {
        Some(ext) => format!("{stem}.{id}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{id}"),
    };
    file.with_file_name(name)
}

/// Returns free heap pages to the kernel (glibc keeps them otherwise), so that the resident
/// set after a burst of connections is back near where it was.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn each_connection_traces_to_its_own_file() {
        let id = ConnectionId::random();
        assert_eq!(
            per_connection_file(Path::new("/t/run.jsonl"), &id),
            Path::new(&format!("/t/run.{id}.jsonl"))
        );
        assert_eq!(
            per_connection_file(Path::new("/t/run"), &id),
            Path::new(&format!("/t/run.{id}"))
        );
    }
}
