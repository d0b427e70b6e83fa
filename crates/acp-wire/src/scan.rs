//! One validating pass over a frame: UTF-8 and the JSON grammar checked together, the
//! envelope's members (and those of an object `params`) found on the way. Knows no methods.
//!
//! It accepts exactly what `serde_json` accepts, or less: anything it is not sure it reads
//! the same way (an escaped member name in the envelope, a repeated envelope member, deep
//! nesting) and every error is left to the serde path of [`crate::envelope`], which then
//! answers exactly as before. So a valid frame costs one pass over its bytes instead of two
//! (`from_utf8`, then serde), and a `proxy/successor`'s wrapped members need no third.

use serde_json::value::RawValue;

/// Nesting this deep is left to serde_json, whose own limit (128) is then the one that holds.
const MAX_DEPTH: u32 = 64;

/// A span of the line: start and end byte.
type Span = (usize, usize);

/// The envelope members of a frame, each as the span of its raw value.
#[derive(Debug, Default)]
pub(crate) struct EnvelopeSpans {
    pub(crate) jsonrpc: Option<Span>,
    pub(crate) id: Option<Span>,
    pub(crate) method: Option<Span>,
    pub(crate) params: Option<Span>,
    pub(crate) result: Option<Span>,
    pub(crate) error: Option<Span>,
}

/// The members of an object `params` that a `proxy/successor` wrapper has; `None` when
/// `params` is not an object or one of its member names has an escape (then
/// [`crate::successor`] reads them itself).
#[derive(Debug, Default)]
pub(crate) struct WrapperSpans {
    pub(crate) method: Option<Span>,
    pub(crate) params: Option<Span>,
    pub(crate) meta: Option<Span>,
    pub(crate) underscore_meta: Option<Span>,
    /// One of these names came twice.
    pub(crate) repeated: bool,
}

/// What the pass found in a valid frame.
#[derive(Debug)]
pub(crate) struct Scanned<'a> {
    /// The whole line, proven UTF-8 by the pass.
    pub(crate) text: &'a str,
    pub(crate) envelope: EnvelopeSpans,
    pub(crate) wrapper: Option<WrapperSpans>,
}

impl<'a> Scanned<'a> {
    /// The raw value at `span`.
    pub(crate) fn raw(&self, span: Option<Span>) -> Option<&'a RawValue> {
        span.map(|(start, end)| crate::members::raw(&self.text[start..end]))
    }
}

