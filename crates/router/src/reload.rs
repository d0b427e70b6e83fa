//! A configuration reload as routing sees it: new proxy instances are warmed (initialized
//! with what their place was initialized with) while the chain goes on, then take their
//! places all at once; the instances they replace, and removed proxies, answer what was
//! already sent to them and are then stopped (bounded by `shutdown_grace`).
//!
//! Must not know why a proxy changed nor how instances start: the plan names positions and
//! links, and the components start and stop (`Components::swapped`, `Components::retire`).

use std::collections::VecDeque;
use std::fmt;

use acp_wire::encode::{self, Call};
use acp_wire::successor::Dialect;
use acp_wire::{Envelope, Outcome, RawValue, error_code};
use bytes::Bytes;

use super::failure::Ending;
use super::pending::{Pending, Purpose};
use super::recovery::Health;
use super::topology::Position;
use super::{
    Components, DialectChoice, FailurePolicy, LinkState, PositionState, Role, Router, RunState,
    Timer,
};
use crate::link::{LinkEvent, LinkId};
use crate::output::Output;
use crate::trace_record::ComponentEvent;

/// The notification that tells the editor a reload took effect, with each change.
pub const RELOADED_NOTIFICATION: &str = "_acp-conductor/config_reloaded";
/// The notification that tells the editor a reload changed nothing because it was refused.
pub const REJECTED_NOTIFICATION: &str = "_acp-conductor/config_rejected";
/// The editor's request for a reload, answered with what changed.
pub const RELOAD_REQUEST: &str = "_acp-conductor/reload";

/// A proxy instance the components started for a reload, not yet in the chain.
#[derive(Debug)]
pub struct NewInstance {
    pub link: LinkId,
    pub name: String,
    pub dialect: DialectChoice,
    pub failure: FailurePolicy,
}

/// One change to the chain's proxies, in the positions of the chain before the reload.
#[derive(Debug)]
pub enum ReloadStep {
    /// `instance` takes the place of the proxy at `position`.
    Replace {
        position: Position,
        instance: NewInstance,
    },
    /// `instance` goes in just before `before` (a proxy's position, the agent's, or in
    /// proxy mode one past the last proxy). Several before the same place keep plan order.
    Insert {
        before: Position,
        instance: NewInstance,
    },
    /// The proxy at `position` leaves the chain: traffic flows around it from now on.
    Remove { position: Position },
    /// The agent is started again (its components have its new launch by then): what it was
    /// answering is answered with an error, and its sessions are lost, as after a failure
    /// under `restart`.
    RestartAgent,
}

/// What a reload changes, and how to say it.
#[derive(Debug)]
pub struct ReloadPlan {
    pub steps: Vec<ReloadStep>,
    /// One line per change (kept, moved, replaced, added, removed, the agent), for the log
    /// and the editor's notification.
    pub changes: Vec<String>,
}

/// Where each position of the chain after a reload comes from, from position 1 on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The component that was at this position before the reload.
    Kept(Position),
    /// The instance the reload started on this link.
    Started(LinkId),
}

/// Why a reload was not begun; the chain goes on as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadRefused {
    /// Another reload is still warming its instances.
    Busy,
    /// The run is ending.
    NotRunning,
    /// A component is being started again after a failure.
    Restarting(String),
    /// The plan names a position that is not a proxy's.
    BadPosition(Position),
}

impl fmt::Display for ReloadRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReloadRefused::Busy => f.write_str("another reload is still starting its proxies"),
            ReloadRefused::NotRunning => f.write_str("the conductor is stopping"),
            ReloadRefused::Restarting(name) => {
                write!(f, "`{name}` is being started again after a failure")
            }
            ReloadRefused::BadPosition(p) => write!(f, "position {p} is not a proxy's"),
        }
    }
}

/// A reload whose new instances are being initialized.
#[derive(Debug)]
pub(super) struct Warming {
    steps: Vec<ReloadStep>,
    changes: Vec<String>,
    instances: Vec<WarmInstance>,
}

