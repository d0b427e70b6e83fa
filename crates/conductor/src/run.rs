//! One conductor run: the supervisor starts the chain, the router routes until done, then
//! every link is closed and every component stopped; under `run`, SIGHUP reloads the
//! configuration (read and checked as `check` does). Owns the order of these steps only.

use std::os::fd::AsFd;
use std::time::Duration;

use acp_wire::successor::Dialect;
use tokio::sync::mpsc;

use crate::config::{self, AgentSpec, Config, FailurePolicy, ProxyLaunch};
use crate::config_watch::ConfigWatch;
use crate::signals::{ChainStops, HANGUP, StopSignals};
use acp_drivers::component::shared::SharedProxies;
use acp_drivers::driver::{ChainLink, Driver, ReloadRequest};
use acp_drivers::runtime::MainThread;
use acp_drivers::supervisor::{ReloadTo, Supervisor};
use acp_link::event::Event;
use acp_link::{Link, LinkDone, LinkId, LinkLimits, Links};
use acp_router::topology::{ChainMode, Topology};
use acp_router::{DialectChoice, Finish, Role};
use acp_trace::{self as trace, Trace, TraceError, TraceSink};

const EVENT_QUEUE: usize = 1024;
/// The name of position 0 in logs, errors and the trace.
const EDITOR: &str = "editor";
const PARENT: &str = "parent conductor";
const EDITOR_FLUSH_WAIT: Duration = Duration::from_secs(5);
/// At exit, after the agent stopped: how long its bridge shims get to close their side, and
/// then the last lines to them (over a local socket) get to be written.
const SHIM_FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Runs the chain described by `config` until the editor leaves, a signal arrives or a
/// component fails; returns how it ended once every component has stopped. Children are
/// started from `main`'s thread (see `runtime.rs`).
pub async fn run(main: MainThread, config: &Config, mode: ChainMode) -> Finish {
    run_chain_with(
        main,
        config,
        mode,
        connect_editor,
        None,
        &SharedProxies::none(),
        Stopping::SignalsReloadOnHangup,
        None,
    )
    .await
}

/// What stops a chain, and what SIGHUP does to it.
enum Stopping {
    /// `run`: SIGTERM and SIGINT stop it; SIGHUP (like the editor's `_acp-conductor/reload`
    /// and the watch) has the configuration file read again and the chain changed to match.
    SignalsReloadOnHangup,
    /// What the caller says: every signal stops it (`doctor --probe`), or `serve` does once
    /// it is done draining.
    Given(ChainStops),
}

/// How many reload requests may wait for the driver; more SIGHUPs meanwhile wait their turn.
const RELOAD_QUEUE: usize = 4;

/// Someone besides the router who follows a run: `doctor --probe`, which times each
/// component's answer to `initialize`. It sees every event just before the router does.
pub(crate) trait Watcher: Send + 'static {
    /// The chain as started, in order from position 1: each component's link and name.
    fn chain(&mut self, components: &[(LinkId, String)]);
    /// An event on its way to the router.
    fn event(&mut self, event: &Event);
}

