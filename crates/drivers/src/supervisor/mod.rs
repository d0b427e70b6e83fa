//! The supervisor: the one owner of the components at each chain position. Starts, stops and
//! starts them again, keeping for each what it was launched and initialized with, and owns
//! the socket MCP bridge shims dial in on and the MCP HTTP bridge's listener. Knows
//! processes and instances, never messages.
//!
//! The router reaches it only through [`Components`]; the run uses the rest (start the chain,
//! stop everything, let the shims' last writes finish). Every instance, a shared proxy's
//! included (`shared_proxies.rs`), is started and stopped through `starter.rs`.

pub mod bridge_socket;
pub mod mcp_http;
mod reload;
pub mod shared_proxies;
pub mod starter;

pub use reload::ReloadTo;

#[cfg(test)]
mod tests;

use std::time::Duration;

use acp_wire::successor::Dialect;
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::component::shared::SharedProxies;
use crate::component::{Instance, Started};
use crate::driver::{ChainLink, Components, Restarted};
use crate::runtime::MainThread;
use crate::spec::{AgentSpec, Config, FailurePolicy, ProxyLaunch, ProxyProtocol};
use acp_link::event::Event;
use acp_link::{Link, LinkId, Links};
use acp_router::topology::{Position, Topology};
use acp_router::{
    BridgeEndpoint, BridgeForm, DialectChoice, HttpBridgeSession, LaunchKind, Launched, Role,
};
use bridge_socket::BridgeSocket;
use mcp_http::McpHttpBridge;
use starter::{Launch, Starter};

impl Slot {
    /// The agent's slot, as `config` describes it.
    fn of_agent(config: &Config) -> Slot {
        let (name, launch) = match &config.agent {
            Some(AgentSpec::Command(spec)) => (
                spec.name.clone(),
                Launch::Native {
                    spec: spec.clone(),
                    builtin: false,
                },
            ),
            Some(AgentSpec::Builtin { command, .. }) => (
                command.name.clone(),
                Launch::Native {
                    spec: command.clone(),
                    builtin: true,
                },
            ),
            Some(AgentSpec::Remote(spec)) => (spec.name.clone(), Launch::Remote(spec.clone())),
            None => ("agent".to_string(), Launch::NoAgent),
        };
        Slot {
            name,
            role: Role::Agent,
            dialect: DialectChoice::Pinned(Dialect::Rfd),
            failure: config.agent_failure,
            launch,
            initialize_params: None,
            current: None,
            removed: false,
        }
    }

    /// The slot of one `[[proxy]]`; proxies named in `shared` are attached to.
    fn of_proxy(proxy: &crate::spec::ProxySpec, shared: &SharedProxies) -> Slot {
        Slot {
            name: proxy.name.clone(),
            role: Role::Proxy,
            dialect: match proxy.protocol {
                ProxyProtocol::Auto => DialectChoice::Detect,
                ProxyProtocol::Rfd => DialectChoice::Pinned(Dialect::Rfd),
                ProxyProtocol::Underscore => DialectChoice::Pinned(Dialect::Underscore),
            },
            failure: proxy.failure,
            launch: match (&proxy.launch, shared.get(&proxy.name)) {
                (_, Some(shared)) => Launch::Shared(shared.clone()),
                (ProxyLaunch::Native(command), None) => Launch::Native {
                    spec: command.clone(),
                    builtin: false,
                },
                (ProxyLaunch::Wasm(spec), None) => Launch::Wasm(spec.clone()),
                (ProxyLaunch::Remote(spec), None) => Launch::Remote(spec.clone()),
            },
            initialize_params: None,
            current: None,
            removed: false,
        }
    }
}

/// One chain position's component.
#[derive(Debug)]
struct Slot {
    name: String,
    role: Role,
    dialect: DialectChoice,
    failure: FailurePolicy,
    launch: Launch,
    /// The params of the `initialize` it got, to initialize a new instance the same way.
    initialize_params: Option<Bytes>,
    /// Its current instance, as an index into [`Supervisor::instances`].
    current: Option<usize>,
    /// A reload took it out of the chain: its position stays, routed around.
    removed: bool,
}

