//! The router's inputs in arrival order, its own timers, and how a run ends (the editor
//! leaves, a signal, a failure) and winds down (components closed, bridge shims released).

use std::time::Instant;

use acp_wire::{Envelope, error_code};

use super::failure::Ending;
use super::pending::Purpose;
use super::{Components, Finish, LinkState, Role, Router, RunState, Timer};
use crate::input::Input;
use crate::link::{LinkEvent, LinkId};
use crate::output::Output;

/// The error for the agent's MCP requests that meet the conductor's shutdown.
const STOPPING: &str = "the conductor is shutting down";

impl<C: Components> Router<C> {
    /// How the routing ended, once it has: the driver stops feeding inputs (but for
    /// [`release_shim`](Self::release_shim)) and winds down.
    pub fn finished(&self) -> Option<Finish> {
        match self.state {
            RunState::Finished(finish) => Some(finish),
            _ => None,
        }
    }

    /// Applies one input, which arrived at `now`.
    pub fn handle(&mut self, input: Input, now: Instant) {
        self.now = now;
        match input {
            Input::Link { link, event } if self.links.contains(link) => {
                if self.is_warming(link) {
                    self.on_warming_event(link, event);
                } else if self.links[link].role == Role::Shim {
                    self.on_shim_event(link, event);
                } else {
                    self.on_link_event(link, event);
                }
            }
            Input::Link { link, .. } => {
                tracing::debug!(%link, "event from a link the router was not given; ignored")
            }
            Input::Exited {
                link,
                reason,
                status,
                stderr_tail,
            } if self.links.contains(link) => self.component_gone(
                link,
                Ending {
                    reason,
                    status,
                    stderr: stderr_tail,
                },
            ),
            Input::Exited { link, reason, .. } => {
                tracing::debug!(%link, %reason, "exit of a component the router was not given")
            }
            Input::ShimConnected(link) => self.on_shim_connected(link),
            Input::Signal(name) => {
                tracing::info!(signal = name, "shutting down");
                self.ending(format!("the conductor received {name}"));
                self.answer_editor_requests(
                    error_code::SHUTTING_DOWN,
                    &format!("the conductor received {name} and is shutting down"),
                    None,
                );
                self.state = RunState::Finished(self.finish_kind());
            }
        }
        self.retire_drained();
        self.check_drained();
    }

    fn on_link_event(&mut self, link: LinkId, event: LinkEvent) {
        match event {
            LinkEvent::Frames(frames) if self.traced() => {
                self.heard_from(link);
                for frame in frames {
                    self.trace_in(link, &frame);
                    self.on_frame(link, frame);
                    self.trace_flush();
                }
            }
            LinkEvent::Frames(frames) => {
                self.heard_from(link);
                for frame in frames {
                    self.on_frame(link, frame);
                }
            }
            LinkEvent::TooLong(e) => {
                self.trace_too_long_line(link, &e);
                self.on_oversized(link, e);
                self.trace_flush();
            }
            LinkEvent::Closed(err) => self.on_closed(link, err),
            LinkEvent::Drained => self.on_drained(link),
            LinkEvent::WriteFailed { reason, stalled } => {
                self.on_write_failed(link, reason, stalled)
            }
        }
    }

    fn on_shim_event(&mut self, link: LinkId, event: LinkEvent) {
        match event {
            LinkEvent::Frames(frames) => {
                for frame in frames {
                    self.trace_in(link, &frame);
                    match &self.state {
                        RunState::Failed(failure) => {
                            let message = failure.message.clone();
                            self.shim_frame_after_failure(link, &frame, &message);
                        }
                        _ => self.on_shim_frame(link, frame),
                    }
                    self.trace_flush();
                }
            }
            LinkEvent::TooLong(e) => {
                self.trace_too_long_line(link, &e);
                self.on_shim_too_long(link, e);
                self.trace_flush();
            }
            LinkEvent::Drained => self.on_drained(link),
            LinkEvent::Closed(_) | LinkEvent::WriteFailed { .. } => self.on_shim_gone(link),
        }
    }

    /// A shim's link, held at its gate until now so that its frames follow this input.
    fn on_shim_connected(&mut self, id: LinkId) {
        let name = format!("mcp-bridge#{}", id.0);
        self.links
            .insert(id, LinkState::new(name, Role::Shim, None));
        self.trace_link(id);
        self.open_shim(id);
        self.outputs.push(Output::Resume(id));
    }

    /// When the router next has something to do without an event: a timer or the end of
    /// the editor's grace.
    pub fn next_wake(&self) -> Option<Instant> {
        let ends = match &self.state {
            RunState::Draining { deadline } => Some(*deadline),
            RunState::Failed(failure) => failure.ends_at,
            _ => None,
        };
        self.timers.next().into_iter().chain(ends).min()
    }

    /// The time has come for what [`next_wake`](Self::next_wake) named (or later).
    pub fn on_time(&mut self, now: Instant) {
        self.now = now;
        if let RunState::Failed(failure) = &self.state
            && failure.ends_at.is_some_and(|at| at <= now)
        {
            self.state = RunState::Finished(Finish::Failed);
        }
        if let RunState::Draining { deadline } = self.state
            && deadline <= now
        {
            self.answer_editor_requests(error_code::SHUTTING_DOWN, STOPPING, None);
            self.state = RunState::Finished(Finish::Stopped);
        }
        while let Some(timer) = self.timers.pop_due(now) {
            match timer {
                Timer::ExpectExit { link, reason } => {
                    self.component_gone(link, Ending::because(reason))
                }
                Timer::Restart { position } => self.restart_now(position),
                Timer::Deadline { link } => self.on_deadline(link, now),
                Timer::HeldCall { position, link, id } => {
                    self.on_held_call_due(position, link, &id)
                }
                Timer::WarmDeadline { link } => {
                    if self.is_warming(link) {
                        self.abandon_reload(
                            link,
                            "did not answer initialize within its startup_timeout",
                        );
                    }
                }
                Timer::Retire { link } => self.retire_now(link),
            }
        }
        self.retire_drained();
        self.check_drained();
    }

