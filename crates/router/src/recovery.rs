//! Keeping the chain going past a failed component: `bypass` takes a proxy out so traffic
//! flows around it; `restart` starts it again, initializes it as before, and holds what is
//! sent to it meanwhile, delivering it in order once the new instance is initialized.
//!
//! A restarted proxy that asks its successor to `initialize` is answered with what its first
//! instance was answered: the rest of the chain is not initialized twice. Sessions opened
//! before are not replayed to it (docs/failures.md says why).

use std::collections::VecDeque;
use std::time::Duration;

use acp_wire::encode::{self, Call};
use acp_wire::{Outcome, RawValue};
use bytes::Bytes;

use super::failure::Ending;
use super::pending::{Pending, Purpose};
use super::topology::{Hop, Origin, Position, Toward};
use super::{Components, LinkState, Restarted, Role, Router, RunState, Timer};
use crate::link::LinkId;
use crate::output::Output;
use crate::trace_record::ComponentEvent;

/// What is held for one restarting component before its sender is paused.
const HELD_LIMIT: usize = 16 << 20;

/// The notification that tells the editor a restarted component is running again.
pub const RESTARTED_NOTIFICATION: &str = "_acp-conductor/component_restarted";

/// How the component at a position is doing.
#[derive(Debug, Default)]
pub(super) enum Health {
    #[default]
    Up,
    /// Failed under `restart`: waiting out its backoff, then for its new instance to answer
    /// `initialize`.
    Restarting(Restart),
    /// Taken out of the chain: traffic flows around it.
    Bypassed,
}

#[derive(Debug, Default)]
pub(super) struct Restart {
    /// Frames sent toward it meanwhile, with the link each came from, in arrival order.
    held: VecDeque<(LinkId, Bytes)>,
    held_bytes: usize,
    /// Links paused because they sent more than [`HELD_LIMIT`] toward it.
    paused: Vec<LinkId>,
    /// The new instance is started and has been sent `initialize`.
    initializing: bool,
    /// `initialize` requests the failed instance never answered: sent to the new one (or
    /// around it, if it is bypassed) instead of failing the editor's start.
    initialize_waiting: Vec<Pending>,
}

impl<C: Components> Router<C> {
    /// Sends a new instance at `link` the `initialize` its place was sent before (`params`,
    /// as recorded), as `method`, under an id of the conductor's own: a restart's and a
    /// reload's warm-up alike. Returns that id; its answer is the conductor's, not relayed.
    pub(super) fn send_recorded_initialize(
        &mut self,
        link: LinkId,
        method: &str,
        params: &Bytes,
    ) -> u64 {
        let own = self.links[link].pending.register(Pending {
            origin: link,
            origin_id: "null".into(),
            method: "initialize".into(),
            purpose: Purpose::Reinitialize,
            deadline: None,
        });
        let params = std::str::from_utf8(params)
            .ok()
            .and_then(|s| serde_json::from_str::<&RawValue>(s).ok());
        let mut out = Vec::new();
        encode::call(
            &mut out,
            Some(&own.to_string()),
            Call::Plain { method, params },
        );
        self.queue(link, Bytes::from(out), link);
        own
    }

    /// The next hop for a message from `origin`, around bypassed proxies.
    pub(super) fn next_hop(&self, origin: Origin) -> Hop {
        let mut hop = self.topology.next_hop(origin);
        while self.topology.is_proxy(hop.position)
            && matches!(self.positions[hop.position].health, Health::Bypassed)
        {
            hop = self.topology.next_hop(Origin {
                position: hop.position,
                toward: origin.toward,
                wrapped: false,
            });
        }
        hop
    }

    /// Holds `frame`, from `from`, if the component at `position` is restarting; says whether
    /// it did.
    pub(super) fn hold_if_restarting(
        &mut self,
        position: Position,
        from: LinkId,
        frame: &Bytes,
    ) -> bool {
        let Health::Restarting(restart) = &mut self.positions[position].health else {
            return false;
        };
        restart.held.push_back((from, frame.clone()));
        restart.held_bytes += frame.len();
        if restart.held_bytes > HELD_LIMIT && !restart.paused.contains(&from) {
            restart.paused.push(from);
            self.outputs.push(Output::Pause(from));
        }
        self.trace_held();
        true
    }

