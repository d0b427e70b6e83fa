//! The driver around the routing core: it feeds `acp_router::Router` the events links, the
//! supervisor and signals report, on tokio's clock, and carries out what the core decides on
//! the links' outboxes and gates and the trace. Knows no routing rule.
//!
//! The core never waits: [`Driver::run`] waits for the next event or the core's next timer,
//! hands it in, then takes every output. The components are reached through [`Components`],
//! which the supervisor implements (and the tests' fakes); [`port::Port`] adapts it to the
//! core's port, keeping the links' handles by id.

mod link_handles;
mod port;
mod reload;

pub use reload::{ReloadRequest, ReloadStart, Reloading};

#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(test)]
mod tests;

use std::time::Duration;

use acp_router::skipped::Skipped;
use acp_router::topology::Topology;
use acp_router::{DialectChoice, EndOfRun, FailurePolicy, Finish, Input, Output, Role, Router};
use bytes::Bytes;
use tokio::sync::mpsc;

use acp_link::event::Event;
use acp_link::{Link, Queued};
use acp_metrics::labels::{ComponentEvent, LinkKind};
use acp_router::LinkEvent;
use acp_router::trace_record::{ComponentEvent as TracedComponentEvent, TracePoint};
pub use acp_router::{BridgeEndpoint, BridgeForm, HttpBridgeSession, LaunchKind, Launched};
use acp_trace::TraceSink;
use port::Port;

/// What the driver asks of whoever runs the components: the core's port, with the links a
/// restart makes handed over whole (the driver keeps their handles, the core their ids).
pub trait Components {
    /// Starts the component at `position` again; see [`acp_router::Components::restart`].
    fn restart(&mut self, position: usize) -> Restarted;
    /// Stops the component at `position`; see [`acp_router::Components::stop`].
    fn stop(&mut self, position: usize);
    /// Records the params of the `initialize` sent to `position`.
    fn initialized(&mut self, position: usize, params: Bytes);
    /// Where MCP bridge shims for the agent dial in, opening the socket on first use.
    fn bridge(&mut self) -> std::io::Result<BridgeEndpoint>;
    /// Which bridge an agent that cannot speak MCP over ACP gets.
    fn bridge_form(&self) -> BridgeForm;
    /// Serves one session setup's servers over Streamable HTTP; see
    /// [`acp_router::Components::http_bridge`].
    fn http_bridge(&mut self, server_ids: &[String]) -> std::io::Result<HttpBridgeSession>;
    /// Ends one setup's HTTP servers; see [`acp_router::Components::close_http_bridge`].
    fn close_http_bridge(&mut self, key: &str);
    /// How the current instance at `position` was launched, for the log.
    fn launched(&self, _position: usize) -> Option<Launched> {
        None
    }
    /// A reload's instances took their places; see [`acp_router::Components::swapped`].
    fn swapped(&mut self, _placements: &[acp_router::Placement]) {}
    /// Stops the instance behind `link`; see [`acp_router::Components::retire`].
    fn retire(&mut self, _link: acp_link::LinkId) {}
}

/// A component started again: its new link, whole.
#[derive(Debug)]
pub struct Restarted {
    pub link: Link,
    /// The params its previous instance was initialized with, to initialize it the same way.
    pub initialize_params: Option<Bytes>,
}

/// The link of one chain position, as handed to the driver.
#[derive(Debug)]
pub struct ChainLink {
    pub link: Link,
    pub name: String,
    pub role: Role,
    pub dialect: DialectChoice,
    /// What to do when it fails; ignored for the editor.
    pub failure: FailurePolicy,
}

/// The routing core of one run and what it needs to act: the events it hears, the links'
/// handles (in its port), the trace its points go to.
pub struct Driver<C> {
    router: Router<Port<C>>,
    events: mpsc::Receiver<Event>,
    trace: Option<TraceSink>,
    /// Where the editor's reload requests go to have the configuration read again; `None`
    /// when this run does not reload.
    reload_wanted: Option<mpsc::Sender<()>>,
}