    pub(super) fn finish_kind(&self) -> Finish {
        match self.state {
            RunState::Failed(_) | RunState::Finished(Finish::Failed) => Finish::Failed,
            _ => Finish::Stopped,
        }
    }

    pub(super) fn on_editor_gone(&mut self) {
        match self.state {
            RunState::Running => {
                let editor = &self.links[self.editor()].name;
                self.ending(format!("the {editor} closed the conductor's stdin"));
                self.state = RunState::Draining {
                    deadline: self.now + self.shutdown_grace,
                };
            }
            RunState::Failed(_) => self.state = RunState::Finished(Finish::Failed),
            RunState::Draining { .. } | RunState::Finished(_) => {}
        }
    }

    /// In draining, finishes once the editor has had every answer; after a failure, sets the
    /// end of the run once the editor has asked something (and so has been told).
    fn check_drained(&mut self) {
        if let RunState::Draining { .. } = self.state
            && self.editor_pending() == 0
        {
            self.state = RunState::Finished(Finish::Stopped);
        }
        // The editor has been told: what it sent before it heard is still answered, for a
        // moment, then the run ends.
        if let RunState::Failed(failure) = &mut self.state
            && self.editor_asked
            && failure.ends_at.is_none()
        {
            failure.ends_at = Some(self.now + self.shutdown_grace);
        }
    }

    fn editor_pending(&self) -> usize {
        let editor = self.editor();
        let sent_on: usize = self
            .links
            .iter()
            .map(|(_, l)| l.pending.count_where(|p| p.origin == editor))
            .sum();
        sent_on + self.held_from(editor) + self.requests_waiting_on_shims(0)
    }

    /// Once [`finished`](Self::finished): closes the editor's output and every component's input
    /// (each writer first finishes what is queued). Bridge shims stay connected, so that the
    /// agent, told to stop, closes its MCP servers itself instead of seeing them die first;
    /// MCP requests they still wait on are answered with an error, as no provider will.
    pub fn close_components(&mut self) {
        self.skipped.summarize();
        let closing: Vec<LinkId> = self
            .links
            .iter()
            .filter(|(_, l)| l.role != Role::Shim)
            .map(|(id, _)| id)
            .collect();
        for link in closing {
            self.outputs.push(Output::Close(link));
        }
        let waiting = self.take_pending(|p| matches!(p.purpose, Purpose::Bridge(_)));
        if !waiting.is_empty() {
            tracing::debug!(
                requests = waiting.len(),
                "answering the agent's MCP requests still waiting on a provider"
            );
        }
        for p in waiting {
            self.fail_bridge_request(p, STOPPING);
        }
    }

    /// Whether a bridge shim is still connected. After
    /// [`close_components`](Self::close_components) the driver feeds what happens on shims to
    /// [`release_shim`](Self::release_shim) until none is; it bounds the wait.
    pub fn shims_connected(&self) -> bool {
        self.links
            .iter()
            .any(|(_, l)| l.role == Role::Shim && l.alive)
    }

    /// After [`close_components`](Self::close_components): lets go of each shim as soon as
    /// it closes its side (the agent closed that MCP server), so it exits at once. MCP
    /// requests the agent sends meanwhile are answered with an error; every other input is
    /// ignored.
    pub fn release_shim(&mut self, input: Input, now: Instant) {
        self.now = now;
        let Input::Link { link, event } = input else {
            return;
        };
        if !self.is_shim(link) {
            return;
        }
        match event {
            LinkEvent::Frames(frames) => {
                for frame in frames {
                    self.trace_in(link, &frame);
                    self.shim_frame_after_failure(link, &frame, STOPPING);
                    self.trace_flush();
                }
            }
            LinkEvent::Closed(_) | LinkEvent::WriteFailed { .. } => {
                self.links[link].alive = false;
                self.outputs.push(Output::Close(link));
            }
            LinkEvent::TooLong(_) | LinkEvent::Drained => {}
        }
    }

    fn is_shim(&self, link: LinkId) -> bool {
        self.links.contains(link) && self.links[link].role == Role::Shim
    }

    /// In a failed or stopping chain: the agent's MCP requests are answered with `message`.
    pub(super) fn shim_frame_after_failure(&mut self, link: LinkId, frame: &[u8], message: &str) {
        if let Ok(Envelope::Request { id, .. }) = acp_wire::parse(frame) {
            let code = error_code::COMPONENT_FAILED;
            self.reply_error(link, id.get(), code, message, None);
        }
    }
}

/// What the fuzz target checks after a run: the id tables' leftovers. Not part of the API.
#[doc(hidden)]
impl<C: Components> Router<C> {
    /// The ids of the editor's requests still in some link's id table.
    pub fn editor_requests_pending(&self) -> Vec<String> {
        let editor = self.editor();
        self.links
            .iter()
            .flat_map(|(_, l)| l.pending.iter())
            .filter(|(_, p)| p.origin == editor)
            .map(|(_, p)| p.origin_id.to_string())
            .collect()
    }

    /// How many requests made for bridge shims still wait for an answer.
    pub fn bridge_requests_pending(&self) -> usize {
        self.links
            .iter()
            .map(|(_, l)| {
                l.pending
                    .count_where(|p| matches!(p.purpose, Purpose::Bridge(_)))
            })
            .sum()
    }
}