    /// Takes the request `id` (its JSON text) that `from` sent out of what is held for the
    /// restarting component at `position`, if it is still held there.
    pub(super) fn take_held_request(
        &mut self,
        position: Position,
        from: LinkId,
        id: &str,
    ) -> Option<Bytes> {
        let Health::Restarting(restart) = &mut self.positions[position].health else {
            return None;
        };
        let at = restart.held.iter().position(|(l, frame)| {
            *l == from
                && matches!(acp_wire::parse(frame), Ok(acp_wire::Envelope::Request { id: held, .. }) if held.get() == id)
        })?;
        let (_, frame) = restart.held.remove(at)?;
        restart.held_bytes -= frame.len();
        Some(frame)
    }

    /// A restarting position holding frames `from` sent, if any.
    pub(super) fn restarting_with_frames_from(&self, from: LinkId) -> Option<Position> {
        self.positions.iter().position(|p| {
            matches!(&p.health, Health::Restarting(r) if r.held.iter().any(|(l, _)| *l == from))
        })
    }

    /// Takes the proxy at `position` out of the chain; `initialize` requests it never
    /// answered, and what was held for it, go around it.
    pub(super) fn bypass(&mut self, position: Position, initialize_waiting: Vec<Pending>) {
        let previous = std::mem::replace(&mut self.positions[position].health, Health::Bypassed);
        self.timers
            .cancel(|t| matches!(t, Timer::Restart { position: p } if *p == position));
        self.components.stop(position);
        let name = self.links[self.at(position)].name.clone();
        self.trace_component(
            &name,
            ComponentEvent::Bypassed,
            "taken out of the chain: its neighbours talk directly".to_owned(),
        );
        let mut restart = match previous {
            Health::Restarting(restart) => restart,
            _ => Restart::default(),
        };
        restart.initialize_waiting.extend(initialize_waiting);
        for request in std::mem::take(&mut restart.initialize_waiting) {
            self.initialize_around(position, request);
        }
        self.deliver_held(restart);
    }

    /// An `initialize` the proxy at `position` had not answered when it was bypassed goes on
    /// to its successor, so that a proxy stuck at start does not keep the editor from
    /// starting.
    fn initialize_around(&mut self, position: Position, request: Pending) {
        let hop = self.next_hop(Origin {
            position,
            toward: Toward::Agent,
            wrapped: false,
        });
        self.send_initialize_again(position, hop, request);
    }