pub struct Supervisor {
    starter: Starter,
    /// The component at each position, from position 1 on (position 0 is the editor).
    slots: Vec<Slot>,
    /// Every instance started in this run: the current ones and those they replaced.
    instances: Vec<Instance>,
    bridge: Option<BridgeSocket>,
    /// `[conductor] mcp_bridge`.
    bridge_form: BridgeForm,
    http_bridge: Option<McpHttpBridge>,
    /// The configuration the chain runs now, to tell what a reload changes.
    running: reload::Running,
}

impl Supervisor {
    /// The components `config` describes for a chain of `topology`; nothing starts yet.
    /// Proxies named in `shared` are attached to, not started. Components are started (and
    /// started again) from `main`'s thread.
    pub fn new(
        main: MainThread,
        config: &Config,
        topology: Topology,
        links: Links,
        events: mpsc::Sender<Event>,
        shared: &SharedProxies,
    ) -> Supervisor {
        let mut slots: Vec<Slot> = config
            .proxies
            .iter()
            .map(|proxy| Slot::of_proxy(proxy, shared))
            .collect();
        if topology.agent_position().is_some() {
            slots.push(Slot::of_agent(config));
        }
        Supervisor {
            starter: Starter::new(main, links, events, config.conductor.cache_dir.clone()),
            slots,
            instances: Vec::new(),
            bridge: None,
            bridge_form: config.conductor.mcp_bridge,
            http_bridge: None,
            running: reload::Running::of(config),
        }
    }

    /// The agent's name in logs, errors and the trace.
    pub fn agent_name(config: &Config) -> String {
        config
            .agent
            .as_ref()
            .map_or("agent", AgentSpec::name)
            .to_string()
    }

    /// Starts every component, in chain order, and returns their links from position 1 on.
    /// A component that cannot start gets an unconnected link, and its failure is the first
    /// event the router hears about it.
    pub fn start_chain(&mut self) -> Vec<ChainLink> {
        (1..=self.slots.len())
            .map(|position| {
                let link = self.start(position);
                let slot = self.slot(position);
                ChainLink {
                    link,
                    name: slot.name.clone(),
                    role: slot.role,
                    dialect: slot.dialect,
                    failure: slot.failure,
                }
            })
            .collect()
    }

    fn slot(&mut self, position: Position) -> &mut Slot {
        assert!(position >= 1, "position 0 is the editor, not a component");
        &mut self.slots[position - 1]
    }

    fn start(&mut self, position: Position) -> Link {
        let launch = self.slot(position).launch.clone();
        match self.starter.start(&launch) {
            Ok(Started { link, instance }) => {
                self.instances.push(instance);
                self.slot(position).current = Some(self.instances.len() - 1);
                link
            }
            Err(error) => {
                self.slot(position).current = None;
                let link = self.starter.links().unconnected();
                self.report(Event::Exited {
                    link: link.id,
                    reason: error.to_string(),
                    status: None,
                    stderr_tail: Vec::new(),
                });
                link
            }
        }
    }

    /// Queues an event for the router now, ahead of anything sent later.
    fn report(&self, event: Event) {
        match self.starter.events().try_send(event) {
            Ok(()) | Err(TrySendError::Closed(_)) => {}
            Err(TrySendError::Full(event)) => {
                let events = self.starter.events().clone();
                tokio::spawn(async move { events.send(event).await });
            }
        }
    }

