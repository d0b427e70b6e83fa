//! What the end of a component means: the one place that decides a component is gone, answers
//! every request that was waiting on it, and applies its policy (`fail`, `bypass`, `restart`).
//!
//! A component is gone when its exit is reported, when its writer stalls, when it misses a
//! deadline, or shortly after it closed its output or stopped taking input (the grace lets
//! the exit report arrive first, so the error can say how it ended). Under `fail` the chain
//! goes down with it; `bypass` and `restart` are carried out in [`super::recovery`].

use std::time::Duration;

use acp_wire::RawValue;
use acp_wire::encode;
use acp_wire::error_code;
use bytes::Bytes;

use super::pending::{Pending, Purpose};
use super::topology::Position;
use super::{Components, Failure, Finish, Role, Router, RunState, Timer};
use crate::input::ExitStatus;
use crate::link::LinkId;
use crate::output::Output;
use crate::policy::{AfterRestarts, OnFailure};
use crate::trace_record::ComponentEvent;

/// How long a component may leave its output closed before it counts as gone even if its
/// process has not been reaped yet.
const CLOSED_OUTPUT_GRACE: Duration = Duration::from_millis(500);
/// Under `restart`: this many failures within [`RESTART_WINDOW`] and restarting stops.
pub(super) const RESTART_LIMIT: usize = 3;
pub(super) const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// The notification that tells the editor a component failed and what was done about it.
/// Editors ignore notifications they do not know (the extensibility rules of ACP).
pub const FAILED_NOTIFICATION: &str = "_acp-conductor/component_failed";

/// How a component ended, as far as the conductor knows.
#[derive(Debug, Clone, Default)]
pub(super) struct Ending {
    pub reason: String,
    pub status: Option<ExitStatus>,
    /// Its last stderr lines.
    pub stderr: Vec<String>,
}

impl Ending {
    pub(super) fn because(reason: impl Into<String>) -> Ending {
        Ending {
            reason: reason.into(),
            ..Ending::default()
        }
    }
}

/// What a failure leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// The chain goes down; `gave_up` when it is because restarts were used up.
    Fail {
        gave_up: bool,
    },
    Bypass {
        gave_up: bool,
    },
    Restart {
        after: Duration,
    },
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Fail { .. } => "fail",
            Action::Bypass { .. } => "bypass",
            Action::Restart { .. } => "restart",
        }
    }
}

impl<C: Components> Router<C> {
    /// The peer of a chain link closed its output.
    pub(super) fn on_closed(&mut self, link: LinkId, error: Option<String>) {
        if self.links[link].role == Role::Editor {
            tracing::debug!(?error, "editor closed its output");
            self.on_editor_gone();
            return;
        }
        let reason = match error {
            Some(e) => format!("output failed: {e}"),
            None => "closed its output".to_string(),
        };
        self.expect_exit(link, reason);
    }

    /// Writing to the peer of a chain link failed or stalled.
    pub(super) fn on_write_failed(&mut self, link: LinkId, reason: String, stalled: bool) {
        if self.links[link].role == Role::Editor {
            tracing::debug!(%reason, "the editor stopped reading");
            let editor = &self.links[link].name;
            self.ending(format!("the {editor} stopped reading: {reason}"));
            self.state = RunState::Finished(self.finish_kind());
        } else if stalled {
            self.component_gone(link, Ending::because(reason));
        } else {
            self.expect_exit(link, reason);
        }
    }

    /// The component is most likely exiting: give its exit status a moment to arrive, so
    /// the error can say how it ended, and fail it with `reason` otherwise.
    fn expect_exit(&mut self, link: LinkId, reason: String) {
        if !self.links[link].alive {
            return;
        }
        let at = self.now + CLOSED_OUTPUT_GRACE;
        self.timers.at(at, Timer::ExpectExit { link, reason });
    }

    /// The component behind `link` is gone: every request waiting on it is answered with an
    /// error naming it, and its policy decides what happens to the chain.
    pub(super) fn component_gone(&mut self, link: LinkId, ending: Ending) {
        let l = &mut self.links[link];
        if !l.alive {
            return;
        }
        l.alive = false;
        let (role, name, position) = (l.role, l.name.clone(), l.position);
        // Its writer finishes what is queued and closes the component's input.
        self.outputs.push(Output::Close(link));
        self.release_senders_paused_by(link);
        if self.retired_instance_ended(link, &ending) {
            return;
        }
        let replaced = position.is_none_or(|p| self.at(p) != link);
        if matches!(self.state, RunState::Finished(_)) || replaced {
            tracing::debug!(component = %name, reason = %ending.reason, "ended");
            return;
        }
        let position = position.expect("checked above");
        let action = self.decide(position);
        let message = describe(role, &name, &ending.reason, action);
        let data = failure_data(&name, &ending, action);
        tracing::error!(stderr = ?ending.stderr, action = action.name(), "{message}");
        self.trace_component(&name, ComponentEvent::Failed, message.clone());
        self.announce_failure(&data);
        match action {
            Action::Fail { .. } => self.fail_chain(link, position, message, data),
            Action::Bypass { .. } => {
                let initializing = self.take_initialize_requests(link);
                self.answer_requests_sent_to(link, &message, &data);
                self.bypass(position, initializing);
            }
            Action::Restart { after } => {
                let initializing = self.take_initialize_requests(link);
                self.answer_requests_sent_to(link, &message, &data);
                self.restart_later(position, after, initializing);
            }
        }
    }

