//! A stream cursor (RFD "Durable & Resumable HTTP/WS Transport"): the position of one message
//! `serve` sent, written as the SSE `id` and read back from `Last-Event-ID`. Pure: no I/O.
//!
//! A cursor is a decimal integer, unique within a connection and increasing along each of
//! its streams; the first message is `1`, and `0` names the position before any message (a
//! client that received nothing yet). Clients should treat it as opaque, as the RFD says.

use std::fmt;

/// The position just after the message of that number, on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cursor(pub u64);

impl Cursor {
    /// Before any message.
    pub const START: Cursor = Cursor(0);

    /// The cursor of the message after this one.
    pub fn next(self) -> Cursor {
        Cursor(self.0 + 1)
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Why a `Last-Event-ID` is not a cursor `serve` could have written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("Last-Event-ID is empty")]
    Empty,
    #[error("Last-Event-ID must be a decimal number without sign, spaces or leading zeros")]
    NotDecimal,
    #[error("Last-Event-ID is larger than any cursor")]
    TooLarge,
}

impl Cursor {
    /// Reads a `Last-Event-ID` value exactly as `serve` writes cursors: ASCII digits, no
    /// sign, no surrounding space, no leading zero (so each cursor has one spelling).
    pub fn parse(text: &[u8]) -> Result<Cursor, CursorError> {
        if text.is_empty() {
            return Err(CursorError::Empty);
        }
        if !text.iter().all(u8::is_ascii_digit) || (text.len() > 1 && text[0] == b'0') {
            return Err(CursorError::NotDecimal);
        }
        let mut value: u64 = 0;
        for digit in text {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(digit - b'0')))
                .ok_or(CursorError::TooLarge)?;
        }
        Ok(Cursor(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cursor_written_reads_back() {
        for value in [0, 1, 9, 10, 99, 12345, u64::MAX - 1, u64::MAX] {
            let written = Cursor(value).to_string();
            assert_eq!(Cursor::parse(written.as_bytes()), Ok(Cursor(value)));
        }
    }

    #[test]
    fn malformed_values_are_refused_with_their_reason() {
        let cases: &[(&[u8], CursorError)] = &[
            (b"", CursorError::Empty),
            (b" ", CursorError::NotDecimal),
            (b" 1", CursorError::NotDecimal),
            (b"1 ", CursorError::NotDecimal),
            (b"+1", CursorError::NotDecimal),
            (b"-1", CursorError::NotDecimal),
            (b"01", CursorError::NotDecimal),
            (b"00", CursorError::NotDecimal),
            (b"1.0", CursorError::NotDecimal),
            (b"1e3", CursorError::NotDecimal),
            (b"0x10", CursorError::NotDecimal),
            (b"abc", CursorError::NotDecimal),
            (b"1,2", CursorError::NotDecimal),
            (b"\xd9\xa1", CursorError::NotDecimal), // Arabic-Indic one: not ASCII
            (b"\x00", CursorError::NotDecimal),
            (b"18446744073709551616", CursorError::TooLarge),
            (b"99999999999999999999999", CursorError::TooLarge),
        ];
        for (text, error) in cases {
            assert_eq!(Cursor::parse(text), Err(error.clone()), "{text:?}");
        }
    }

    #[test]
    fn every_single_byte_other_than_a_digit_is_refused() {
        for byte in 0..=u8::MAX {
            let parsed = Cursor::parse(&[byte]);
            if byte.is_ascii_digit() {
                assert_eq!(parsed, Ok(Cursor(u64::from(byte - b'0'))));
            } else {
                assert_eq!(parsed, Err(CursorError::NotDecimal), "byte {byte}");
            }
        }
    }
}
