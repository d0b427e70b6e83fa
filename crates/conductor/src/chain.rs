//! One conductor run: start the components from the config, route until done, take every
//! process down. Owns the lifecycle; routing itself is the router's.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use acp_wire::successor::Dialect;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

use crate::component::{Lifecycle, Running, Wiring, native, wasm};
use crate::config::{AgentSpec, Config, ProxyLaunch, ProxyProtocol};
use crate::event::{Event, LinkId};
use crate::router::topology::{ChainMode, Topology};
use crate::router::{DialectChoice, Finish, LinkSetup, Role, Router};
use crate::transport::{self, Outbox, ReadGate};

const EVENT_QUEUE: usize = 1024;
/// After closing a component's stdin: how long it gets to exit on its own, then after
/// SIGTERM to its process group, before SIGKILL.
const EXIT_WAIT: Duration = Duration::from_secs(1);
const EDITOR_FLUSH_WAIT: Duration = Duration::from_secs(5);
/// At exit, after the agent stopped: how long its bridge shims get to close their side, and
/// then the last lines to them (over a local socket) get to be written.
const SHIM_FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Where the editor (or parent conductor) is.
pub enum EditorSide {
    /// The conductor's own stdin/stdout.
    Stdio,
    /// In-process streams (the `prompt` command, tests).
    Streams {
        input: Box<dyn AsyncRead + Send + Unpin>,
        output: Box<dyn AsyncWrite + Send + Unpin>,
    },
}

enum EditorWriter {
    Thread(std::thread::JoinHandle<()>),
    Task(tokio::task::JoinHandle<()>),
}

/// Runs the chain described by `config` until the editor leaves, a signal arrives or a
/// component fails; returns how it ended once every component has stopped.
///
/// Must run on the runtime's main thread (inside `block_on`), see [`native::spawn`].
pub async fn run(config: &Config, mode: ChainMode, editor: EditorSide) -> Finish {
    let settings = &config.conductor;
    let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE);
    let topology = Topology {
        proxies: config.proxies.len(),
        mode,
    };
    let wiring = |link: LinkId, name: &str| Wiring {
        link,
        name: name.to_string(),
        events: events_tx.clone(),
        max_line: settings.max_line,
        queue_limit: settings.queue_limit,
        write_timeout: settings.write_timeout,
    };

    let (editor_setup, editor_writer) = connect_editor(editor, mode, &wiring(0, "editor"));
    let mut setups = vec![editor_setup];
    let mut started: Vec<Lifecycle> = Vec::new();
    let mut early_failures = Vec::new();

    let wasm_host = wasm::WasmHost::new(settings.cache_dir.clone());
    for (i, proxy) in config.proxies.iter().enumerate() {
        let link = i + 1;
        let dialect = match proxy.protocol {
            ProxyProtocol::Auto => DialectChoice::Detect,
            ProxyProtocol::Rfd => DialectChoice::Pinned(Dialect::Rfd),
            ProxyProtocol::Underscore => DialectChoice::Pinned(Dialect::Underscore),
        };
        let running = match &proxy.launch {
            ProxyLaunch::Native(command) => native::spawn(command, wiring(link, &proxy.name)),
            ProxyLaunch::Wasm(spec) => wasm::spawn(spec, &wasm_host, wiring(link, &proxy.name)),
        };
        setups.push(attach(
            link,
            &proxy.name,
            Role::Proxy,
            dialect,
            running,
            &mut started,
            &mut early_failures,
            settings.queue_limit,
        ));
    }
    if let Some(link) = topology.agent_link() {
        let (name, running) = match &config.agent {
            Some(AgentSpec::Command(spec)) => (
                spec.name.clone(),
                native::spawn(spec, wiring(link, &spec.name)),
            ),
            Some(AgentSpec::Builtin { command, .. }) => (
                command.name.clone(),
                native::spawn(command, wiring(link, &command.name)),
            ),
            None => (
                "agent".to_string(),
                Err("is not configured: add an [agent] table".to_string()),
            ),
        };
        setups.push(attach(
            link,
            &name,
            Role::Agent,
            DialectChoice::Pinned(Dialect::Rfd),
            running,
            &mut started,
            &mut early_failures,
            settings.queue_limit,
        ));
    }
    tokio::spawn(forward_signals(events_tx.clone()));

    let mut router = Router::new(
        topology,
        setups,
        events_rx,
        events_tx.clone(),
        settings.shutdown_grace,
    );
    router.set_shim_limits(crate::router::LinkLimits {
        max_line: settings.max_line,
        queue_limit: settings.queue_limit,
        write_timeout: settings.write_timeout,
    });
    for failure in early_failures {
        router.handle(failure);
    }
    drop(events_tx);
    let finish = router.run().await;
    router.close_components();
    match editor_writer {
        EditorWriter::Thread(handle) => {
            let _ = tokio::time::timeout(
                EDITOR_FLUSH_WAIT,
                tokio::task::spawn_blocking(move || handle.join()),
            )
            .await;
        }
        EditorWriter::Task(handle) => {
            let _ = tokio::time::timeout(EDITOR_FLUSH_WAIT, handle).await;
        }
    }
    // Shims are released as the agent closes them, and all of them once it has stopped.
    let stopping = stop_components(started);
    tokio::pin!(stopping);
    tokio::select! {
        // The shims the agent started see it gone and close their side; a request one sent
        // meanwhile is still answered.
        () = &mut stopping => {
            let _ = tokio::time::timeout(SHIM_FLUSH_WAIT, router.release_shims()).await;
        }
        () = router.release_shims() => stopping.await,
    }
    router.finish_shim_writes(SHIM_FLUSH_WAIT).await;
    finish
}