/// The frame's envelope, if it is one JSON object that serde_json would read to the same
/// members; `None` leaves the frame to serde_json.
pub(crate) fn scan(line: &[u8]) -> Option<Scanned<'_>> {
    let mut s = Scanner { bytes: line, at: 0 };
    let mut envelope = EnvelopeSpans::default();
    let mut wrapper = None;
    s.skip_space();
    s.eat(b'{')?;
    s.skip_space();
    if !s.eat_if(b'}') {
        loop {
            s.skip_space();
            let name = s.member_name()?;
            let slot = match name {
                b"jsonrpc" => Some(&mut envelope.jsonrpc),
                b"id" => Some(&mut envelope.id),
                b"method" => Some(&mut envelope.method),
                b"params" => Some(&mut envelope.params),
                b"result" => Some(&mut envelope.result),
                b"error" => Some(&mut envelope.error),
                _ => None,
            };
            let start = s.at;
            if name == b"params" && s.peek() == Some(b'{') {
                wrapper = s.wrapper_object()?;
            } else {
                s.value(1)?;
            }
            // serde_json refuses a repeated member it reads.
            if let Some(slot) = slot
                && slot.replace((start, s.at)).is_some()
            {
                return None;
            }
            s.skip_space();
            match s.next()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.skip_space();
    if s.at != line.len() {
        return None;
    }
    // Every byte was checked: outside strings only ASCII is valid JSON, inside them each
    // sequence was decoded as UTF-8. Debug builds (and so every test) check it once more.
    debug_assert!(
        std::str::from_utf8(line).is_ok(),
        "the pass let non-UTF-8 through"
    );
    // SAFETY: the pass above accepted only valid UTF-8 (`Scanner::string` checks every run
    // of text beyond ASCII with `from_utf8`; any other byte of 0x80 or above is refused).
    let text = unsafe { std::str::from_utf8_unchecked(line) };
    Some(Scanned {
        text,
        envelope,
        wrapper,
    })
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn eat_if(&mut self, want: u8) -> bool {
        let found = self.peek() == Some(want);
        self.at += usize::from(found);
        found
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// A member name without escapes, then the colon and the space before the value.
    fn member_name(&mut self) -> Option<&'a [u8]> {
        let start = self.at + 1;
        if self.string()? {
            return None;
        }
        let name = &self.bytes[start..self.at - 1];
        self.skip_space();
        self.eat(b':')?;
        self.skip_space();
        Some(name)
    }

    /// An object `params`: its members, and those a `proxy/successor` wrapper has.
    fn wrapper_object(&mut self) -> Option<Option<WrapperSpans>> {
        let mut found = Some(WrapperSpans::default());
        self.at += 1;
        self.skip_space();
        if self.eat_if(b'}') {
            return Some(found);
        }
        loop {
            self.skip_space();
            let start = self.at + 1;
            let escaped = self.string()?;
            let name = &self.bytes[start..self.at - 1];
            self.skip_space();
            self.eat(b':')?;
            self.skip_space();
            let value = self.at;
            self.value(2)?;
            if escaped {
                found = None;
            } else if let Some(spans) = &mut found {
                let slot = match name {
                    b"method" => Some(&mut spans.method),
                    b"params" => Some(&mut spans.params),
                    b"meta" => Some(&mut spans.meta),
                    b"_meta" => Some(&mut spans.underscore_meta),
                    _ => None,
                };
                if let Some(slot) = slot
                    && slot.replace((value, self.at)).is_some()
                {
                    spans.repeated = true;
                }
            }
            self.skip_space();
            match self.next()? {
                b',' => {}
                b'}' => return Some(found),
                _ => return None,
            }
        }
    }

    /// One value at nesting `depth` (the envelope's members are at 1).
    fn value(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn object(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.skip_space();
        if self.eat_if(b'}') {
            return Some(());
        }
        loop {
            self.skip_space();
            if self.peek()? != b'"' {
                return None;
            }
            self.string()?;
            self.skip_space();
            self.eat(b':')?;
            self.skip_space();
            self.value(depth)?;
            self.skip_space();
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.skip_space();
        if self.eat_if(b']') {
            return Some(());
        }
        loop {
            self.skip_space();
            self.value(depth)?;
            self.skip_space();
            match self.next()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)? ([eE] [+-]? [0-9]+)?, as serde_json reads it.
    fn number(&mut self) -> Option<()> {
        self.eat_if(b'-');
        match self.next()? {
            b'0' => {
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return None;
                }
            }
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat_if(b'.') {
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// The string opening at `self.at`; whether it has escapes. Its text must be UTF-8
    /// without control characters, and each escape one JSON knows.
    fn string(&mut self) -> Option<bool> {
        let mut escaped = false;
        self.eat(b'"')?;
        loop {
            self.at = skip::<true>(self.bytes, self.at);
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    self.at += 1;
                    self.escape()?;
                }
                0x80.. => {
                    // Text beyond ASCII: up to the next quote, backslash or control character
                    // (ASCII, so never inside a sequence), checked as `str::from_utf8` does.
                    let end = skip::<false>(self.bytes, self.at);
                    std::str::from_utf8(&self.bytes[self.at..end]).ok()?;
                    self.at = end;
                }
                _ => return None,
            }
        }
    }

    /// After a backslash: one of `"\/bfnrt`, or `u` and four hex digits (any code unit: a
    /// lone surrogate inside a value is what serde_json lets through too).
    fn escape(&mut self) -> Option<()> {
        match self.next()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            b'u' => {
                let end = self.at + 4;
                let hex = self.bytes.get(self.at..end)?;
                self.at = end;
                hex.iter().all(u8::is_ascii_hexdigit).then_some(())
            }
            _ => None,
        }
    }
}

/// The index of the first byte from `at` that ends a run of string text (or the end): a
/// quote, a backslash, a control character and, when `ASCII`, a byte beyond ASCII. Words
/// of eight bytes first, then long runs thirty-two bytes at a time (branch-free tests the
/// compiler turns into vector compares); the stop itself is found in a word.
fn skip<const ASCII: bool>(bytes: &[u8], mut at: usize) -> usize {
    const WIDTH: usize = 32;
    // Most runs between escapes are short: look at a word or two before going wide.
    for _ in 0..2 {
        let Some(word) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) else {
            break;
        };
        let found = stops_in_word::<ASCII>(u64::from_le_bytes(*word));
        if found != 0 {
            return at + found.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<WIDTH>) {
        if chunk.iter().fold(false, |any, &b| any | stops::<ASCII>(b)) {
            break;
        }
        at += WIDTH;
    }
    while let Some(word) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let found = stops_in_word::<ASCII>(u64::from_le_bytes(*word));
        if found != 0 {
            return at + found.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if stops::<ASCII>(b) {
            break;
        }
        at += 1;
    }
    at
}

#[inline(always)]
fn stops<const ASCII: bool>(b: u8) -> bool {
    let text_ends = (b < 0x20) | (b == b'"') | (b == b'\\');
    if ASCII {
        text_ends | (b >= 0x80)
    } else {
        text_ends
    }
}

/// The high bit of each byte of `word` (little-endian) that [`stops`]; bits above the
/// lowest may be wrong (borrows), the lowest is exact.
#[inline(always)]
fn stops_in_word<const ASCII: bool>(word: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    let beyond_ascii = if ASCII { word } else { 0 };
    (control | quote | backslash | beyond_ascii) & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn accepted(line: &str) -> bool {
        scan(line.as_bytes()).is_some()
    }

    #[test]
    fn finds_envelope_and_wrapper_members() {
        let line = r#" {"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"m","params":{"x":"é\"}"},"_meta":{}},"extra":[1,{"id":2}]} "#;
        let s = scan(line.as_bytes()).unwrap();
        assert_eq!(s.raw(s.envelope.id).unwrap().get(), "7");
        assert_eq!(
            s.raw(s.envelope.method).unwrap().get(),
            r#""proxy/successor""#
        );
        assert!(s.envelope.result.is_none());
        let w = s.wrapper.as_ref().unwrap();
        assert_eq!(s.raw(w.method).unwrap().get(), r#""m""#);
        assert_eq!(s.raw(w.params).unwrap().get(), r#"{"x":"é\"}"}"#);
        assert_eq!(s.raw(w.underscore_meta).unwrap().get(), "{}");
        assert!(w.meta.is_none() && !w.repeated);
    }

    #[test]
    fn leaves_to_serde_what_it_is_not_sure_of() {
        for line in [
            r#"{"i\u0064":1}"#,
            r#"{"id":1,"id":2}"#,
            r#"{"a":1,}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":1e}"#,
            r#"{"a":-}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12g4"}"#,
            "{\"a\":\"\t\"}",
            r#"{"a":tru}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":1} x"#,
            r#"[1]"#,
            "",
            "{",
        ] {
            assert!(!accepted(line), "{line}");
        }
        let deep = format!(r#"{{"a":{}1{}}}"#, "[".repeat(70), "]".repeat(70));
        assert!(!accepted(&deep));
        for bad in [
            &b"{\"a\":\"\xff\"}"[..],
            b"{\"a\":\"\xc0\x80\"}",
            b"{\"a\":\"\xed\xa0\x80\"}",
            b"{\"a\":\"\xf4\x90\x80\x80\"}",
            b"{\"a\":\"\xe2\x82\"}",
            b"\xef\xbb\xbf{}",
        ] {
            assert!(scan(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn an_escaped_or_repeated_wrapper_name_is_noted() {
        let s = scan(br#"{"params":{"\u006dethod":"m"}}"#).unwrap();
        assert!(s.wrapper.is_none());
        let s = scan(br#"{"params":{"method":"m","method":"n"}}"#).unwrap();
        assert!(s.wrapper.unwrap().repeated);
        let s = scan(br#"{"params":[{"method":"m"}]}"#).unwrap();
        assert!(s.wrapper.is_none());
    }

    proptest! {
        /// Whatever the pass accepts is valid UTF-8 and JSON, read to the same members.
        #[test]
        fn accepts_only_what_serde_json_reads_the_same(bytes in line()) {
            crate::fuzzing::check_one_pass(&bytes);
            let by_serde = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| serde_json::from_str::<crate::envelope::Members<'_>>(text).ok());
            if let Some(s) = scan(&bytes) {
                let m = by_serde.expect("accepted, but serde_json refuses it");
                let e = &s.envelope;
                let text = |r: Option<&RawValue>| r.map(|r| r.get().to_owned());
                prop_assert_eq!(text(s.raw(e.jsonrpc)), text(m.jsonrpc));
                prop_assert_eq!(text(s.raw(e.id)), text(m.id));
                prop_assert_eq!(text(s.raw(e.method)), text(m.method));
                prop_assert_eq!(text(s.raw(e.params)), text(m.params));
                prop_assert_eq!(text(s.raw(e.result)), text(m.result));
                prop_assert_eq!(text(s.raw(e.error)), text(m.error));
            }
        }

        /// The word and wide steps stop where a byte-by-byte look would.
        #[test]
        fn skip_stops_at_the_first_stop(
            bytes in prop::collection::vec(
                prop_oneof![8 => 0x20u8..0x7f, 1 => any::<u8>()], 0..200),
            from in any::<prop::sample::Index>(),
        ) {
            let from = from.index(bytes.len() + 1);
            let naive = |ascii: bool| {
                (from..bytes.len())
                    .find(|&i| {
                        let b = bytes[i];
                        b < 0x20 || b == b'"' || b == b'\\' || (ascii && b >= 0x80)
                    })
                    .unwrap_or(bytes.len())
            };
            prop_assert_eq!(skip::<true>(&bytes, from), naive(true));
            prop_assert_eq!(skip::<false>(&bytes, from), naive(false));
        }

        /// Every frame serde_json writes (compact or pretty) is taken by the fast path.
        #[test]
        fn accepts_what_serde_json_writes(value in json_value(4), pretty in any::<bool>()) {
            let object = serde_json::json!({"jsonrpc": "2.0", "id": 1, "params": value});
            let text = if pretty {
                serde_json::to_string_pretty(&object).unwrap()
            } else {
                serde_json::to_string(&object).unwrap()
            };
            prop_assert!(accepted(&text), "{}", text);
        }
    }

    /// Envelopes as serde_json writes them, then perhaps cut, spliced or given a stray byte.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        let written = (json_value(3), any::<bool>()).prop_map(|(value, pretty)| {
            let object = serde_json::json!({
                "jsonrpc": "2.0", "id": 3, "method": "proxy/successor",
                "params": {"method": "m", "params": value.clone()},
                "x": value,
            });
            let text = if pretty {
                serde_json::to_string_pretty(&object)
            } else {
                serde_json::to_string(&object)
            };
            text.unwrap().into_bytes()
        });
        let piece = prop_oneof![
            Just(b"\\".to_vec()),
            Just(b"\"".to_vec()),
            Just(b"\\u00".to_vec()),
            Just(b"\xc3".to_vec()),
            Just(b"\xed\xa0\x80".to_vec()),
            Just(b"0".to_vec()),
            Just(b"-".to_vec()),
            Just(b".".to_vec()),
            Just(b"e".to_vec()),
            Just(b",".to_vec()),
            Just(b"}".to_vec()),
            Just(b"]".to_vec()),
            Just(b"\t".to_vec()),
            Just(b"\x01".to_vec()),
            Just(br#""id":9,"#.to_vec()),
            Just(br#""\u0069d":9,"#.to_vec()),
            any::<u8>().prop_map(|b| vec![b]),
        ];
        (written, any::<prop::sample::Index>(), 0..3usize, piece).prop_map(
            |(mut bytes, at, edit, piece)| {
                let at = at.index(bytes.len() + 1);
                match edit {
                    0 => {}
                    1 => {
                        bytes.splice(at..at, piece);
                    }
                    _ => {
                        let end = (at + piece.len()).min(bytes.len());
                        bytes.splice(at..end, piece);
                    }
                }
                bytes
            },
        )
    }

    fn json_value(depth: u32) -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            "[ -~\\n\\t\"\\\\{}\\[\\]é\u{1F600}\u{7f}]{0,40}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(depth, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\"{]{0,3}|method|params|_meta", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