/// [`run`], with the editor's link made by `editor` (the conductor's stdio, or an
/// in-memory peer for `doctor --probe`), `watcher`, if any, following the events, the
/// proxies in `shared` attached to rather than started (`serve`'s shared proxies), and
/// `stops` saying when to stop (the signals, or `serve` once it is done draining), and
/// `reloads`, if given, bringing the configurations to change the chain to (`serve`'s
/// reloads, with `reload_open`).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_chain(
    main: MainThread,
    config: &Config,
    mode: ChainMode,
    editor: impl FnOnce(&Links) -> (Link, LinkDone),
    watcher: Option<Box<dyn Watcher>>,
    shared: &SharedProxies,
    stops: ChainStops,
    reloads: Option<mpsc::Receiver<ReloadRequest<ReloadTo>>>,
) -> Finish {
    run_chain_with(
        main,
        config,
        mode,
        editor,
        watcher,
        shared,
        Stopping::Given(stops),
        reloads,
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn run_chain_with(
    main: MainThread,
    config: &Config,
    mode: ChainMode,
    editor: impl FnOnce(&Links) -> (Link, LinkDone),
    watcher: Option<Box<dyn Watcher>>,
    shared: &SharedProxies,
    stopping: Stopping,
    given_reloads: Option<mpsc::Receiver<ReloadRequest<ReloadTo>>>,
) -> Finish {
    let started = tokio::time::Instant::now();
    let settings = &config.conductor;
    let trace = match start_trace(config, mode) {
        Ok(trace) => trace,
        Err(error) => {
            tracing::error!("{error}");
            return Finish::Failed;
        }
    };
    let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE);
    let limits = LinkLimits {
        max_line: settings.max_line,
        queue_limit: settings.queue_limit,
        write_timeout: settings.write_timeout,
    };
    // The trace file's producers feed the OTLP export too when it is on.
    let otel = acp_otel::get().map(acp_otel::Otlp::chain);
    let sink = TraceSink::tee(trace.as_ref().map(|t| t.sink().clone()), otel.clone());
    let links = Links::new(events_tx.clone(), limits).traced(sink.clone());
    let topology = Topology {
        proxies: config.proxies.len(),
        mode,
    };
    let mut supervisor = Supervisor::new(
        main,
        config,
        topology,
        links.clone(),
        events_tx.clone(),
        shared,
    );
    // Components first, so that one failing to start is reported before anything the
    // editor sends.
    let components = supervisor.start_chain();
    if matches!(stopping, Stopping::SignalsReloadOnHangup) {
        // `run` is one chain for as long as the editor's session: what start-up needed of
        // the executable need not stay resident.
        let dropped = crate::resident::drop_startup_pages();
        tracing::debug!(bytes = dropped, "start-up pages of the executable dropped");
    }
    let events_rx = match watcher {
        Some(watcher) => watch(watcher, &components, events_rx),
        None => events_rx,
    };
    let (editor_link, editor_done) = editor(&links);
    let name = match mode {
        ChainMode::Agent => EDITOR,
        ChainMode::Proxy => PARENT,
    };
    let mut chain = vec![ChainLink {
        link: editor_link,
        name: name.to_string(),
        role: Role::Editor,
        dialect: DialectChoice::Pinned(Dialect::Rfd),
        failure: FailurePolicy::default(),
    }];
    chain.extend(components);
    // Stopped with the run: `serve` runs many, one after another, in one process.
    let (reload_tx, own_reloads) = mpsc::channel(RELOAD_QUEUE);
    let mut reloads = given_reloads.unwrap_or(own_reloads);
    let (wanted_tx, wanted) = mpsc::channel(RELOAD_QUEUE);
    let reload_with = matches!(stopping, Stopping::SignalsReloadOnHangup).then(|| ReloadSource {
        running: config.clone(),
        requests: reload_tx,
        wanted,
        watch: config
            .conductor
            .watch
            .then(|| ConfigWatch::start(config))
            .flatten(),
    });
    // `run` reloads on SIGHUP; `serve` tells its chains when to stop, and `doctor --probe`
    // stops on every signal.
    let signals = match stopping {
        Stopping::SignalsReloadOnHangup => tokio::spawn(forward_signals(events_tx, reload_with)),
        Stopping::Given(stops) => tokio::spawn(stops.forward(events_tx)),
    };

    let mut router = Driver::new(
        topology,
        chain,
        events_rx,
        supervisor,
        settings.shutdown_grace,
    )
    .with_trace(sink);
    let finish = router.run_reloading(&mut reloads, wanted_tx).await;
    router.close_components();
    let _ = tokio::time::timeout(EDITOR_FLUSH_WAIT, editor_done.writer_finished()).await;
    // Shims are released as the agent closes them, and all of them once it has stopped.
    let stopping = router.components().stop_all();
    tokio::pin!(stopping);
    tokio::select! {
        // The shims the agent started see it gone and close their side; a request one sent
        // meanwhile is still answered.
        () = &mut stopping => {
            let _ = tokio::time::timeout(SHIM_FLUSH_WAIT, router.release_shims()).await;
        }
        () = router.release_shims() => stopping.await,
    }
    let end = router.end_of_run();
    let supervisor = router.into_components();
    supervisor.shims_written(SHIM_FLUSH_WAIT).await;
    // The router says when the chain is up; the run, once everything has stopped, how it
    // ended.
    tracing::info!("{}", end.describe(started.elapsed()));
    if let Some(trace) = trace {
        trace.finish(&end.why);
    }
    if let Some(otel) = otel {
        otel.end(end.why.clone());
    }
    signals.abort();
    finish
}

/// The trace `config` asks for, started: its header lists the chain as the router will name
/// it (position 0 is the editor, or in proxy mode the parent conductor).
fn start_trace(config: &Config, mode: ChainMode) -> Result<Option<Trace>, TraceError> {
    let Some(file) = &config.conductor.trace.file else {
        return Ok(None);
    };
    let mut components = vec![match mode {
        ChainMode::Agent => trace::Component {
            name: EDITOR.to_owned(),
            role: "editor",
            kind: None,
        },
        ChainMode::Proxy => trace::Component {
            name: PARENT.to_owned(),
            role: "parent",
            kind: None,
        },
    }];
    let kinds = proxy_kinds(config);
    components.extend(
        config
            .proxies
            .iter()
            .zip(kinds)
            .map(|(proxy, kind)| trace::Component {
                name: proxy.name.clone(),
                role: "proxy",
                kind: Some(kind),
            }),
    );
    if mode == ChainMode::Agent {
        components.push(trace::Component {
            name: Supervisor::agent_name(config),
            role: "agent",
            kind: None,
        });
    }
    let secrets = secrets_of(config);
    Trace::start(file, &config.conductor.trace, &secrets, &components).map(Some)
}

/// The values of every `env` entry of the configuration (proxies' and the agent's, and the
/// variables a WASM proxy's sandbox passes through) and of every `headers` entry of a remote
/// component: each is a secret in the trace.
pub(crate) fn secrets_of(config: &Config) -> Vec<String> {
    let proxies = config.proxies.iter().flat_map(|proxy| match &proxy.launch {
        ProxyLaunch::Native(command) => command.env.iter(),
        ProxyLaunch::Wasm(wasm) => wasm.env.iter(),
        ProxyLaunch::Remote(remote) => remote.headers.iter(),
    });
    let agent = config.agent.iter().flat_map(|agent| match agent {
        AgentSpec::Command(command) | AgentSpec::Builtin { command, .. } => command.env.iter(),
        AgentSpec::Remote(remote) => remote.headers.iter(),
    });
    proxies
        .chain(agent)
        .map(|(_, value)| value.clone())
        .collect()
}

/// The proxy kinds of the configuration, in chain order, for the header.
fn proxy_kinds(config: &Config) -> Vec<&'static str> {
    config
        .proxies
        .iter()
        .map(|proxy| match proxy.launch {
            ProxyLaunch::Native(_) => "native",
            ProxyLaunch::Wasm(_) => "wasm",
            ProxyLaunch::Remote(_) => "remote",
        })
        .collect()
}