impl<C: Components> Driver<C> {
    /// A driver for `chain` (one link per position, in chain order) that hears `events`.
    pub fn new(
        topology: Topology,
        chain: Vec<ChainLink>,
        events: mpsc::Receiver<Event>,
        components: C,
        shutdown_grace: Duration,
    ) -> Driver<C> {
        let kinds = chain.iter().map(|c| link_kind(c.role)).collect();
        let mut port = Port::new(components, kinds);
        let metrics = acp_metrics::get();
        let chain = chain
            .into_iter()
            .map(|c| {
                if let Some(metrics) = metrics
                    && c.role != Role::Editor
                {
                    metrics.component(&c.name, ComponentEvent::Started);
                }
                acp_router::ChainLink {
                    link: port.keep(c.link, link_kind(c.role)),
                    name: c.name,
                    role: c.role,
                    dialect: c.dialect,
                    failure: c.failure,
                }
            })
            .collect();
        Driver {
            router: Router::new(topology, chain, port, shutdown_grace, now())
                .with_component_events(metrics.is_some()),
            events,
            trace: None,
            reload_wanted: None,
        }
    }

    /// Records every frame the core takes, where it goes, and the links' names, in `trace`.
    pub fn with_trace(mut self, trace: Option<TraceSink>) -> Driver<C> {
        self.router = self.router.with_trace(trace.is_some());
        self.trace = trace;
        self.carry_out();
        self
    }

    /// Routes until the editor leaves, a signal arrives, or the chain fails.
    pub async fn run(&mut self) -> Finish {
        loop {
            self.carry_out();
            if let Some(finish) = self.router.finished() {
                return finish;
            }
            let event = match self.router.next_wake() {
                Some(at) => tokio::select! {
                    biased;
                    event = self.events.recv() => event,
                    () = tokio::time::sleep_until(at.into()) => {
                        self.router.on_time(now());
                        continue;
                    }
                },
                None => self.events.recv().await,
            };
            match event {
                Some(event) => {
                    let input = self.input(event);
                    self.router.handle(input, now());
                }
                None => return Finish::Stopped,
            }
        }
    }

