//! The router's loop: events in arrival order, its own timers, and how a run ends (the editor
//! leaves, a signal, a failure) and winds down (components closed, bridge shims released).

use acp_wire::{Envelope, error_code};
use tokio::time::Instant;

use super::failure::Ending;
use super::pending::Purpose;
use super::{Components, Finish, LinkState, Role, Router, RunState, Timer};
use crate::event::Event;
use crate::link::{Link, LinkEvent, LinkId, Outbox};

/// The error for the agent's MCP requests that meet the conductor's shutdown.
const STOPPING: &str = "the conductor is shutting down";

impl<C: Components> Router<C> {
    /// Routes until the editor leaves, a signal arrives, or the chain fails.
    pub async fn run(&mut self) -> Finish {
        loop {
            if let RunState::Finished(finish) = self.state {
                return finish;
            }
            let event = match self.next_wake() {
                Some(at) => tokio::select! {
                    biased;
                    event = self.events.recv() => event,
                    () = tokio::time::sleep_until(at) => {
                        self.on_time(Instant::now());
                        self.check_drained();
                        continue;
                    }
                },
                None => self.events.recv().await,
            };
            match event {
                Some(event) => self.handle(event),
                None => return Finish::Stopped,
            }
        }
    }

    /// Applies one event.
    fn handle(&mut self, event: Event) {
        match event {
            Event::Link { link, event } if self.links.contains(link) => {
                if self.links[link].role == Role::Shim {
                    self.on_shim_event(link, event);
                } else {
                    self.on_link_event(link, event);
                }
            }
            Event::Link { link, .. } => {
                tracing::debug!(%link, "event from a link the router was not given; ignored")
            }
            Event::Exited {
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
            Event::Exited { link, reason, .. } => {
                tracing::debug!(%link, %reason, "exit of a component the router was not given")
            }
            Event::ShimConnected(link) => self.on_shim_connected(link),
            Event::Signal(name) => {
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

    /// A shim's link, held at its gate until now so that its frames follow this event.
    fn on_shim_connected(&mut self, link: Link) {
        let id = link.id;
        let name = format!("mcp-bridge#{}", id.0);
        let gate = link.gate.clone();
        self.links
            .insert(id, LinkState::new(name, Role::Shim, None, link));
        self.trace_link(id);
        self.open_shim(id);
        gate.resume();
    }

    /// When the router next has something to do without an event: a timer or the end of
    /// the editor's grace.
    fn next_wake(&self) -> Option<Instant> {
        let ends = match &self.state {
            RunState::Draining { deadline } => Some(*deadline),
            RunState::Failed(failure) => failure.ends_at,
            _ => None,
        };
        self.timers.next().into_iter().chain(ends).min()
    }

    fn on_time(&mut self, now: Instant) {
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
            }
        }
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
                    deadline: Instant::now() + self.shutdown_grace,
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
            failure.ends_at = Some(Instant::now() + self.shutdown_grace);
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

    /// After [`run`](Self::run): closes the editor's output and every component's input
    /// (each writer first finishes what is queued). Bridge shims stay connected, so that the
    /// agent, told to stop, closes its MCP servers itself instead of seeing them die first;
    /// MCP requests they still wait on are answered with an error, as no provider will.
    pub fn close_components(&mut self) {
        self.skipped.summarize();
        for l in self.links.iter_mut() {
            if l.role != Role::Shim {
                l.outbox = Outbox::closed();
            }
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

    /// After [`close_components`](Self::close_components): lets go of each shim as soon as
    /// it closes its side (the agent closed that MCP server), so it exits at once. MCP
    /// requests the agent sends meanwhile are answered with an error. Returns when no shim
    /// is connected; the caller bounds the wait.
    pub async fn release_shims(&mut self) {
        while self
            .links
            .iter()
            .any(|(_, l)| l.role == Role::Shim && l.alive)
        {
            let Some(event) = self.events.recv().await else {
                return;
            };
            match event {
                Event::Link { link, event } if self.is_shim(link) => match event {
                    LinkEvent::Frames(frames) => {
                        for frame in frames {
                            self.trace_in(link, &frame);
                            self.shim_frame_after_failure(link, &frame, STOPPING);
                            self.trace_flush();
                        }
                    }
                    LinkEvent::Closed(_) | LinkEvent::WriteFailed { .. } => {
                        self.links[link].alive = false;
                        self.links[link].outbox = Outbox::closed();
                    }
                    LinkEvent::TooLong(_) | LinkEvent::Drained => {}
                },
                _ => {}
            }
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