    /// What the failure of the component at `position` leads to, counting it toward the
    /// restart limit.
    fn decide(&mut self, position: Position) -> Action {
        if !matches!(self.state, RunState::Running) {
            // The chain is failing or the editor has left: nothing to keep going for.
            return Action::Fail { gave_up: false };
        }
        let is_agent = self.links[self.at(position)].role == Role::Agent;
        let now = self.now;
        let state = &mut self.positions[position];
        state
            .failures
            .retain(|at| now.duration_since(*at) < RESTART_WINDOW);
        state.failures.push(now);
        let action = match state.policy.on_failure {
            OnFailure::Fail => Action::Fail { gave_up: false },
            OnFailure::Bypass => Action::Bypass { gave_up: false },
            OnFailure::Restart { then } if state.failures.len() >= RESTART_LIMIT => match then {
                AfterRestarts::Fail => Action::Fail { gave_up: true },
                AfterRestarts::Bypass => Action::Bypass { gave_up: true },
            },
            OnFailure::Restart { .. } => Action::Restart {
                after: restart_backoff(state.failures.len()),
            },
        };
        match action {
            // There is nothing behind the agent to flow to (the configuration refuses it).
            Action::Bypass { gave_up } if is_agent => Action::Fail { gave_up },
            action => action,
        }
    }

    /// Under `fail`: every request the editor is waiting on, and every other request still
    /// waiting anywhere, is answered with the failure; the chain is down.
    fn fail_chain(
        &mut self,
        link: LinkId,
        position: Position,
        message: String,
        data: Box<RawValue>,
    ) {
        self.ending(message.clone());
        self.answer_requests_sent_to(link, &message, &data);
        self.answer_editor_requests(error_code::COMPONENT_FAILED, &message, Some(&data));
        let waiting = self.take_pending(|_| true);
        self.answer_each(waiting, &message, &data);
        self.answer_held(position, &message, &data);
        self.state = match std::mem::replace(&mut self.state, RunState::Finished(Finish::Failed)) {
            RunState::Running => RunState::Failed(Failure {
                message,
                data,
                ends_at: None,
            }),
            // A second component failing (under `serve` out of files, every one of a chain
            // can fail to start at once) changes nothing: the editor is still to hear of the
            // first.
            RunState::Failed(first) => RunState::Failed(first),
            _ => RunState::Finished(Finish::Failed),
        };
    }

    /// The `initialize` requests passed on to `link` and not answered yet.
    fn take_initialize_requests(&mut self, link: LinkId) -> Vec<Pending> {
        self.links[link].pending.take_where(|p| {
            &*p.method == "initialize"
                && matches!(p.purpose, Purpose::Relay | Purpose::ProxyInitialize { .. })
        })
    }

    /// Answers every request the conductor sent on `link` and still waits for.
    fn answer_requests_sent_to(&mut self, link: LinkId, message: &str, data: &RawValue) {
        let waiting = self.links[link].pending.take_all();
        self.answer_each(waiting, message, data);
    }

    /// Answers each of `waiting` on the link it came from: an agent's MCP call through the
    /// bridge, a proxy's request to the editor, the editor's own.
    pub(super) fn answer_each(&mut self, waiting: Vec<Pending>, message: &str, data: &RawValue) {
        for p in waiting {
            match p.purpose {
                Purpose::Bridge(_) => self.fail_bridge_request(p, message),
                // Sent by the conductor itself: nobody waits for it.
                Purpose::Reinitialize => {}
                _ => self.reply_error(
                    p.origin,
                    &p.origin_id,
                    error_code::COMPONENT_FAILED,
                    message,
                    Some(data),
                ),
            }
        }
    }

    /// Senders paused because `link`'s queue was full go on: that queue is gone.
    pub(super) fn release_senders_paused_by(&mut self, link: LinkId) {
        for sender in std::mem::take(&mut self.links[link].paused_senders) {
            self.outputs.push(Output::Resume(sender));
        }
    }

    /// Tells the editor which component failed and what was done, once it is initialized.
    fn announce_failure(&mut self, data: &RawValue) {
        if !self.editor_initialized {
            return;
        }
        let editor = self.editor();
        let mut out = Vec::with_capacity(data.get().len() + 80);
        encode::call(
            &mut out,
            None,
            encode::Call::Plain {
                method: FAILED_NOTIFICATION,
                params: Some(data),
            },
        );
        self.queue(editor, Bytes::from(out), editor);
    }

