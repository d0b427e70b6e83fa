//! `serve`'s reload: SIGHUP, `POST /reload` on the admin listener (and, with `watch`, a change
//! on disk) has the configuration read again and checked as `check` does. Connections opened from then on run the new chain; with
//! `reload_open` each open connection's chain is changed to it too, as `run` changes its one
//! chain. Shared proxies are reloaded once, for every chain. Knows configurations, the shared
//! proxies' hubs and the open chains' reload channels; never a message.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use acp_drivers::component::shared::{SharedHubs, SharedProxies};
use acp_drivers::driver::ReloadRequest;
use acp_drivers::runtime::MainThread;
use acp_drivers::spec::diff::{FileDigests, Side, diff};
use acp_drivers::supervisor::ReloadTo;
use acp_drivers::supervisor::shared_proxies::reload_hubs;
use acp_metrics::labels::ReloadOutcome;
use acp_remote::serve::{ConnectionId, ReloadAnswer, ReloadAsk, ReloadAsks};
use tokio::signal::unix::Signal;
use tokio::sync::mpsc;

use crate::config::{self, Config};
use crate::config_watch::ConfigWatch;

/// Reloads one open chain may have waiting; more are refused with a warning.
const CHAIN_RELOAD_QUEUE: usize = 4;

/// What asks `serve` to reload: SIGHUP, `POST /reload`, and the watched files when `watch`
/// is on.
pub(super) struct Triggers {
    hangup: Option<Signal>,
    asks: Option<ReloadAsks>,
    watch: Option<ConfigWatch>,
}

impl Triggers {
    pub(super) fn install(config: &Config, asks: ReloadAsks) -> Triggers {
        let hangup = crate::signals::hangups();
        let watch = config
            .conductor
            .watch
            .then(|| ConfigWatch::start(config))
            .flatten();
        Triggers {
            hangup,
            asks: Some(asks),
            watch,
        }
    }

    /// Returns at the next SIGHUP, `POST /reload` (with where its answer goes) or burst of
    /// changes to the watched files.
    pub(super) async fn next(&mut self) -> Option<ReloadAsk> {
        let hangup = async {
            match &mut self.hangup {
                Some(hangup) => hangup.recv().await,
                None => std::future::pending().await,
            }
        };
        let changed = async {
            match &mut self.watch {
                Some(watch) => watch.next_burst().await,
                None => std::future::pending().await,
            }
        };
        let asked = async {
            match &mut self.asks {
                Some(asks) => asks.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = hangup => tracing::info!("SIGHUP: reading the configuration again"),
            () = changed => tracing::info!("the configuration changed on disk"),
            ask = asked => match ask {
                Some(ask) => return Some(ask),
                // No admin listener (or it has stopped): no more asks.
                None => self.asks = None,
            },
        }
        None
    }

    /// From now on the files `config` names are the ones watched.
    fn follow(&mut self, config: &Config) {
        if let Some(watch) = &mut self.watch {
            watch.follow(config);
        }
    }
}

/// The chains of the connections open now, each with the channel its reloads go in by; a
/// chain is in it from its start to its end.
#[derive(Clone, Default)]
pub(super) struct OpenChains(Rc<RefCell<HashMap<ConnectionId, OpenChain>>>);

struct OpenChain {
    reloads: mpsc::Sender<ReloadRequest<ReloadTo>>,
}

impl OpenChains {
    /// Registers the chain of connection `id`; its reloads come out of the receiver.
    pub(super) fn open(&self, id: &ConnectionId) -> mpsc::Receiver<ReloadRequest<ReloadTo>> {
        let (reloads, receiver) = mpsc::channel(CHAIN_RELOAD_QUEUE);
        self.0
            .borrow_mut()
            .insert(id.clone(), OpenChain { reloads });
        receiver
    }

    /// The chain of connection `id` has stopped.
    pub(super) fn closed(&self, id: &ConnectionId) {
        self.0.borrow_mut().remove(id);
    }

    fn len(&self) -> usize {
        self.0.borrow().len()
    }