    /// Sends `request`, an `initialize` that was sent to the component at `position` and never
    /// answered, again on `hop`. Initialization is the one request safe to send twice.
    fn send_initialize_again(&mut self, position: Position, hop: Hop, request: Pending) {
        let params = self.positions[position].initialize_params.clone();
        let params = params
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| serde_json::from_str::<&RawValue>(s).ok());
        let Ok(id) = RawValue::from_string(request.origin_id.into()) else {
            return;
        };
        if !self.links[request.origin].alive {
            return;
        }
        let frame = Bytes::new();
        self.deliver(
            request.origin,
            hop,
            Some(&id),
            "initialize",
            params,
            &frame,
            false,
        );
    }

    /// Starts the component at `position` again after `after`; what is sent to it meanwhile
    /// is held.
    pub(super) fn restart_later(
        &mut self,
        position: Position,
        after: Duration,
        initialize_waiting: Vec<Pending>,
    ) {
        let state = &mut self.positions[position];
        if !matches!(state.health, Health::Restarting(_)) {
            state.health = Health::Restarting(Restart::default());
        }
        if let Health::Restarting(restart) = &mut state.health {
            restart.initializing = false;
            restart.initialize_waiting.extend(initialize_waiting);
        }
        if self.topology.agent_position() == Some(position) {
            self.lost_sessions.agent_restarted();
        }
        self.bridge_connections_lost(position);
        // An instance that closed its output or missed a deadline may still be running.
        self.components.stop(position);
        self.timers
            .at(self.now + after, Timer::Restart { position });
    }

    /// The backoff is over: a new instance, initialized with what the first one was given.
    pub(super) fn restart_now(&mut self, position: Position) {
        // While the editor's last requests drain, a restart may still be what answers them.
        if !matches!(self.state, RunState::Running | RunState::Draining { .. })
            || !matches!(self.positions[position].health, Health::Restarting(_))
        {
            return;
        }
        let Restarted {
            link,
            initialize_params,
        } = self.components.restart(position);
        let new = link;
        let old = &self.links[self.at(position)];
        let state = LinkState {
            dialect: old.dialect,
            dialect_pinned: old.dialect_pinned,
            ..LinkState::new(old.name.clone(), old.role, Some(position))
        };
        let (name, role) = (state.name.clone(), state.role);
        self.links.insert(new, state);
        self.positions[position].link = new;
        self.trace_link(new);
        let waiting = match &self.positions[position].health {
            Health::Restarting(restart) => !restart.initialize_waiting.is_empty(),
            _ => false,
        };
        let params = match initialize_params {
            // It had not answered its `initialize` yet: it gets that request again.
            _ if waiting => None,
            params => params,
        };
        let Some(params) = params else {
            tracing::info!(component = %name, "started again");
            return self.recovered(position);
        };
        tracing::info!(component = %name, "started again; initializing it as before");
        let method = match role {
            Role::Proxy => self.links[new].dialect.initialize_method(),
            _ => "initialize",
        };
        let own = self.send_recorded_initialize(new, method, &params);
        self.arm_deadline(new, own, true);
        if let Health::Restarting(restart) = &mut self.positions[position].health {
            restart.initializing = true;
        }
    }

    /// The new instance answered the `initialize` the conductor sent it.
    pub(super) fn on_reinitialized(&mut self, link: LinkId, outcome: Outcome<'_>) {
        let Some(position) = self.links[link].position else {
            return;
        };
        match outcome {
            Outcome::Result(result) => {
                if self.links[link].role == Role::Agent {
                    self.agent = Some(super::AgentCapabilities::read(result));
                }
                self.recovered(position);
            }
            Outcome::Error(error) => {
                let reason = format!("answered initialize with an error: {}", error.get());
                self.component_gone(link, Ending::because(reason));
            }
        }
    }

    /// A restarted proxy asks its successor to `initialize` as its first instance did: it is
    /// answered with what that instance got. Says whether it was.
    pub(super) fn answer_initialize_again(
        &mut self,
        from: Position,
        link: LinkId,
        id: &RawValue,
    ) -> bool {
        let state = &self.positions[from];
        let (
            Health::Restarting(Restart {
                initializing: true, ..
            }),
            Some(answer),
        ) = (&state.health, &state.initialize_answer)
        else {
            return false;
        };
        let mut out = Vec::with_capacity(answer.get().len() + 64);
        encode::response(&mut out, id.get(), Outcome::Result(answer));
        self.count_answer(link, false);
        self.queue(link, Bytes::from(out), link);
        true
    }

    /// The component at `position` is running again: what was held for it goes on, in order.
    fn recovered(&mut self, position: Position) {
        let Health::Restarting(restart) =
            std::mem::replace(&mut self.positions[position].health, Health::Up)
        else {
            return;
        };
        let link = self.at(position);
        let name = self.links[link].name.clone();
        tracing::info!(component = %name, held = restart.held.len(), "running again");
        let held = restart.held.len();
        self.trace_component(
            &name,
            ComponentEvent::Restarted,
            format!("running again; {held} messages held for it go on"),
        );
        self.announce_restarted(&name);
        let mut restart = restart;
        let hop = Hop {
            position,
            wrap: false,
        };
        for request in std::mem::take(&mut restart.initialize_waiting) {
            self.send_initialize_again(position, hop, request);
        }
        self.reconnect_shims(position);
        self.deliver_held(restart);
    }

    fn deliver_held(&mut self, restart: Restart) {
        for sender in restart.paused {
            self.outputs.push(Output::Resume(sender));
        }
        for (from, frame) in restart.held {
            self.trace_in(from, &frame);
            if !self.links[from].alive {
                // Its sender is gone: nothing to route it for (still recorded, as read).
            } else if self.links[from].role == Role::Shim {
                self.on_shim_frame(from, frame);
            } else {
                self.on_held_frame(from, frame);
            }
            self.trace_flush();
        }
    }

    /// Under `fail`: the requests held for a restarting component are answered.
    pub(super) fn answer_held(&mut self, position: Position, message: &str, data: &RawValue) {
        let Health::Restarting(restart) =
            std::mem::replace(&mut self.positions[position].health, Health::Up)
        else {
            return;
        };
        for sender in &restart.paused {
            self.outputs.push(Output::Resume(*sender));
        }
        for request in restart.initialize_waiting {
            let code = acp_wire::error_code::COMPONENT_FAILED;
            self.reply_error(
                request.origin,
                &request.origin_id,
                code,
                message,
                Some(data),
            );
        }
        for (from, frame) in restart.held {
            self.trace_in(from, &frame);
            if let Ok(acp_wire::Envelope::Request { id, .. }) = acp_wire::parse(&frame) {
                let code = acp_wire::error_code::COMPONENT_FAILED;
                self.reply_error(from, id.get(), code, message, Some(data));
            }
            self.trace_flush();
        }
    }

    /// How many frames from `link` are held for restarting components.
    pub(super) fn held_from(&self, link: LinkId) -> usize {
        self.positions
            .iter()
            .map(|state| match &state.health {
                Health::Restarting(restart) => {
                    restart
                        .held
                        .iter()
                        .filter(|(from, _)| *from == link)
                        .count()
                        + restart
                            .initialize_waiting
                            .iter()
                            .filter(|p| p.origin == link)
                            .count()
                }
                _ => 0,
            })
            .sum()
    }

    /// Answers the requests `link` sent that are held for restarting components, and drops
    /// its other held frames: the run is ending.
    pub(super) fn answer_held_from(
        &mut self,
        link: LinkId,
        code: i64,
        message: &str,
        data: Option<&RawValue>,
    ) {
        // Each held frame (`None` for an `initialize` waiting, recorded when it arrived)
        // with the id to answer it under (`None` for a notification, only dropped).
        let mut answers: Vec<(Option<Bytes>, Option<String>)> = Vec::new();
        for state in &mut self.positions {
            let Health::Restarting(restart) = &mut state.health else {
                continue;
            };
            restart.held.retain(|(from, frame)| {
                if *from != link {
                    return true;
                }
                let id = match acp_wire::parse(frame) {
                    Ok(acp_wire::Envelope::Request { id, .. }) => Some(id.get().to_string()),
                    _ => None,
                };
                answers.push((Some(frame.clone()), id));
                false
            });
            let (waiting, others) = std::mem::take(&mut restart.initialize_waiting)
                .into_iter()
                .partition(|p| p.origin == link);
            restart.initialize_waiting = others;
            answers.extend(
                waiting
                    .into_iter()
                    .map(|p| (None, Some(p.origin_id.into_string()))),
            );
        }
        for (frame, id) in answers {
            if let Some(frame) = &frame {
                self.trace_in(link, frame);
            }
            if let Some(id) = id {
                self.reply_error(link, &id, code, message, data);
            }
            self.trace_flush();
        }
    }

    fn announce_restarted(&mut self, name: &str) {
        if !self.editor_initialized {
            return;
        }
        let params = serde_json::json!({ "component": name }).to_string();
        let params = RawValue::from_string(params).expect("json! is valid JSON");
        let editor = self.editor();
        let mut out = Vec::new();
        encode::call(
            &mut out,
            None,
            Call::Plain {
                method: RESTARTED_NOTIFICATION,
                params: Some(&params),
            },
        );
        self.queue(editor, Bytes::from(out), editor);
    }
}