#[derive(Debug)]
struct WarmInstance {
    link: LinkId,
    /// The params it was initialized with, kept as its position's.
    params: Option<Bytes>,
    /// What it is answered when it asks its successor to `initialize`.
    successor_answer: Option<Box<RawValue>>,
    /// It answered `initialize` (or had none to answer: the chain was not initialized yet).
    initialized: bool,
    /// Replayed session openings it has not answered yet.
    replays_waiting: usize,
    /// The results its forwarded copies of the replayed openings are answered with, in order.
    replay_answers: VecDeque<Box<RawValue>>,
}

impl WarmInstance {
    fn ready(&self) -> bool {
        self.initialized && self.replays_waiting == 0
    }
}

impl<C: Components> Router<C> {
    /// Begins a reload: each new instance is sent the `initialize` its place was sent, and
    /// once every one has answered, the chain changes as `plan` says. Until then, and if any
    /// of them fails (the reload is then abandoned), the chain is the one before.
    pub fn reload(
        &mut self,
        plan: ReloadPlan,
        now: std::time::Instant,
    ) -> Result<(), ReloadRefused> {
        self.now = now;
        if !matches!(self.state, RunState::Running) {
            return Err(ReloadRefused::NotRunning);
        }
        if self.reloading.is_some() {
            return Err(ReloadRefused::Busy);
        }
        if let Some(state) = self
            .positions
            .iter()
            .find(|p| matches!(p.health, Health::Restarting(_)))
        {
            return Err(ReloadRefused::Restarting(
                self.links[state.link].name.clone(),
            ));
        }
        let last = self.positions.len();
        for step in &plan.steps {
            let (position, limit) = match step {
                ReloadStep::Replace { position, .. } | ReloadStep::Remove { position } => {
                    (*position, self.topology.proxies)
                }
                ReloadStep::Insert { before, .. } => (*before, last),
                ReloadStep::RestartAgent => match self.topology.agent_position() {
                    Some(_) => continue,
                    None => return Err(ReloadRefused::BadPosition(last)),
                },
            };
            if position == 0 || position > limit {
                return Err(ReloadRefused::BadPosition(position));
            }
        }
        let mut instances = Vec::new();
        for step in &plan.steps {
            let (instance, params, answer) = match step {
                ReloadStep::Replace { position, instance } => {
                    let state = &self.positions[*position];
                    (
                        instance,
                        state.initialize_params.clone(),
                        state.initialize_answer.clone(),
                    )
                }
                ReloadStep::Insert { before, instance } => {
                    // Initialized as its successor was, and answered as its predecessor was
                    // answered by that successor.
                    let params = self
                        .positions
                        .get(*before)
                        .and_then(|s| s.initialize_params.clone())
                        .or_else(|| self.positions[before - 1].initialize_params.clone());
                    let answer = self.positions[before - 1].initialize_answer.clone();
                    (instance, params, answer)
                }
                ReloadStep::Remove { .. } | ReloadStep::RestartAgent => continue,
            };
            let (dialect, pinned) = match instance.dialect {
                DialectChoice::Detect => (Dialect::Rfd, false),
                DialectChoice::Pinned(d) => (d, true),
            };
            self.links.insert(
                instance.link,
                LinkState {
                    dialect,
                    dialect_pinned: pinned,
                    ..LinkState::new(instance.name.clone(), Role::Proxy, None)
                },
            );
            self.trace_link(instance.link);
            let ready = params.is_none();
            if let Some(params) = &params {
                let method = self.links[instance.link].dialect.initialize_method();
                self.send_recorded_initialize(instance.link, method, params);
                self.timers.at(
                    self.now + instance.failure.startup_timeout,
                    Timer::WarmDeadline {
                        link: instance.link,
                    },
                );
            }
            instances.push(WarmInstance {
                link: instance.link,
                params,
                successor_answer: answer,
                initialized: ready,
                replays_waiting: 0,
                replay_answers: VecDeque::new(),
            });
        }
        self.reloading = Some(Warming {
            steps: plan.steps,
            changes: plan.changes,
            instances,
        });
        self.swap_if_warm();
        Ok(())
    }

