//! An incremental scan of the top level of one JSON object, fed a line in pieces of any size:
//! finds the top-level `id` and which envelope members appear, keeping none of the line.
//!
//! Used where a line cannot be parsed whole: a line over `max_line`, fed chunk by chunk as it
//! is discarded, and a line that is not valid JSON or not UTF-8, so that whoever sent it can
//! still be answered with an id they can match. The scan tracks only nesting depth, strings
//! and escapes; it validates nothing beyond what it needs, and stops at the first byte that
//! cannot continue a JSON object (keeping what it found before it).
//!
//! Member names are compared decoded: `"\u0069d"` is `id`. A name longer than any envelope
//! member, or one with a character outside ASCII, is some other member.

use crate::envelope::Shape;

/// The longest top-level `id` kept, in bytes of JSON text: a longer one counts as no id.
pub const MAX_ID_BYTES: usize = 4096;

/// What the top level of a message showed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopLevel {
    /// The top-level `id` as its JSON text: a string or a number, seen whole (its end was
    /// read), at most [`MAX_ID_BYTES`], and the only `id` member seen. `None` otherwise.
    pub id: Option<String>,
    /// A top-level `method` member appeared.
    pub method: bool,
    /// A top-level `result` or `error` member appeared.
    pub outcome: bool,
}

impl TopLevel {
    /// Scans one whole line at once.
    pub fn of(line: &[u8]) -> TopLevel {
        let mut scan = TopLevelScan::new();
        scan.feed(line);
        scan.finish()
    }

    /// Whether the message was a request or notification, a response, or cannot be told.
    pub fn shape(&self) -> Shape {
        if self.method {
            Shape::Call
        } else if self.outcome {
            Shape::Response
        } else {
            Shape::Unknown
        }
    }
}

/// Where the scan is in the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the opening `{` (whitespace and a leading byte-order mark allowed).
    Start,
    /// After `{` or `,`: a member name or `}` comes next.
    BeforeKey,
    /// Inside a member name.
    Key,
    /// After a `\` in a member name.
    KeyEscape,
    /// In the hex digits of a `\uXXXX` in a member name: how many were read.
    KeyUnicode(u8),
    /// After a member name: `:` comes next.
    AfterKey,
    /// After `:`: the value comes next.
    BeforeValue,
    /// Inside a string that is a top-level member's value.
    Str,
    /// After a `\` in such a string.
    StrEscape,
    /// Inside an object or array value, `depth` levels deep.
    Nested,
    /// Inside a string within a nested value.
    NestedStr,
    /// After a `\` in a string within a nested value.
    NestedStrEscape,
    /// Inside a number or literal value.
    Scalar,
    /// After a value: `,` or `}` comes next.
    AfterValue,
    /// After the closing `}`: the rest is ignored.
    Closed,
    /// A byte that cannot continue a JSON object: the rest is ignored.
    Stopped,
}

/// Which top-level member the value being read belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Method,
    Outcome,
    Other,
}

/// The longest member name the scan tells apart (`method`, `result`); longer is `Other`.
const KEY_CAP: usize = 6;

/// The scan of one line in progress. Feed it every byte of the line, in order, then
/// [`finish`](Self::finish) it; the bytes need not arrive in any particular pieces.
///
/// ```
/// use acp_wire::frame::TopLevelScan;
/// let mut scan = TopLevelScan::new();
/// scan.feed(br#"{"params":{"text":"a long pro"#);
/// scan.feed(br#"mpt"},"method":"session/prompt","id":41}"#);
/// let seen = scan.finish();
/// assert_eq!(seen.id.as_deref(), Some("41"));
/// assert!(seen.method);
/// ```
#[derive(Debug, Clone)]
pub struct TopLevelScan {
    state: State,
    /// How many bytes of a leading byte-order mark were matched.
    bom: u8,
    /// Nesting depth inside a top-level value (`Nested` states).
    depth: usize,
    /// The member name being read, decoded; `None` once it cannot be an envelope member.
    key: Option<([u8; KEY_CAP], usize)>,
    /// The code point of a `\uXXXX` escape being read in a member name.
    unicode: u32,
    member: Member,
    /// The JSON text of the `id` value being read; `None` when it is too long or not a
    /// string or number.
    id_text: Option<Vec<u8>>,
    /// How many `id` members were seen (more than one is ambiguous).
    ids: usize,
    seen: TopLevel,
}

impl Default for TopLevelScan {
    fn default() -> Self {
        Self::new()
    }
}

impl TopLevelScan {
    pub fn new() -> TopLevelScan {
        TopLevelScan {
            state: State::Start,
            bom: 0,
            depth: 0,
            key: None,
            unicode: 0,
            member: Member::Other,
            id_text: None,
            ids: 0,
            seen: TopLevel::default(),
        }
    }