/// Shows `watcher` the chain, then each event before passing it on to the router.
fn watch(
    mut watcher: Box<dyn Watcher>,
    components: &[ChainLink],
    mut from_links: mpsc::Receiver<Event>,
) -> mpsc::Receiver<Event> {
    let chain: Vec<(LinkId, String)> = components
        .iter()
        .map(|component| (component.link.id, component.name.clone()))
        .collect();
    watcher.chain(&chain);
    let (to_router, events) = mpsc::channel(EVENT_QUEUE);
    tokio::spawn(async move {
        while let Some(event) = from_links.recv().await {
            watcher.event(&event);
            if to_router.send(event).await.is_err() {
                return;
            }
        }
    });
    events
}

/// The editor (or parent conductor) is at the other end of our own stdin and stdout.
fn connect_editor(links: &Links) -> (Link, LinkDone) {
    let dup =
        |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().expect("duplicate a stdio fd");
    let input = dup(std::io::stdin().as_fd());
    let output = dup(std::io::stdout().as_fd());
    links.stdio(input, output)
}

/// Where a reload reads the configuration from, and where it sends what it read.
struct ReloadSource {
    running: Config,
    requests: mpsc::Sender<ReloadRequest<ReloadTo>>,
    /// The editor's `_acp-conductor/reload` requests, passed on by the driver.
    wanted: mpsc::Receiver<()>,
    /// `watch`: the files whose changes reload.
    watch: Option<ConfigWatch>,
}

impl ReloadSource {
    /// Reads the file the run started from again, as `check` does, and hands the driver
    /// what it found: the new configuration, or every error at its line and column.
    async fn reload(&mut self) -> bool {
        let file = self.running.file.clone();
        let mode = self.running.conductor.mode;
        let loaded =
            tokio::task::spawn_blocking(move || config::load_in_mode(&file, Some(mode))).await;
        let request = match loaded {
            Ok(Ok(mut new)) => {
                // Where the trace goes, and whether the files are watched, are the run's
                // (`--trace`, `--watch` may have said them): a reload changes neither.
                new.conductor.trace = self.running.conductor.trace.clone();
                new.conductor.watch = self.running.conductor.watch;
                if let Some(watch) = &mut self.watch {
                    watch.follow(&new);
                }
                tracing::info!(file = %new.file.display(), "reloading the configuration");
                ReloadRequest::Apply(ReloadTo {
                    config: new,
                    shared: SharedProxies::none(),
                })
            }
            Ok(Err(errors)) => ReloadRequest::Rejected(errors.to_string()),
            Err(error) => ReloadRequest::Rejected(format!("the file could not be read: {error}")),
        };
        self.requests.send(request).await.is_ok()
    }
}

async fn forward_signals(events: mpsc::Sender<Event>, mut reloads: Option<ReloadSource>) {
    let Some(mut signals) = StopSignals::install() else {
        return;
    };
    loop {
        let (editor_asked, files_changed) = match &mut reloads {
            Some(ReloadSource { wanted, watch, .. }) => (Some(wanted), watch.as_mut()),
            None => (None, None),
        };
        let editor_asked = async {
            match editor_asked {
                Some(wanted) => wanted.recv().await,
                None => std::future::pending().await,
            }
        };
        let files_changed = async {
            match files_changed {
                Some(watch) => watch.next_burst().await,
                None => std::future::pending().await,
            }
        };
        let name = tokio::select! {
            name = signals.next() => name,
            Some(()) = editor_asked => HANGUP,
            () = files_changed => {
                tracing::info!("the configuration changed on disk");
                HANGUP
            }
        };
        if let (HANGUP, Some(source)) = (name, &mut reloads) {
            if !source.reload().await {
                return;
            }
            continue;
        }
        if events.send(Event::Signal(name)).await.is_err() {
            return;
        }
    }
}