    /// Tells the editor (once it is initialized) that a reload changed nothing: `message`
    /// says why (the new file's errors, each at its line and column). Its reload request,
    /// if one waits, is answered with that error.
    pub fn reload_rejected(&mut self, message: &str) {
        if let Some(id) = self.reload_asked.take() {
            let editor = self.editor();
            self.reply_error(editor, &id, error_code::INVALID_PARAMS, message, None);
        }
        let params = serde_json::json!({ "message": message }).to_string();
        self.notify_editor(REJECTED_NOTIFICATION, &params);
    }

    /// The configuration read for a reload runs the same chain: the editor's reload request,
    /// if one waits, is answered with no changes.
    pub fn reload_unchanged(&mut self) {
        self.answer_reload_request(&[]);
    }

    /// `_acp-conductor/reload` from the editor: the driver is asked to read the configuration
    /// again; the request is answered once the reload is placed, found unchanged or refused.
    pub(super) fn on_reload_request(&mut self, link: LinkId, id: &RawValue) {
        if self.reload_asked.is_some() || self.reloading.is_some() {
            let refused = ReloadRefused::Busy.to_string();
            self.reply_error(link, id.get(), error_code::INVALID_PARAMS, &refused, None);
            return;
        }
        self.reload_asked = Some(id.get().into());
        self.outputs.push(Output::ReloadWanted);
    }

    /// Answers the editor's reload request, if one waits, with `changes`.
    fn answer_reload_request(&mut self, changes: &[String]) {
        let Some(id) = self.reload_asked.take() else {
            return;
        };
        let result = serde_json::json!({ "changes": changes }).to_string();
        let result = RawValue::from_string(result).expect("json! is valid JSON");
        let editor = self.editor();
        let mut out = Vec::new();
        encode::response(&mut out, &id, Outcome::Result(&result));
        self.count_answer(editor, false);
        self.queue(editor, Bytes::from(out), editor);
    }

    /// Whether a reload is warming its instances.
    pub fn reload_in_progress(&self) -> bool {
        self.reloading.is_some()
    }

    /// Whether `link` is an instance a reload is warming.
    pub(super) fn is_warming(&self, link: LinkId) -> bool {
        self.reloading
            .as_ref()
            .is_some_and(|w| w.instances.iter().any(|i| i.link == link))
    }

    /// What a warming instance's link reported: its answer to `initialize`, its own
    /// `initialize` toward its successor (answered as before), or its end.
    pub(super) fn on_warming_event(&mut self, link: LinkId, event: LinkEvent) {
        match event {
            LinkEvent::Frames(frames) => {
                for frame in frames {
                    self.trace_in(link, &frame);
                    self.on_warming_frame(link, &frame);
                    self.trace_flush();
                    if !self.is_warming(link) {
                        return;
                    }
                }
                self.swap_if_warm();
            }
            LinkEvent::TooLong(_) => {
                self.abandon_reload(link, "sent a line over the limit while starting")
            }
            LinkEvent::Closed(_) => self.abandon_reload(link, "closed its output while starting"),
            LinkEvent::WriteFailed { reason, .. } => {
                self.abandon_reload(link, &format!("could not be written to: {reason}"))
            }
            LinkEvent::Drained => self.on_drained(link),
        }
    }