    /// [`run`](Self::run), also taking reload requests from `reloads` as they come; the
    /// editor's own reload requests are passed on to `wanted`, whose reader reads the
    /// configuration again and answers on `reloads`.
    pub async fn run_reloading(
        &mut self,
        reloads: &mut mpsc::Receiver<ReloadRequest<C::Request>>,
        wanted: mpsc::Sender<()>,
    ) -> Finish
    where
        C: Reloading,
    {
        self.reload_wanted = Some(wanted);
        loop {
            self.carry_out();
            if let Some(finish) = self.router.finished() {
                return finish;
            }
            let wake = self.router.next_wake();
            let sleep = async move {
                match wake {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                event = self.events.recv() => match event {
                    Some(event) => {
                        let input = self.input(event);
                        self.router.handle(input, now());
                    }
                    None => return Finish::Stopped,
                },
                Some(request) = reloads.recv() => self.reload(request),
                () = sleep => self.router.on_time(now()),
            }
        }
    }

    /// Begins a reload: the components start what it needs, the core warms and places it.
    fn reload(&mut self, request: ReloadRequest<C::Request>)
    where
        C: Reloading,
    {
        let request = match request {
            ReloadRequest::Rejected(message) => {
                tracing::error!("the configuration was not reloaded: {message}");
                self.router.reload_rejected(&message);
                return;
            }
            ReloadRequest::Apply(request) => request,
        };
        if self.router.reload_in_progress() {
            let refused = acp_router::ReloadRefused::Busy;
            tracing::warn!("the configuration was not reloaded: {refused}");
            self.router.reload_rejected(&refused.to_string());
            return;
        }
        match self.router.components().inner().start_reload(request) {
            ReloadStart::Unchanged => {
                tracing::info!("the configuration is unchanged: nothing to reload");
                self.router.reload_unchanged();
            }
            ReloadStart::Begun { plan, links } => {
                let started: Vec<acp_link::LinkId> = links
                    .into_iter()
                    .map(|link| self.router.components().keep(link, LinkKind::Proxy))
                    .collect();
                if let Err(refused) = self.router.reload(plan, now()) {
                    tracing::warn!("the configuration was not reloaded: {refused}");
                    for link in started {
                        self.router.components().handles.close(link);
                        self.router.components().inner().retire(link);
                    }
                    self.router.reload_rejected(&refused.to_string());
                }
            }
        }
    }

    /// After [`run`](Self::run): closes the editor's output and every component's input
    /// (each writer first finishes what is queued); bridge shims stay connected
    /// (`acp_router::Router::close_components`).
    pub fn close_components(&mut self) {
        self.router.close_components();
        self.carry_out();
    }

    /// After [`close_components`](Self::close_components): lets go of each shim as soon as
    /// it closes its side. Returns when no shim is connected; the caller bounds the wait.
    pub async fn release_shims(&mut self) {
        while self.router.shims_connected() {
            let Some(event) = self.events.recv().await else {
                return;
            };
            let input = self.input(event);
            self.router.release_shim(input, now());
            self.carry_out();
        }
    }

    pub fn components(&mut self) -> &mut C {
        self.router.components().inner()
    }

    /// Ends the routing, dropping every link handle it holds (each writer then finishes its
    /// queue and closes its output), and hands back the components.
    pub fn into_components(self) -> C {
        self.router.into_components().into_inner()
    }

    /// How the run ended, for its last log line.
    pub fn end_of_run(&self) -> EndOfRun {
        self.router.end_of_run()
    }

    /// What was not routed so far, by kind.
    pub fn skipped(&self) -> &Skipped {
        self.router.skipped()
    }

    /// A chain that was initialized already: for tests of what comes after.
    #[doc(hidden)]
    pub fn assume_initialized(&mut self) {
        self.router.assume_initialized();
    }

    /// The core's input for `event`; a shim's new link is kept first.
    fn input(&mut self, event: Event) -> Input {
        match event {
            Event::Link { link, event } => {
                if let LinkEvent::Frames(frames) = &event {
                    self.router.components().handles.read(link, frames);
                }
                Input::Link { link, event }
            }
            Event::Exited {
                link,
                reason,
                status,
                stderr_tail,
            } => Input::Exited {
                link,
                reason,
                status,
                stderr_tail,
            },
            Event::ShimConnected(link) => {
                Input::ShimConnected(self.router.components().keep(link, LinkKind::McpBridge))
            }
            Event::Signal(name) => Input::Signal(name),
        }
    }

    /// Carries out everything the core decided, in order: a frame whose queue is then over
    /// its limit is reported back, so that the core pauses its sender.
    fn carry_out(&mut self) {
        while let Some(output) = self.router.poll_output() {
            match output {
                Output::Send { to, frame, from } => {
                    if self.router.components().handles.send(to, frame) == Queued::Congested {
                        self.router.congested(to, from);
                    }
                }
                Output::Pause(link) => self.router.components().handles.pause(link),
                Output::Resume(link) => self.router.components().handles.resume(link),
                Output::Close(link) => self.router.components().handles.close(link),
                Output::Trace(point) => {
                    if let TracePoint::Component { name, event, .. } = &point {
                        count_component_event(name, *event);
                    }
                    if let Some(trace) = &self.trace {
                        trace.point(point);
                    }
                }
                Output::ReloadWanted => {
                    let asked = self
                        .reload_wanted
                        .as_ref()
                        .is_some_and(|wanted| wanted.try_send(()).is_ok());
                    if !asked {
                        self.router
                            .reload_rejected("this conductor does not reload its configuration at the editor's request");
                    }
                }
            }
        }
    }
}

/// The kind of peer a chain position's role is, for the metrics.
fn link_kind(role: Role) -> LinkKind {
    match role {
        Role::Editor => LinkKind::Editor,
        Role::Proxy => LinkKind::Proxy,
        Role::Agent => LinkKind::Agent,
        Role::Shim => LinkKind::McpBridge,
    }
}

/// Counts a component event the core handed out (a traced run's, or an untraced one's when
/// metrics are on).
fn count_component_event(name: &str, event: TracedComponentEvent) {
    let Some(metrics) = acp_metrics::get() else {
        return;
    };
    let event = match event {
        TracedComponentEvent::Started => ComponentEvent::Started,
        TracedComponentEvent::Failed => ComponentEvent::Failed,
        TracedComponentEvent::Restarted => ComponentEvent::Restarted,
        TracedComponentEvent::Bypassed => ComponentEvent::Bypassed,
        // A reload's new instance is counted when it starts; swapping and retiring are the
        // reload's, which has no family yet.
        TracedComponentEvent::Exited
        | TracedComponentEvent::Swapped
        | TracedComponentEvent::Retired => return,
    };
    metrics.component(name, event);
}

/// The driver's clock: tokio's, so that tests with paused time move the core's timers too.
fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// What the fuzz target checks after a run (`acp_router::Router`'s leftovers).
#[cfg(any(test, feature = "fuzzing"))]
impl<C: Components> Driver<C> {
    pub(crate) fn editor_requests_pending(&self) -> Vec<String> {
        self.router.editor_requests_pending()
    }

    pub(crate) fn bridge_requests_pending(&self) -> usize {
        self.router.bridge_requests_pending()
    }
}