fn connect_editor(
    editor: EditorSide,
    mode: ChainMode,
    wiring: &Wiring,
) -> (LinkSetup, EditorWriter) {
    let (outbox, outbox_rx) = Outbox::new(wiring.queue_limit);
    let gate = Arc::new(ReadGate::default());
    let writer = match editor {
        EditorSide::Stdio => {
            let input = std::fs::File::from(
                std::io::stdin()
                    .as_fd()
                    .try_clone_to_owned()
                    .expect("dup stdin"),
            );
            let output = std::fs::File::from(
                std::io::stdout()
                    .as_fd()
                    .try_clone_to_owned()
                    .expect("dup stdout"),
            );
            transport::read_blocking(
                0,
                input,
                wiring.events.clone(),
                gate.clone(),
                wiring.max_line,
                tokio::runtime::Handle::current(),
            );
            EditorWriter::Thread(transport::write_blocking(
                0,
                output,
                outbox_rx,
                wiring.events.clone(),
            ))
        }
        EditorSide::Streams { input, output } => {
            tokio::spawn(transport::read_async(
                0,
                input,
                wiring.events.clone(),
                gate.clone(),
                wiring.max_line,
            ));
            EditorWriter::Task(tokio::spawn(transport::write_async(
                0,
                output,
                outbox_rx,
                wiring.events.clone(),
                wiring.write_timeout,
            )))
        }
    };
    let name = match mode {
        ChainMode::Agent => "editor",
        ChainMode::Proxy => "parent conductor",
    };
    let setup = LinkSetup {
        name: name.to_string(),
        role: Role::Editor,
        outbox,
        gate,
        dialect: DialectChoice::Pinned(Dialect::Rfd),
    };
    (setup, writer)
}

/// Turns a start attempt into a link; a component that could not start gets a closed
/// outbox and a failure event the router sees before anything else.
#[allow(clippy::too_many_arguments)]
fn attach(
    link: LinkId,
    name: &str,
    role: Role,
    dialect: DialectChoice,
    running: Result<Running, String>,
    started: &mut Vec<Lifecycle>,
    failures: &mut Vec<Event>,
    queue_limit: usize,
) -> LinkSetup {
    let (outbox, gate) = match running {
        Ok(Running {
            outbox,
            gate,
            lifecycle,
        }) => {
            started.push(lifecycle);
            (outbox, gate)
        }
        Err(reason) => {
            failures.push(Event::Exited {
                link,
                reason,
                stderr_tail: Vec::new(),
            });
            let (outbox, _closed) = Outbox::new(queue_limit);
            (outbox, Arc::new(ReadGate::default()))
        }
    };
    LinkSetup {
        name: name.to_string(),
        role,
        outbox,
        gate,
        dialect,
    }
}

async fn forward_signals(events: mpsc::Sender<Event>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!("could not install signal handlers");
        return;
    };
    loop {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        };
        if events.send(Event::Signal(name)).await.is_err() {
            return;
        }
    }
}

/// Their stdin is closed by now. Waits for every component to stop; process groups that
/// linger (or leave descendants behind) get SIGTERM, then SIGKILL.
async fn stop_components(started: Vec<Lifecycle>) {
    let stopped: Vec<watch::Receiver<bool>> = started.iter().map(|r| r.stopped.clone()).collect();
    let groups: Vec<i32> = started.iter().filter_map(|r| r.process_group).collect();
    let all_stopped = |mut rxs: Vec<watch::Receiver<bool>>| async move {
        for rx in &mut rxs {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let _ = tokio::time::timeout(EXIT_WAIT, all_stopped(stopped.clone())).await;
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let live: Vec<i32> = groups
            .iter()
            .copied()
            .filter(|g| group_exists(*g))
            .collect();
        if live.is_empty() {
            break;
        }
        for g in &live {
            tracing::debug!(pgid = g, signal, "signalling process group");
            native::signal_group(*g, signal);
        }
        let deadline = tokio::time::Instant::now() + EXIT_WAIT;
        while live.iter().any(|g| group_exists(*g)) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let _ = tokio::time::timeout(EXIT_WAIT, all_stopped(stopped)).await;
}

fn group_exists(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}
