//! What cannot be routed: lines that are not JSON-RPC, and lines too long to read. The sender
//! gets an error it can match to its request; a broken response answers whoever asked.

use acp_wire::error_code;
use acp_wire::{Invalid, RawValue};

use super::{Components, Router};
use crate::link::LinkId;

impl<C: Components> Router<C> {
    pub(super) fn on_invalid(&mut self, link: LinkId, invalid: Invalid<'_>) {
        let name = self.links[link].name.clone();
        tracing::warn!(component = %name, error = %invalid, "invalid message");
        // A broken response to one of our requests must still answer whoever asked.
        if let Invalid::NotJsonRpc { id: Some(id), .. } = &invalid
            && link != self.editor()
            && let Some(entry) = self.links[link].pending.complete_raw(id)
        {
            let message = format!(
                "{} `{}` sent an invalid response: {invalid}",
                self.links[link].role.noun(),
                name
            );
            let code = error_code::INTERNAL_ERROR;
            self.reply_error(entry.origin, &entry.origin_id, code, &message, None);
            return;
        }
        let message = invalid.to_string();
        self.reply_error(link, invalid.reply_id(), invalid.code(), &message, None);
    }

    /// A line over `max_line` was dropped unread. If its head shows a request id, that request
    /// is answered; if it was a response to one of ours, whoever asked gets the error instead.
    pub(super) fn on_oversized(&mut self, link: LinkId, error: acp_wire::FrameError) {
        let acp_wire::FrameError::TooLong { head, .. } = &error;
        let peek = acp_wire::envelope::peek_id(head);
        let name = self.links[link].name.clone();
        tracing::warn!(component = %name, %error, id = ?peek.id, "message dropped");
        let id = peek.id.as_deref().unwrap_or("null");
        if !peek.method
            && let Some(raw) = peek
                .id
                .as_deref()
                .and_then(|t| serde_json::from_str::<&RawValue>(t).ok())
            && let Some(entry) = self.links[link].pending.complete_raw(raw)
        {
            let message = format!(
                "{} `{}` sent a response that was too large: {error}",
                self.links[link].role.noun(),
                name
            );
            let code = error_code::INTERNAL_ERROR;
            self.reply_error(entry.origin, &entry.origin_id, code, &message, None);
            return;
        }
        let message = format!("message dropped: {error}");
        self.reply_error(link, id, error_code::INVALID_REQUEST, &message, None);
    }
}