    fn on_warming_frame(&mut self, link: LinkId, frame: &Bytes) {
        let Ok(parsed) = acp_wire::parse_frame(frame) else {
            return self.abandon_reload(link, "sent a line that is not JSON-RPC while starting");
        };
        match parsed.envelope {
            Envelope::Response { id, outcome } => {
                let Some(entry) = self.links[link].pending.complete_raw(id) else {
                    return;
                };
                match (&*entry.method, outcome) {
                    ("initialize", Outcome::Result(_)) => self.replay_sessions(link),
                    ("initialize", Outcome::Error(error)) => self.abandon_reload(
                        link,
                        &format!("answered initialize with an error: {}", error.get()),
                    ),
                    (method, outcome) => {
                        if let Outcome::Error(error) = outcome {
                            tracing::warn!(
                                component = %self.links[link].name,
                                "refused the replayed {method} of an open session: {}",
                                error.get()
                            );
                        }
                        if let Some(instance) = self.warm_instance(link) {
                            instance.replays_waiting -= 1;
                        }
                    }
                }
            }
            Envelope::Request { id, method, params } => {
                let inner = if Dialect::of_successor(method).is_some() {
                    acp_wire::successor::unwrap_found(params, parsed.wrapper)
                        .ok()
                        .map(|w| w.method.to_owned())
                } else {
                    None
                };
                let answer = match inner.as_deref() {
                    Some("initialize") => self
                        .warm_instance(link)
                        .and_then(|i| i.successor_answer.clone()),
                    // Its forwarded copy of a replayed opening: the agent has the session.
                    Some("session/new" | "session/load") => self
                        .warm_instance(link)
                        .and_then(|i| i.replay_answers.pop_front()),
                    _ => None,
                };
                match (inner.as_deref(), answer) {
                    (Some("initialize" | "session/new" | "session/load"), Some(answer)) => {
                        let mut out = Vec::with_capacity(answer.get().len() + 64);
                        encode::response(&mut out, id.get(), Outcome::Result(&answer));
                        self.count_answer(link, false);
                        self.queue(link, Bytes::from(out), link);
                    }
                    _ => self.reply_error(
                        link,
                        id.get(),
                        error_code::COMPONENT_FAILED,
                        "this proxy is not in the chain yet: a reload is starting it",
                        None,
                    ),
                }
            }
            // Nothing is routed to or from it before it takes its place.
            Envelope::Notification { .. } => {}
        }
    }

    fn warm_instance(&mut self, link: LinkId) -> Option<&mut WarmInstance> {
        self.reloading
            .as_mut()?
            .instances
            .iter_mut()
            .find(|i| i.link == link)
    }

    /// The new instance answered `initialize`: each open session is opened at it again as
    /// the editor opened it, and it is ready once it has answered them all.
    fn replay_sessions(&mut self, link: LinkId) {
        let sessions = self.open_sessions.all().to_vec();
        for session in &sessions {
            let own = self.links[link].pending.register(Pending {
                origin: link,
                origin_id: "null".into(),
                method: session.method.into(),
                purpose: Purpose::Reinitialize,
                deadline: None,
            });
            let params = session
                .params
                .as_deref()
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(|s| serde_json::from_str::<&RawValue>(s).ok());
            let mut out = Vec::new();
            encode::call(
                &mut out,
                Some(&own.to_string()),
                Call::Plain {
                    method: session.method,
                    params,
                },
            );
            self.queue(link, Bytes::from(out), link);
        }
        if let Some(instance) = self.warm_instance(link) {
            instance.initialized = true;
            instance.replays_waiting += sessions.len();
            instance
                .replay_answers
                .extend(sessions.into_iter().map(|s| s.result));
        }
    }

    /// A warming instance ended or missed its deadline: the reload is abandoned, every
    /// instance it started is stopped, and the chain stays as it was.
    pub(super) fn abandon_reload(&mut self, link: LinkId, reason: &str) {
        let Some(warming) = self.reloading.take() else {
            return;
        };
        let name = self.links[link].name.clone();
        let message =
            format!("the reload was abandoned: proxy `{name}` {reason}; the chain is unchanged");
        tracing::warn!("{message}");
        self.timers
            .cancel(|t| matches!(t, Timer::WarmDeadline { .. }));
        for instance in warming.instances {
            let state = &mut self.links[instance.link];
            if state.alive {
                state.alive = false;
                self.outputs.push(Output::Close(instance.link));
            }
            self.links[instance.link].pending.take_all();
            self.components.retire(instance.link);
        }
        self.reload_rejected(&message);
    }

    /// Once every new instance answered: the chain after the reload takes traffic.
    fn swap_if_warm(&mut self) {
        let Some(warming) = &self.reloading else {
            return;
        };
        if !warming.instances.iter().all(WarmInstance::ready) {
            return;
        }
        let warming = self.reloading.take().expect("checked above");
        self.timers
            .cancel(|t| matches!(t, Timer::WarmDeadline { .. }));
        self.swap(warming);
    }