    /// Hands each open chain its request, made for its connection by `request`.
    fn send(&self, request: impl Fn(&ConnectionId) -> ReloadRequest<ReloadTo>) {
        for (id, chain) in self.0.borrow().iter() {
            if let Err(error) = chain.reloads.try_send(request(id)) {
                tracing::warn!(connection = %id, "this connection's chain was not reloaded: {error}");
            }
        }
    }
}

/// The configuration `serve` starts chains from, and what reloading it needs.
pub(super) struct Reloadable {
    /// Chains opened now start from this.
    pub(super) config: Rc<Config>,
    digests: FileDigests,
    /// The shared proxies chains opened now attach to.
    pub(super) shared: Rc<SharedProxies>,
    hubs: SharedHubs,
    /// `reload_open` as `serve` started with it (like the rest of `[conductor]`).
    reload_open: bool,
    triggers: Triggers,
    pub(super) open: OpenChains,
}

impl Reloadable {
    /// Starts the shared proxies of `config`; `POST /reload` asks come from `asks`.
    pub(super) fn start(main: MainThread, config: Config, asks: ReloadAsks) -> Reloadable {
        let (shared, hubs) = acp_drivers::supervisor::shared_proxies::start_hubs(main, &config);
        Reloadable {
            digests: FileDigests::of(&config),
            reload_open: config.conductor.reload_open,
            triggers: Triggers::install(&config, asks),
            config: Rc::new(config),
            shared: Rc::new(shared),
            hubs,
            open: OpenChains::default(),
        }
    }

    /// Returns when a reload is asked for: with where its answer goes, when an operator
    /// asked over HTTP.
    pub(super) async fn asked(&mut self) -> Option<ReloadAsk> {
        self.triggers.next().await
    }

    /// Reads the configuration again and, when it is valid and changed, makes it the one
    /// chains start from (and, with `reload_open`, the one every open chain changes to); says
    /// what came of it.
    pub(super) async fn reload(
        &mut self,
        main: MainThread,
        make: fn(&Config, &ConnectionId) -> Config,
    ) -> ReloadAnswer {
        let file = self.config.file.clone();
        let mode = self.config.conductor.mode;
        let loaded = tokio::task::spawn_blocking(move || {
            config::load_in_mode(&file, Some(mode)).map(|new| {
                let digests = FileDigests::of(&new);
                (new, digests)
            })
        })
        .await;
        let (mut new, digests) = match loaded {
            Ok(Ok(loaded)) => loaded,
            Ok(Err(errors)) => return self.rejected(errors.to_string()),
            Err(error) => return self.rejected(format!("the file could not be read: {error}")),
        };
        let changes = diff(
            Side {
                config: &self.config,
                digests: &self.digests,
            },
            Side {
                config: &new,
                digests: &digests,
            },
        );
        if changes.is_empty() {
            tracing::info!("the configuration is unchanged: nothing to reload");
            count(ReloadOutcome::Unchanged);
            return ReloadAnswer::Unchanged;
        }
        // `[conductor]` is applied on restart only, as under `run`.
        new.conductor = self.config.conductor.clone();
        let shared = reload_hubs(main, &self.shared, &mut self.hubs, &changes, &new);
        self.triggers.follow(&new);
        let open = self.open.len();
        let applied_to = match (self.reload_open, open) {
            (true, 1) => "new connections and the open one (reload_open) run the new chain".into(),
            (true, n) => {
                format!("new connections and the {n} open ones (reload_open) run the new chain")
            }
            (false, 1) => "new connections run the new chain; the open one keeps its own".into(),
            (false, n) => {
                format!("new connections run the new chain; the {n} open ones keep theirs")
            }
        };
        let mut lines: Vec<String> = changes.to_string().lines().map(str::to_owned).collect();
        tracing::info!("configuration reloaded: {}; {applied_to}", lines.join("; "));
        lines.push(applied_to);
        count(ReloadOutcome::Applied);
        self.config = Rc::new(new);
        self.digests = digests;
        self.shared = Rc::new(shared);
        if self.reload_open {
            let (config, shared) = (&self.config, &self.shared);
            self.open.send(|id| {
                ReloadRequest::Apply(ReloadTo {
                    config: make(config, id),
                    shared: SharedProxies::clone(shared),
                })
            });
        }
        ReloadAnswer::Applied(lines)
    }

    /// The file cannot be used: nothing changes; with `reload_open`, each open chain's editor
    /// is told, as under `run`.
    fn rejected(&self, message: String) -> ReloadAnswer {
        tracing::error!("the configuration was not reloaded: {message}");
        count(ReloadOutcome::Rejected);
        if self.reload_open {
            self.open.send(|_| ReloadRequest::Rejected(message.clone()));
        }
        ReloadAnswer::Rejected(message)
    }

    /// Stops the shared proxies (retired ones too), once every chain has stopped.
    pub(super) async fn stop(self) {
        self.hubs.stop().await;
    }
}

fn count(outcome: ReloadOutcome) {
    if let Some(metrics) = acp_metrics::get() {
        metrics.reloads(outcome).inc();
    }
}
