//! Starting one component instance from how it is launched, and stopping instances: the only
//! code that calls the kinds' starters (`component::{native, wasm, remote}`, a shared proxy's
//! attach) and signals what they leave behind. Knows launches and instances, never positions
//! nor messages.
//!
//! The chain's [`Supervisor`](super::Supervisor) starts its positions through a [`Starter`],
//! and a shared proxy's hub its one instance (`shared_proxies.rs`): nothing else starts or
//! stops a component.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::component::shared::SharedProxy;
#[cfg(feature = "wasm")]
use crate::component::wasm;
use crate::component::{Instance, StartError, Started, native, remote};
use crate::runtime::MainThread;
use crate::spec::{CommandSpec, RemoteSpec, WasmSpec};
use acp_link::Links;
use acp_link::event::Event;

/// After a component's input closed: how long it gets to exit on its own, then after
/// SIGTERM to its process group, before SIGKILL.
const EXIT_WAIT: Duration = Duration::from_secs(1);

/// How a component is started.
#[derive(Debug, Clone)]
pub enum Launch {
    /// A `command`, or a `builtin` agent (`builtin` says which, for the log).
    Native {
        spec: CommandSpec,
        builtin: bool,
    },
    Wasm(WasmSpec),
    /// Served elsewhere: reached at its URL.
    Remote(RemoteSpec),
    /// One instance for every connection of `serve`: attached to.
    Shared(SharedProxy),
    /// The chain has an agent position and the configuration names no agent.
    NoAgent,
}

/// Starts instances whose links and exits are reported on one event channel.
/// Holds a [`MainThread`]: native children are started from the thread that owns them.
#[derive(Debug, Clone)]
pub struct Starter {
    main: MainThread,
    links: Links,
    events: mpsc::Sender<Event>,
    #[cfg(feature = "wasm")]
    wasm: wasm::WasmHost,
}

impl Starter {
    /// Instances get their links from `links` and report their ends on `events`; WASM
    /// proxies cache their compiled code under `cache_dir` (none: compiled every time).
    pub fn new(
        main: MainThread,
        links: Links,
        events: mpsc::Sender<Event>,
        #[cfg_attr(not(feature = "wasm"), allow(unused_variables))] cache_dir: Option<PathBuf>,
    ) -> Starter {
        Starter {
            main,
            links,
            events,
            #[cfg(feature = "wasm")]
            wasm: wasm::WasmHost::new(cache_dir),
        }
    }

    pub fn links(&self) -> &Links {
        &self.links
    }

    pub fn events(&self) -> &mpsc::Sender<Event> {
        &self.events
    }

    /// Starts an instance as `launch` says, with a link for it; its end is reported on the
    /// event channel.
    pub fn start(&self, launch: &Launch) -> Result<Started, StartError> {
        match launch {
            Launch::Native { spec, .. } => {
                native::spawn(self.main, spec, &self.links, &self.events)
            }
            #[cfg(feature = "wasm")]
            Launch::Wasm(spec) => wasm::spawn(spec, &self.wasm, &self.links, &self.events),
            // The config refuses `wasm` in such a build; a config made in code still fails here.
            #[cfg(not(feature = "wasm"))]
            Launch::Wasm(_) => Err(StartError::NoWasm),
            Launch::Remote(spec) => remote::connect(spec, &self.links, &self.events),
            Launch::Shared(shared) => shared.attach(&self.links, &self.events),
            Launch::NoAgent => Err(StartError::NoAgent),
        }
    }
}

/// Waits for `instances` to stop; process groups that linger (or leave descendants behind)
/// get SIGTERM, then SIGKILL; WASM instances that linger are ended.
pub async fn stop(instances: Vec<Instance>) {
    let all_stopped = |instances: &[Instance]| {
        let mut stopped: Vec<_> = instances.iter().map(|i| i.stopped.clone()).collect();
        async move {
            for rx in &mut stopped {
                let _ = rx.wait_for(|s| *s).await;
            }
        }
    };
    let _ = tokio::time::timeout(EXIT_WAIT, all_stopped(&instances)).await;
    for instance in &instances {
        if let Some(task) = &instance.task
            && !instance.has_stopped()
        {
            task.abort();
        }
    }
    let groups: Vec<i32> = instances.iter().filter_map(|i| i.process_group).collect();
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let live: Vec<i32> = groups
            .iter()
            .copied()
            .filter(|g| native::group_exists(*g))
            .collect();
        if live.is_empty() {
            break;
        }
        for g in &live {
            tracing::debug!(pgid = g, signal, "signalling process group");
            native::signal_group(*g, signal);
        }
        let deadline = tokio::time::Instant::now() + EXIT_WAIT;
        while live.iter().any(|g| native::group_exists(*g))
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let _ = tokio::time::timeout(EXIT_WAIT, all_stopped(&instances)).await;
}