    /// Scans the next bytes of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                State::Closed | State::Stopped => return,
                // Long stretches of string and nested value skip to the next byte that matters.
                State::Str if self.member != Member::Id => {
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        Some(at) => i += at,
                        None => return,
                    }
                }
                State::NestedStr => match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                    Some(at) => i += at,
                    None => return,
                },
                _ => {}
            }
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// What the scan found in the bytes fed so far, which end the line.
    pub fn finish(self) -> TopLevel {
        let mut seen = self.seen;
        if self.ids != 1 {
            seen.id = None;
        }
        seen
    }

    fn byte(&mut self, b: u8) {
        match self.state {
            State::Start => self.start(b),
            State::BeforeKey => match b {
                b'"' => {
                    self.key = Some(([0; KEY_CAP], 0));
                    self.state = State::Key;
                }
                b'}' => self.state = State::Closed,
                _ if is_ws(b) => {}
                _ => self.state = State::Stopped,
            },
            State::Key => match b {
                b'"' => self.state = State::AfterKey,
                b'\\' => self.state = State::KeyEscape,
                _ => self.key_char(u32::from(b)),
            },
            State::KeyEscape => {
                let decoded = match b {
                    b'"' | b'\\' | b'/' => b,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        self.unicode = 0;
                        self.state = State::KeyUnicode(0);
                        return;
                    }
                    _ => {
                        self.state = State::Stopped;
                        return;
                    }
                };
                self.key_char(u32::from(decoded));
                self.state = State::Key;
            }
            State::KeyUnicode(n) => {
                let Some(digit) = char::from(b).to_digit(16) else {
                    self.state = State::Stopped;
                    return;
                };
                self.unicode = self.unicode * 16 + digit;
                if n == 3 {
                    self.key_char(self.unicode);
                    self.state = State::Key;
                } else {
                    self.state = State::KeyUnicode(n + 1);
                }
            }
            State::AfterKey => match b {
                b':' => {
                    self.member = self.member_of_key();
                    match self.member {
                        Member::Id => self.ids += 1,
                        Member::Method => self.seen.method = true,
                        Member::Outcome => self.seen.outcome = true,
                        Member::Other => {}
                    }
                    self.state = State::BeforeValue;
                }
                _ if is_ws(b) => {}
                _ => self.state = State::Stopped,
            },
            State::BeforeValue => match b {
                _ if is_ws(b) => {}
                b'"' => {
                    self.capture_start(b);
                    self.state = State::Str;
                }
                b'{' | b'[' => {
                    self.depth = 1;
                    self.state = State::Nested;
                }
                b'-' | b'0'..=b'9' => {
                    self.capture_start(b);
                    self.state = State::Scalar;
                }
                b't' | b'f' | b'n' => self.state = State::Scalar,
                _ => self.state = State::Stopped,
            },
            State::Str => {
                self.capture(b);
                match b {
                    b'"' => self.value_end(),
                    b'\\' => self.state = State::StrEscape,
                    _ => {}
                }
            }
            State::StrEscape => {
                self.capture(b);
                self.state = State::Str;
            }
            State::Nested => match b {
                b'"' => self.state = State::NestedStr,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.value_end();
                    }
                }
                _ => {}
            },
            State::NestedStr => match b {
                b'"' => self.state = State::Nested,
                b'\\' => self.state = State::NestedStrEscape,
                _ => {}
            },
            State::NestedStrEscape => self.state = State::NestedStr,
            State::Scalar => match b {
                b',' | b'}' => {
                    self.value_end();
                    self.byte(b);
                }
                _ if is_ws(b) => self.value_end(),
                _ => self.capture(b),
            },
            State::AfterValue => match b {
                b',' => self.state = State::BeforeKey,
                b'}' => self.state = State::Closed,
                _ if is_ws(b) => {}
                _ => self.state = State::Stopped,
            },
            State::Closed | State::Stopped => {}
        }
    }

    /// An optional byte-order mark, whitespace, then `{`. (`bom` counts the mark's bytes
    /// matched; whitespace sets it to 3, as a mark may only open the line.)
    fn start(&mut self, b: u8) {
        const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
        if self.bom < 3 && b == BOM[usize::from(self.bom)] {
            self.bom += 1;
            return;
        }
        if self.bom != 0 && self.bom != 3 {
            self.state = State::Stopped;
            return;
        }
        match b {
            b'{' => self.state = State::BeforeKey,
            _ if is_ws(b) => self.bom = 3,
            _ => self.state = State::Stopped,
        }
    }

    fn key_char(&mut self, c: u32) {
        if let Some((buf, len)) = &mut self.key {
            match u8::try_from(c) {
                Ok(b) if b.is_ascii() && *len < KEY_CAP => {
                    buf[*len] = b;
                    *len += 1;
                }
                _ => self.key = None,
            }
        }
    }

    fn member_of_key(&self) -> Member {
        match self.key.as_ref().map(|(buf, len)| &buf[..*len]) {
            Some(b"id") => Member::Id,
            Some(b"method") => Member::Method,
            Some(b"result" | b"error") => Member::Outcome,
            _ => Member::Other,
        }
    }

    fn capture_start(&mut self, b: u8) {
        if self.member == Member::Id {
            self.id_text = Some(vec![b]);
        }
    }

    fn capture(&mut self, b: u8) {
        if self.member != Member::Id {
            return;
        }
        if let Some(text) = &mut self.id_text {
            if text.len() < MAX_ID_BYTES {
                text.push(b);
            } else {
                self.id_text = None;
            }
        }
    }

    /// The end of a top-level member's value.
    fn value_end(&mut self) {
        if self.member == Member::Id {
            self.seen.id = self
                .id_text
                .take()
                .and_then(|text| String::from_utf8(text).ok())
                .filter(|text| is_id_text(text));
        }
        self.member = Member::Other;
        self.state = State::AfterValue;
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// A whole JSON string or number.
fn is_id_text(text: &str) -> bool {
    matches!(text.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9'))
        && serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok()
}

#[cfg(test)]
mod tests;
