//! What one side of a fuzzed run may be answered with: the id of every message it sent that
//! deserves an answer, kept as exact text, each to be matched by one response at most.
//!
//! An id is `certain` when the router must answer that message to its sender (a request, a
//! broken call, a broken line from the editor with no id), and merely possible when the answer
//! may rightly go elsewhere (a broken or too-long line whose shape does not say whether it was
//! a response to one of the router's own requests). The rules are `router/bad_input.rs`'s.

use acp_wire::frame::TopLevel;
use acp_wire::{Envelope, Shape, parse};

/// The ids a side may still be answered with, one entry per message sent.
#[derive(Debug, Default)]
pub struct Ledger {
    open: Vec<Expected>,
}

#[derive(Debug)]
struct Expected {
    id: String,
    certain: bool,
}

impl Ledger {
    /// Records what `message`, sent by this side, may be answered with, if anything.
    /// `from_editor`: a broken line from the editor is always answered to the editor.
    pub fn sent(&mut self, message: &[u8], max_line: usize, from_editor: bool) {
        if let Some(expected) = expected_answer(message, max_line, from_editor) {
            self.open.push(expected);
        }
    }

    /// A response with `id` arrived: it must answer a message still open, and closes it.
    /// A certain entry is closed before a possible one, so that no answer that may rightly
    /// have gone elsewhere is ever counted as missing.
    ///
    /// # Panics
    /// When nothing sent with that id is still waiting: an answer to nothing, or a second one.
    pub fn answered(&mut self, id: &str, side: &str) {
        let at = self
            .open
            .iter()
            .position(|e| e.id == id && e.certain)
            .or_else(|| self.open.iter().position(|e| e.id == id));
        match at {
            Some(at) => {
                self.open.remove(at);
            }
            None => panic!("{side} got a response with id {id} that answers nothing it sent"),
        }
    }

    /// The ids of messages that had to be answered and were not.
    pub fn unanswered(&self) -> Vec<&str> {
        self.open
            .iter()
            .filter(|e| e.certain)
            .map(|e| e.id.as_str())
            .collect()
    }
}

/// The answer the router owes `message` as a link delivers it: a message over the limit is
/// judged by what a scan of its top level shows, others become one line first.
fn expected_answer(message: &[u8], max_line: usize, from_editor: bool) -> Option<Expected> {
    if message.len() > max_line {
        let seen = TopLevel::of(message);
        let shape = seen.shape();
        return unreadable(seen.id, shape, from_editor);
    }
    let line = one_line(message)?;
    match parse(&line) {
        Ok(Envelope::Request { id, .. }) => Some(Expected {
            id: id.get().to_string(),
            certain: true,
        }),
        Ok(Envelope::Notification { .. } | Envelope::Response { .. }) => None,
        Err(invalid) => unreadable(
            invalid.id().map(str::to_string),
            invalid.shape(),
            from_editor,
        ),
    }
}

/// What a line that cannot be read as a message is answered with: a response never is; a call
/// is, by its id; a component's line with no id is not; a line of unknown shape with an id may
/// be a response to one of the router's requests (then whoever asked is answered instead).
fn unreadable(id: Option<String>, shape: Shape, from_editor: bool) -> Option<Expected> {
    match (shape, id) {
        (Shape::Response, _) => None,
        (_, None) if !from_editor => None,
        (Shape::Call, id) => Some(Expected {
            id: id.unwrap_or_else(|| "null".to_string()),
            certain: true,
        }),
        (Shape::Unknown, None) => Some(Expected {
            id: "null".to_string(),
            certain: true,
        }),
        (Shape::Unknown, Some(id)) => Some(Expected { id, certain: false }),
    }
}

/// A message as an in-memory link turns it into one line (`link::reader`): trailing line
/// breaks and blanks dropped, inner line breaks made spaces; `None` when blank.
fn one_line(message: &[u8]) -> Option<Vec<u8>> {
    let end = message
        .iter()
        .rposition(|b| !matches!(b, b'\n' | b'\r' | b' ' | b'\t'))?;
    Some(
        message[..=end]
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_answered_once() {
        let mut ledger = Ledger::default();
        ledger.sent(br#"{"jsonrpc":"2.0","id":"a","method":"m"}"#, 600, true);
        ledger.sent(br#"{"jsonrpc":"2.0","method":"n"}"#, 600, true);
        assert_eq!(ledger.unanswered(), [r#""a""#]);
        ledger.answered(r#""a""#, "editor");
        assert!(ledger.unanswered().is_empty());
        let again = std::panic::catch_unwind(move || ledger.answered(r#""a""#, "editor"));
        assert!(again.is_err(), "a second answer is caught");
    }

    #[test]
    fn broken_and_too_long_lines_are_answered_by_what_can_be_read_of_them() {
        let mut ledger = Ledger::default();
        ledger.sent(br#"{"id":3,"method":"m"}"#, 600, true);
        ledger.sent(b"{not json\r\n", 600, true);
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":9,"result":"{}"}}"#,
            "x".repeat(700)
        );
        ledger.sent(long.as_bytes(), 600, true);
        ledger.sent(br#"{"id":4,"params":"#, 600, false);
        ledger.sent(b"a banner", 600, false);
        assert_eq!(
            ledger.unanswered(),
            ["3", "null"],
            "a response is never answered; 4 may answer a request the router sent"
        );
        ledger.answered("4", "agent");
        ledger.answered("3", "editor");
        ledger.answered("null", "editor");
        assert!(ledger.unanswered().is_empty());
    }
}
