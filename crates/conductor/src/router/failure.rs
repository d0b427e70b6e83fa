//! What the end of a component means: the one place that decides a component is gone and
//! answers every request that was waiting on it, so that no request is left unanswered.
//!
//! A component is gone when its exit is reported, when its writer stalls, or shortly after it
//! closed its output or stopped taking input (the grace lets the exit report arrive first, so
//! the error can say how it ended). Today every component failure takes the chain down.

use std::time::Duration;

use acp_wire::RawValue;
use acp_wire::error_code;
use tokio::time::Instant;

use super::pending::{Pending, Purpose};
use super::{Components, Failure, Finish, Role, Router, RunState, Timer};
use crate::link::LinkId;

/// How long a component may leave its output closed before it counts as gone even if its
/// process has not been reaped yet.
const CLOSED_OUTPUT_GRACE: Duration = Duration::from_millis(500);

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
            self.state = RunState::Finished(self.finish_kind());
        } else if stalled {
            self.component_gone(link, reason, Vec::new());
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
        let at = Instant::now() + CLOSED_OUTPUT_GRACE;
        self.timers.push((at, Timer::ExpectExit { link, reason }));
    }

    /// The component behind `link` is gone: every request waiting on it, and every request
    /// the editor is waiting on, is answered with an error naming it; the chain is down.
    pub(super) fn component_gone(
        &mut self,
        link: LinkId,
        reason: String,
        stderr_tail: Vec<String>,
    ) {
        let l = &mut self.links[link];
        if !l.alive {
            return;
        }
        l.alive = false;
        let message = format!("{} `{}` {reason}", l.role.noun(), l.name);
        let data =
            serde_json::json!({ "component": l.name, "reason": reason, "stderr": stderr_tail });
        let data = RawValue::from_string(data.to_string()).expect("json! is valid JSON");
        if matches!(self.state, RunState::Finished(_)) {
            tracing::debug!("{message}");
            return;
        }
        tracing::error!(stderr = ?stderr_tail, "{message}");
        self.answer_editor_requests(error_code::COMPONENT_FAILED, &message, Some(&data));
        let waiting = self.take_pending(|_| true);
        // Every other request still waiting is answered too: an agent's MCP call, a
        // proxy's request to the editor.
        for p in waiting {
            if let Purpose::Bridge(_) = p.purpose {
                self.fail_bridge_request(p, &message);
            } else if self.links[p.origin].alive {
                self.reply_error(
                    p.origin,
                    &p.origin_id,
                    error_code::COMPONENT_FAILED,
                    &message,
                    Some(&data),
                );
            }
        }
        self.state = match self.state {
            RunState::Running => RunState::Failed(Failure { message, data }),
            _ => RunState::Finished(Finish::Failed),
        };
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
    }
}