    fn swap(&mut self, warming: Warming) {
        let Warming {
            steps,
            changes,
            instances,
        } = warming;
        let old_count = self.positions.len();
        // Old position → new position, and what each new position holds.
        let mut map = vec![0; old_count];
        let mut placements: Vec<Placement> = Vec::new();
        let mut old_states: Vec<Option<PositionState>> = std::mem::take(&mut self.positions)
            .into_iter()
            .map(Some)
            .collect();
        let mut positions: Vec<PositionState> = Vec::with_capacity(old_count + steps.len());
        let instance = |link: LinkId| instances.iter().find(|i| i.link == link);
        for old in 0..=old_count {
            for step in &steps {
                if let ReloadStep::Insert {
                    before,
                    instance: new,
                } = step
                    && *before == old
                {
                    let warm = instance(new.link).expect("warmed");
                    positions.push(PositionState {
                        link: new.link,
                        policy: new.failure,
                        health: Health::Up,
                        failures: Vec::new(),
                        initialize_params: warm.params.clone(),
                        initialize_answer: warm.successor_answer.clone(),
                    });
                    placements.push(Placement::Started(new.link));
                }
            }
            if old < old_count {
                map[old] = positions.len();
                positions.push(old_states[old].take().expect("each old position once"));
                if old > 0 {
                    placements.push(Placement::Kept(old));
                }
            }
        }
        let inserted = positions.len() - old_count;
        self.positions = positions;
        self.topology.proxies += inserted;
        self.remap_positions(&map);
        for state in self.links.iter_mut() {
            state.position = state.position.map(|p| map.get(p).copied().unwrap_or(p));
        }
        for (new, state) in self.positions.iter().enumerate() {
            let link = state.link;
            self.links[link].position = Some(new);
        }
        let mut retiring = Vec::new();
        for step in &steps {
            match step {
                ReloadStep::Replace { position, instance } => {
                    let at = map[*position];
                    let state = &mut self.positions[at];
                    let old = std::mem::replace(&mut state.link, instance.link);
                    state.policy = instance.failure;
                    state.failures.clear();
                    state.health = Health::Up;
                    self.links[instance.link].position = Some(at);
                    placements[at - 1] = Placement::Started(instance.link);
                    retiring.push(old);
                }
                ReloadStep::Remove { position } => {
                    let at = map[*position];
                    self.positions[at].health = Health::Bypassed;
                    retiring.push(self.positions[at].link);
                }
                ReloadStep::Insert { .. } | ReloadStep::RestartAgent => {}
            }
        }
        self.components.swapped(&placements);
        if steps.iter().any(|s| matches!(s, ReloadStep::RestartAgent)) {
            self.restart_agent_for_reload();
        }
        for step in &steps {
            let (name, event, detail) = match step {
                ReloadStep::Replace { instance, .. } => (
                    &instance.name,
                    ComponentEvent::Swapped,
                    "a new instance took its place; the old one drains",
                ),
                ReloadStep::Insert { instance, .. } => (
                    &instance.name,
                    ComponentEvent::Started,
                    "added to the chain by a reload",
                ),
                ReloadStep::Remove { .. } | ReloadStep::RestartAgent => continue,
            };
            let name = name.clone();
            self.trace_component(&name, event, detail.to_owned());
        }
        for link in retiring {
            self.retiring.push(link);
            self.timers
                .at(self.now + self.shutdown_grace, Timer::Retire { link });
        }
        tracing::info!("configuration reloaded: {}", changes.join("; "));
        self.answer_reload_request(&changes);
        let params = serde_json::json!({ "changes": changes }).to_string();
        self.notify_editor(RELOADED_NOTIFICATION, &params);
        self.retire_drained();
    }

    /// `on_reload = "restart"`: the agent's current instance is ended, what waits on it is
    /// answered, the sessions it had are lost to the editor, and it starts again at once.
    fn restart_agent_for_reload(&mut self) {
        let Some(at) = self.topology.agent_position() else {
            return;
        };
        let link = self.at(at);
        let name = self.links[link].name.clone();
        let message = format!(
            "agent `{name}` was restarted by a configuration reload (on_reload = \"restart\")"
        );
        let data = serde_json::json!({ "component": name }).to_string();
        let data = RawValue::from_string(data).expect("json! is valid JSON");
        let waiting = self.links[link].pending.take_all();
        self.answer_each(waiting, &message, &data);
        let state = &mut self.links[link];
        if state.alive {
            state.alive = false;
            self.outputs.push(Output::Close(link));
        }
        self.release_senders_paused_by(link);
        let sessions: Vec<Box<str>> = self
            .open_sessions
            .all()
            .iter()
            .map(|s| s.id.clone())
            .collect();
        self.lost_sessions.lose(sessions);
        self.open_sessions.clear();
        tracing::info!(component = %name, "restarting the agent for the reload");
        self.restart_later(at, std::time::Duration::ZERO, Vec::new());
    }

