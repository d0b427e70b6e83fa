//! The shared proxies of a `serve`: a hub for each `[[proxy]]` with `shared = true`, whose
//! one instance the supervisor starts and stops when the hub asks. Knows launches, never
//! how the hub routes the chains' messages.

use tokio::sync::mpsc;

use super::starter::{self, Launch, Starter};
use crate::component::shared::{ProxySupervisor, SharedHubs, SharedProxies};
use crate::component::{Instance, StartError, Started};
use crate::runtime::MainThread;
use crate::spec::{Config, ProxyLaunch};
use acp_link::{LinkLimits, Links};

/// Events of a shared proxy's instance (its link's frames, its end) queued for its hub.
const EVENT_QUEUE: usize = 256;

/// Starts a hub, and its proxy's instance, for each enabled `[[proxy]]` of `config` with
/// `shared = true`; the hubs are stopped through the second half. The hubs run inside the
/// `LocalSet` of `main`'s thread, which starts the instances (see `runtime.rs`).
pub fn start_hubs(main: MainThread, config: &Config) -> (SharedProxies, SharedHubs) {
    let limits = LinkLimits {
        max_line: config.conductor.max_line,
        queue_limit: config.conductor.queue_limit,
        write_timeout: config.conductor.write_timeout,
    };
    let mut proxies = SharedProxies::none();
    let mut hubs = SharedHubs::default();
    for proxy in config.proxies.iter().filter(|p| p.shared) {
        let launch = match &proxy.launch {
            ProxyLaunch::Native(spec) => Launch::Native {
                spec: spec.clone(),
                builtin: false,
            },
            #[cfg(feature = "wasm")]
            ProxyLaunch::Wasm(spec) => Launch::Wasm(spec.clone()),
            // The config refuses these (a `url` proxy, `wasm` without the feature).
            _ => continue,
        };
        let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
        let links = Links::new(events_tx.clone(), limits);
        let starter = Starter::new(main, links, events_tx, config.conductor.cache_dir.clone());
        let instance = SharedInstance { launch, starter };
        proxies.add(
            &mut hubs,
            &proxy.name,
            limits.write_timeout,
            events,
            instance,
        );
    }
    (proxies, hubs)
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