    /// Stops every instance started in this run, whose input the router has closed:
    /// each gets a moment to exit on its own, then its process group SIGTERM, then SIGKILL.
    /// The returned future borrows nothing, so the router can go on meanwhile.
    pub fn stop_all(&mut self) -> impl Future<Output = ()> + Send + 'static {
        for slot in &mut self.slots {
            slot.current = None;
        }
        let stopping = starter::stop(std::mem::take(&mut self.instances));
        // The agent's HTTP MCP sessions end with it: no process of its own closes them.
        let http_sessions = self.http_bridge.as_ref().map(McpHttpBridge::sessions);
        async move {
            stopping.await;
            if let Some(sessions) = http_sessions {
                sessions.end_all();
            }
        }
    }

    /// Waits up to `wait` for the links of MCP bridge shims to deliver what is queued on
    /// them (the last answers to the agent) and close.
    pub async fn shims_written(&self, wait: Duration) {
        let written = async {
            if let Some(bridge) = &self.bridge {
                bridge.shims_written().await;
            }
            if let Some(bridge) = &self.http_bridge {
                bridge.sessions_written().await;
            }
        };
        let _ = tokio::time::timeout(wait, written).await;
    }

    /// The link of `position`'s current instance, if it has one.
    pub fn current_link(&self, position: Position) -> Option<LinkId> {
        let slot = &self.slots[position.checked_sub(1)?];
        slot.current.map(|i| self.instances[i].link)
    }
}

impl Components for Supervisor {
    fn restart(&mut self, position: Position) -> Restarted {
        self.stop(position);
        tracing::info!(component = %self.slot(position).name, "starting again");
        let link = self.start(position);
        Restarted {
            link,
            initialize_params: self.slot(position).initialize_params.clone(),
        }
    }

    fn stop(&mut self, position: Position) {
        let Some(current) = self.slot(position).current.take() else {
            return;
        };
        // Even an instance that has exited may have left processes in its group (an `npx`
        // whose child ignored the end of its input): those are signalled too.
        let instance = self.instances[current].clone();
        tracing::debug!(component = %self.slots[position - 1].name, "stopping");
        tokio::spawn(starter::stop(vec![instance]));
    }

    fn initialized(&mut self, position: Position, params: Bytes) {
        self.slot(position).initialize_params = Some(params);
    }

    fn swapped(&mut self, placements: &[acp_router::Placement]) {
        self.take_places(placements);
    }

    fn retire(&mut self, link: LinkId) {
        self.stop_instance(link);
    }

    fn launched(&self, position: Position) -> Option<Launched> {
        let slot = &self.slots[position.checked_sub(1)?];
        let instance = &self.instances[slot.current?];
        let kind = match &slot.launch {
            Launch::Native { builtin: false, .. } => LaunchKind::Native {
                pid: instance.process_group,
            },
            Launch::Native { builtin: true, .. } => LaunchKind::Builtin {
                pid: instance.process_group,
            },
            Launch::Wasm(spec) => LaunchKind::Wasm {
                module: spec.module.clone(),
            },
            Launch::Remote(spec) => LaunchKind::Remote {
                url: acp_remote::protocol::shown_url(&spec.url),
            },
            Launch::Shared(_) => LaunchKind::Shared,
            Launch::NoAgent => return None,
        };
        Some(Launched {
            kind,
            at: instance.launched_at.into_std(),
        })
    }

    fn bridge(&mut self) -> std::io::Result<BridgeEndpoint> {
        if self.bridge.is_none() {
            let socket =
                BridgeSocket::open(self.starter.links().clone(), self.starter.events().clone())?;
            self.bridge = Some(socket);
        }
        let socket = self.bridge.as_ref().expect("opened above").path();
        Ok(BridgeEndpoint {
            program: std::env::current_exe()?,
            socket: socket.to_path_buf(),
        })
    }

    fn bridge_form(&self) -> BridgeForm {
        self.bridge_form
    }

    fn http_bridge(&mut self, server_ids: &[String]) -> std::io::Result<HttpBridgeSession> {
        if self.http_bridge.is_none() {
            let bridge =
                McpHttpBridge::open(self.starter.links().clone(), self.starter.events().clone())?;
            self.http_bridge = Some(bridge);
        }
        self.http_bridge
            .as_ref()
            .expect("opened above")
            .serve_setup(server_ids)
    }

    fn close_http_bridge(&mut self, key: &str) {
        if let Some(bridge) = &self.http_bridge {
            bridge.close_setup(key);
        }
    }
}