    /// Positions held by the timers, the MCP table and the bridge's shims follow the chain
    /// after a reload (`map`: old position → new).
    fn remap_positions(&mut self, map: &[Position]) {
        let at = |p: Position| map.get(p).copied().unwrap_or(p);
        self.timers.for_each_mut(|timer| match timer {
            Timer::Restart { position } | Timer::HeldCall { position, .. } => {
                *position = at(*position);
            }
            _ => {}
        });
        self.mcp.remap_owners(&at);
        self.shims.remap_owners(&at);
    }

    /// Old instances that have answered everything they were sent, and whose own requests
    /// have been answered, are stopped.
    pub(super) fn retire_drained(&mut self) {
        if self.retiring.is_empty() {
            return;
        }
        let drained: Vec<LinkId> = self
            .retiring
            .iter()
            .copied()
            .filter(|&link| {
                self.links[link].pending.is_empty()
                    && self.held_from(link) == 0
                    && !self
                        .links
                        .iter()
                        .any(|(_, l)| l.pending.count_where(|p| p.origin == link) > 0)
            })
            .collect();
        for link in drained {
            self.retire(link, "answered what it was sent; stopped");
        }
    }

    /// `shutdown_grace` after the swap: an old instance still busy is stopped, and what it
    /// has not answered is answered with an error.
    pub(super) fn retire_now(&mut self, link: LinkId) {
        if !self.retiring.contains(&link) {
            return;
        }
        let name = self.links[link].name.clone();
        let message = format!(
            "proxy `{name}` was replaced by a reload and did not answer within shutdown_grace"
        );
        let waiting = self.links[link].pending.take_all();
        let data = serde_json::json!({ "component": name }).to_string();
        let data = RawValue::from_string(data).expect("json! is valid JSON");
        self.answer_each(waiting, &message, &data);
        self.retire(link, "still busy after shutdown_grace; stopped");
    }

    fn retire(&mut self, link: LinkId, detail: &str) {
        self.retiring.retain(|l| *l != link);
        self.timers
            .cancel(|t| matches!(t, Timer::Retire { link: l } if *l == link));
        let state = &mut self.links[link];
        if state.alive {
            state.alive = false;
            self.outputs.push(Output::Close(link));
        }
        self.release_senders_paused_by(link);
        let name = self.links[link].name.clone();
        tracing::debug!(component = %name, "{detail}");
        self.trace_component(&name, ComponentEvent::Retired, detail.to_owned());
        self.components.retire(link);
    }

    /// An instance being retired ended on its own: what it had not answered is answered with
    /// an error, and its end is no failure of the chain. Says whether `link` was one.
    pub(super) fn retired_instance_ended(&mut self, link: LinkId, ending: &Ending) -> bool {
        if self.is_warming(link) {
            self.abandon_reload(link, &ending.reason);
            return true;
        }
        if !self.retiring.contains(&link) {
            return false;
        }
        let name = self.links[link].name.clone();
        let message = format!(
            "proxy `{name}`, replaced by a reload, ended: {}",
            ending.reason
        );
        let waiting = self.links[link].pending.take_all();
        let data = serde_json::json!({ "component": name }).to_string();
        let data = RawValue::from_string(data).expect("json! is valid JSON");
        self.answer_each(waiting, &message, &data);
        self.retire(link, "ended while draining");
        true
    }

    /// Sends the editor a notification of the conductor's own, once it is initialized.
    fn notify_editor(&mut self, method: &str, params: &str) {
        if !self.editor_initialized {
            return;
        }
        let Ok(params) = RawValue::from_string(params.to_owned()) else {
            return;
        };
        let editor = self.editor();
        let mut out = Vec::new();
        encode::call(
            &mut out,
            None,
            Call::Plain {
                method,
                params: Some(&params),
            },
        );
        self.queue(editor, Bytes::from(out), editor);
    }
}
