//! What cannot be routed: lines that are not JSON-RPC, lines too long to read, and responses
//! that answer nothing. A request gets an error it can match; a response is never answered.
//!
//! A broken line is answered on its link, with its id when one could be read, unless it meant
//! to be a response (no `method`, a `result` or an `error`). A broken line that may be a
//! response (no `method`) and names a request the conductor sent on that link answers that
//! request's origin instead. A component's broken line with no id (a banner, a stray print) is
//! only logged: an error with `"id": null` written to its stdin would be for no one. The
//! editor's still gets one, as JSON-RPC asks. Everything here is counted in [`Skipped`].
//!
//! [`Skipped`]: super::skipped::Skipped

use acp_wire::frame::FrameError;
use acp_wire::{Invalid, Outcome, RawValue, Shape, error_code};

use super::failure::Ending;
use super::pending::Purpose;
use super::skipped::Skip;
use super::{Components, Role, Router};
use crate::link::LinkId;

/// What is known of a line the router could not read as a message.
struct Unreadable<'a> {
    /// The id it carried, as JSON text.
    id: Option<&'a str>,
    shape: Shape,
    /// The error code its sender gets, when it is answered.
    code: i64,
    /// What is wrong with it.
    problem: String,
    /// What its sender is told, when it is answered.
    answer: String,
    /// How a broken response is described to whoever asked: "sent ..." .
    as_response: &'static str,
}

impl<C: Components> Router<C> {
    pub(super) fn on_invalid(&mut self, link: LinkId, invalid: Invalid<'_>) {
        self.skipped.count(Skip::InvalidLine);
        self.unreadable(
            link,
            Unreadable {
                id: invalid.id(),
                shape: invalid.shape(),
                code: invalid.code(),
                problem: invalid.to_string(),
                answer: invalid.to_string(),
                as_response: "sent an invalid response",
            },
        );
    }

    /// A line over `max_line` was dropped unread; its top level was scanned on the way.
    pub(super) fn on_oversized(&mut self, link: LinkId, error: FrameError) {
        let FrameError::TooLong { seen, .. } = &error;
        self.skipped.count(Skip::TooLongLine);
        self.unreadable(
            link,
            Unreadable {
                id: seen.id.as_deref(),
                shape: seen.shape(),
                code: error_code::INVALID_REQUEST,
                problem: error.to_string(),
                answer: format!("message dropped: {error}"),
                as_response: "sent a response that was too large",
            },
        );
    }

    fn unreadable(&mut self, link: LinkId, line: Unreadable<'_>) {
        let name = self.links[link].name.clone();
        let raw = line
            .id
            .and_then(|text| serde_json::from_str::<&RawValue>(text).ok());
        if line.shape != Shape::Call
            && let Some(raw) = raw
            && let Some(entry) = self.links[link].pending.complete_raw(raw)
        {
            tracing::warn!(component = %name, id = line.id, problem = %line.problem, "unreadable response; answering whoever asked");
            let message = format!(
                "{} `{}` {}: {}",
                self.links[link].role.noun(),
                name,
                line.as_response,
                line.problem
            );
            match entry.purpose {
                // The bridge asked for a shim: it answers the shim in MCP's terms.
                Purpose::Bridge(_) => self.fail_bridge_request(entry, &message),
                // Nobody waits for this one but the conductor: the new instance is broken.
                Purpose::Reinitialize => self.component_gone(link, Ending::because(message)),
                _ => {
                    let code = error_code::INTERNAL_ERROR;
                    self.reply_error(entry.origin, &entry.origin_id, code, &message, None);
                }
            }
            return;
        }
        if line.shape == Shape::Response {
            tracing::warn!(component = %name, id = line.id, problem = %line.problem, "unreadable response to no request waiting; dropped");
            return;
        }
        if line.id.is_none() && self.links[link].role != Role::Editor {
            tracing::warn!(component = %name, problem = %line.problem, "line with no id to answer; skipped");
            return;
        }
        tracing::warn!(component = %name, id = line.id, problem = %line.problem, "invalid message; answered");
        let id = line.id.unwrap_or("null");
        self.reply_error(link, id, line.code, &line.answer, None);
    }

    /// A well-formed response whose id the conductor is not waiting on, on `link`: it answers a
    /// request a second time, or one never sent. Dropped, logged and counted.
    pub(super) fn on_unmatched_response(
        &mut self,
        link: LinkId,
        id: &RawValue,
        outcome: Outcome<'_>,
    ) {
        let l = &self.links[link];
        let issued = acp_wire::id::own_id(id).is_some_and(|n| l.pending.issued(n));
        let (skip, what) = if issued {
            let what = "response to a request already answered; dropped";
            (Skip::DuplicateResponse, what)
        } else {
            (
                Skip::UnknownResponse,
                "response to no request sent; dropped",
            )
        };
        match outcome {
            Outcome::Error(error) => {
                tracing::warn!(component = %l.name, id = id.get(), error = error.get(), "{what}")
            }
            Outcome::Result(_) => tracing::warn!(component = %l.name, id = id.get(), "{what}"),
        }
        self.skipped.count(skip);
    }
}
