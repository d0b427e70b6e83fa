//! The shared proxies of a `serve`: a hub for each `[[proxy]]` with `shared = true`, whose
//! one instance the supervisor starts and stops when the hub asks. Knows launches, never
//! how the hub routes the chains' messages.

use tokio::sync::mpsc;

use super::starter::{self, Launch, Starter};
use crate::component::shared::{ProxySupervisor, SharedHubs, SharedProxies};
use crate::component::{Instance, StartError, Started};
use crate::runtime::MainThread;
use crate::spec::diff::{ChainDiff, ProxyChange};
use crate::spec::{Config, ProxyLaunch, ProxySpec};
use acp_link::{LinkLimits, Links};

/// Events of a shared proxy's instance (its link's frames, its end) queued for its hub.
const EVENT_QUEUE: usize = 256;

/// Starts a hub, and its proxy's instance, for each enabled `[[proxy]]` of `config` with
/// `shared = true`; the hubs are stopped through the second half. The hubs run inside the
/// `LocalSet` of `main`'s thread, which starts the instances (see `runtime.rs`).
pub fn start_hubs(main: MainThread, config: &Config) -> (SharedProxies, SharedHubs) {
    let mut proxies = SharedProxies::none();
    let mut hubs = SharedHubs::default();
    for proxy in config.proxies.iter().filter(|p| p.shared) {
        start_hub(main, config, proxy, &mut proxies, &mut hubs);
    }
    (proxies, hubs)
}

/// The shared proxies after a reload to `new` whose changes are `diff`: a shared proxy
/// the reload keeps (same spec, wherever it now stands) keeps its hub and instance; one it
/// adds or replaces gets a new hub, started now, once for every chain; the hubs of those it
/// replaces or removes (or that are no longer shared) are retired, and stop once no chain
/// uses them. Chains opened from now on attach to the set returned.
pub fn reload_hubs(
    main: MainThread,
    running: &SharedProxies,
    hubs: &mut SharedHubs,
    diff: &ChainDiff,
    new: &Config,
) -> SharedProxies {
    // Same spec, wherever it now stands: the hub carries over.
    let kept = |name: &str| {
        new.proxies.iter().any(|p| p.shared && p.name == name)
            && diff.proxies.iter().any(|change| {
                change.name() == name
                    && matches!(change, ProxyChange::Kept { .. } | ProxyChange::Moved { .. })
            })
    };
    // Retired before their successors start: the hubs are known by name.
    for name in running.names().filter(|name| !kept(name)) {
        tracing::info!(component = %name, "the shared proxy was replaced or removed: its instance stops once no chain uses it");
        hubs.retire(name);
    }
    let mut proxies = SharedProxies::none();
    for proxy in new.proxies.iter().filter(|p| p.shared) {
        match running.get(&proxy.name) {
            Some(handle) if kept(&proxy.name) => proxies.keep(&proxy.name, handle.clone()),
            _ => start_hub(main, new, proxy, &mut proxies, hubs),
        }
    }
    proxies
}

/// Starts the hub of the shared proxy `proxy` of `config`, and its instance, into `proxies`
/// and `hubs`.
fn start_hub(
    main: MainThread,
    config: &Config,
    proxy: &ProxySpec,
    proxies: &mut SharedProxies,
    hubs: &mut SharedHubs,
) {
    let limits = LinkLimits {
        max_line: config.conductor.max_line,
        queue_limit: config.conductor.queue_limit,
        write_timeout: config.conductor.write_timeout,
    };
    let launch = match &proxy.launch {
        ProxyLaunch::Native(spec) => Launch::Native {
            spec: spec.clone(),
            builtin: false,
        },
        #[cfg(feature = "wasm")]
        ProxyLaunch::Wasm(spec) => Launch::Wasm(spec.clone()),
        // The config refuses these (a `url` proxy, `wasm` without the feature).
        _ => return,
    };
    let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
    let links = Links::new(events_tx.clone(), limits);
    let starter = Starter::new(main, links, events_tx, config.conductor.cache_dir.clone());
    let instance = SharedInstance { launch, starter };
    proxies.add(hubs, &proxy.name, limits.write_timeout, events, instance);
}

/// A shared proxy's instance as the supervisor starts it for its hub.
struct SharedInstance {
    launch: Launch,
    starter: Starter,
}

impl ProxySupervisor for SharedInstance {
    fn start(&mut self) -> Result<Started, StartError> {
        self.starter.start(&self.launch)
    }

    fn stop(&self, instance: Instance) -> impl Future<Output = ()> + Send + 'static {
        starter::stop(vec![instance])
    }
}