    /// Removes and returns the requests still waiting, on any link, that `which` selects.
    pub(super) fn take_pending(&mut self, mut which: impl FnMut(&Pending) -> bool) -> Vec<Pending> {
        let mut taken = Vec::new();
        for l in self.links.iter_mut() {
            taken.extend(l.pending.take_where(&mut which));
        }
        taken
    }

    /// Answers every request the editor is still waiting on with the same error.
    pub(super) fn answer_editor_requests(
        &mut self,
        code: i64,
        message: &str,
        data: Option<&RawValue>,
    ) {
        let editor = self.editor();
        let waiting = self.take_pending(|p| p.origin == editor);
        for p in waiting {
            self.reply_error(editor, &p.origin_id, code, message, data);
        }
        self.answer_held_from(editor, code, message, data);
        self.answer_requests_waiting_on_shims(0, code, message, data);
    }
}

/// How long a component under `restart` waits before its `failures`-th start in the window:
/// a crash loop must not spin.
pub(super) fn restart_backoff(failures: usize) -> Duration {
    let exponent = failures.saturating_sub(1).min(4) as u32;
    Duration::from_millis(250 * 4u64.pow(exponent)).min(Duration::from_secs(5))
}

/// The error message: the component, how it ended, and what was done.
fn describe(role: Role, name: &str, reason: &str, action: Action) -> String {
    let noun = role.noun();
    let done = match action {
        Action::Fail { gave_up: false } => String::new(),
        Action::Fail { gave_up: true } => format!(
            "; it failed {RESTART_LIMIT} times within {} s, so the chain stopped",
            RESTART_WINDOW.as_secs()
        ),
        Action::Bypass { gave_up } => {
            let why = if gave_up {
                format!(
                    " after failing {RESTART_LIMIT} times within {} s",
                    RESTART_WINDOW.as_secs()
                )
            } else {
                String::new()
            };
            format!("; it was taken out of the chain{why}, and traffic now flows around it")
        }
        Action::Restart { .. } if role == Role::Agent => {
            "; restarting it (its sessions are lost: start or load a session again)".to_string()
        }
        Action::Restart { .. } => "; restarting it".to_string(),
    };
    format!("{noun} `{name}` {reason}{done}")
}

/// The `data` of the error and of the notification: what failed, how, and what was done.
fn failure_data(name: &str, ending: &Ending, action: Action) -> Box<RawValue> {
    let status = match ending.status {
        Some(ExitStatus::Code(code)) => serde_json::json!({ "code": code }),
        Some(ExitStatus::Signal(signal)) => serde_json::json!({ "signal": signal }),
        None => serde_json::Value::Null,
    };
    let data = serde_json::json!({
        "component": name,
        "reason": ending.reason,
        "exitStatus": status,
        "stderr": ending.stderr,
        "action": action.name(),
    });
    RawValue::from_string(data.to_string()).expect("json! is valid JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_back_off_and_are_capped() {
        let waits: Vec<u64> = (1..=7)
            .map(|n| restart_backoff(n).as_millis() as u64)
            .collect();
        assert_eq!(waits, [250, 1000, 4000, 5000, 5000, 5000, 5000]);
    }

    #[test]
    fn messages_name_the_component_and_what_was_done() {
        let reason = "exited with status 1";
        let restart = Action::Restart {
            after: Duration::ZERO,
        };
        assert_eq!(
            describe(
                Role::Proxy,
                "guard",
                reason,
                Action::Fail { gave_up: false }
            ),
            "proxy `guard` exited with status 1"
        );
        assert_eq!(
            describe(Role::Proxy, "guard", reason, restart),
            "proxy `guard` exited with status 1; restarting it"
        );
        assert_eq!(
            describe(Role::Agent, "claude", reason, restart),
            "agent `claude` exited with status 1; restarting it (its sessions are lost: start \
             or load a session again)"
        );
        assert_eq!(
            describe(Role::Proxy, "g", reason, Action::Bypass { gave_up: true }),
            "proxy `g` exited with status 1; it was taken out of the chain after failing 3 \
             times within 60 s, and traffic now flows around it"
        );
        assert_eq!(
            describe(Role::Proxy, "g", reason, Action::Fail { gave_up: true }),
            "proxy `g` exited with status 1; it failed 3 times within 60 s, so the chain stopped"
        );
    }

    #[test]
    fn data_carries_the_exit_status_and_stderr() {
        let ending = Ending {
            reason: "was killed by signal 9".into(),
            status: Some(ExitStatus::Signal(9)),
            stderr: vec!["panicked".into()],
        };
        let data = failure_data("p", &ending, Action::Bypass { gave_up: false });
        assert_eq!(
            data.get(),
            r#"{"component":"p","reason":"was killed by signal 9","exitStatus":{"signal":9},"stderr":["panicked"],"action":"bypass"}"#
        );
    }
}
