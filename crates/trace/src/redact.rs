//! Redaction: every JSON string of a record whose decoded text holds a secret (an `env` value
//! of the config, a match of a `redact` pattern) is rewritten with each match as "[redacted]".

use std::borrow::Cow;

use regex_automata::dfa::{dense, regex::Regex};
use regex_automata::util::syntax;

/// What a secret becomes.
pub const REDACTED: &str = "[redacted]";

/// `env` values shorter than this are not treated as secrets: they would match everywhere
/// ("1", "on") and no credential is that short.
pub const MIN_SECRET_LEN: usize = 4;

/// How large the automaton of a run's patterns may grow; a pattern beyond it is refused.
const DFA_LIMIT: usize = 8 << 20;

/// The secret values and patterns of one run, as one automaton.
#[derive(Debug, Clone)]
pub struct Redactor {
    regex: Regex,
}

impl Redactor {
    /// A redactor for `secrets` (literal values) and `patterns` (regular expressions, which
    /// the configuration has checked); `None` when there is nothing to redact.
    pub fn new(secrets: &[String], patterns: &[String]) -> Result<Option<Redactor>, PatternError> {
        let mut literals: Vec<&str> = secrets
            .iter()
            .map(String::as_str)
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so that a secret containing another is redacted whole.
        literals.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        literals.dedup();
        let all: Vec<String> = literals
            .into_iter()
            .map(escape)
            .chain(patterns.iter().cloned())
            .collect();
        if all.is_empty() {
            return Ok(None);
        }
        Ok(Some(Redactor {
            regex: build(&all)?,
        }))
    }

    /// `text` with every match written as [`REDACTED`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut copied = 0;
        for found in self.regex.find_iter(bytes) {
            if found.is_empty() {
                continue;
            }
            out.extend_from_slice(&bytes[copied..found.start()]);
            out.extend_from_slice(REDACTED.as_bytes());
            copied = found.end();
        }
        if copied == 0 {
            return Cow::Borrowed(text);
        }
        out.extend_from_slice(&bytes[copied..]);
        // A pattern may end a match inside a character (`.` is any byte).
        Cow::Owned(match String::from_utf8(out) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Appends `json`, one JSON text, to `out` with every string (member names included)
    /// that holds a match rewritten; everything else is copied byte for byte.
    pub fn json(&self, json: &[u8], out: &mut Vec<u8>) {
        let mut copied = 0;
        let mut at = 0;
        while let Some(offset) = memchr::memchr(b'"', &json[at..]) {
            let start = at + offset;
            let Some(end) = string_end(json, start) else {
                break;
            };
            let token = &json[start..=end];
            if let Some(redacted) = self.token(token) {
                out.extend_from_slice(&json[copied..start]);
                serde_json::to_writer(&mut *out, &redacted).expect("writing to a Vec");
                copied = end + 1;
            }
            at = end + 1;
        }
        out.extend_from_slice(&json[copied..]);
    }

    /// The string a JSON string token becomes, when it holds a match.
    fn token(&self, token: &[u8]) -> Option<String> {
        let inner = &token[1..token.len() - 1];
        let decoded: Cow<'_, str> = if memchr::memchr(b'\\', inner).is_none() {
            Cow::Borrowed(std::str::from_utf8(inner).ok()?)
        } else {
            Cow::Owned(serde_json::from_slice::<String>(token).ok()?)
        };
        match self.text(&decoded) {
            Cow::Borrowed(_) => None,
            Cow::Owned(redacted) => Some(redacted),
        }
    }
}

/// How patterns read: byte-oriented and ASCII-aware (`\w`, `\d`, `\s`, `\b`, `(?i)` and
/// classes work on ASCII; other characters match as written). A secret is almost always
/// ASCII, and Unicode tables would cost every run memory, traced or not.
fn syntax() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

/// Checks one `redact` pattern: it is valid, cannot match the empty string (which would put
/// "[redacted]" between every two characters), and its automaton stays within the limit.
pub fn check_pattern(pattern: &str) -> Result<(), PatternError> {
    let hir = syntax::parse_with(pattern, &syntax()).map_err(|error| {
        let text = error.to_string();
        // A syntax error is several lines, the last one saying what is wrong.
        let reason = text
            .lines()
            .find_map(|line| line.strip_prefix("error: "))
            .map_or_else(|| text.replace('\n', " "), str::to_owned);
        PatternError::Invalid {
            pattern: pattern.to_owned(),
            reason,
        }
    })?;
    if hir.properties().minimum_len() == Some(0) {
        return Err(PatternError::MatchesEmpty(pattern.to_owned()));
    }
    build(&[pattern]).map(|_| ())
}

/// Why patterns (or the secrets, as patterns) cannot be redacted with.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    /// `reason` is the last line of the parser's message, the one saying what is wrong.
    #[error("invalid regular expression `{pattern}`: {reason}")]
    Invalid { pattern: String, reason: String },
    #[error("`{0}` can match the empty string, so it would redact everything")]
    MatchesEmpty(String),
    #[error("cannot compile `{}`: {source}", patterns.join("`, `"))]
    TooLarge {
        patterns: Vec<String>,
        source: Box<dense::BuildError>,
    },
}

fn build<P: AsRef<str>>(patterns: &[P]) -> Result<Regex, PatternError> {
    let limits = dense::Config::new()
        .dfa_size_limit(Some(DFA_LIMIT))
        .determinize_size_limit(Some(DFA_LIMIT));
    Regex::builder()
        .syntax(syntax())
        .dense(limits)
        .build_many(patterns)
        .map_err(|error| PatternError::TooLarge {
            patterns: patterns.iter().map(|p| p.as_ref().to_owned()).collect(),
            source: Box::new(error),
        })
}

/// `text` as a pattern matching exactly it.
fn escape(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '.'
                | '+'
                | '*'
                | '?'
                | '('
                | ')'
                | '|'
                | '['
                | ']'
                | '{'
                | '}'
                | '^'
                | '$'
                | '#'
                | '&'
                | '-'
                | '~'
        ) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// The offset of the quote closing the string that opens at `start`.
fn string_end(json: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        let offset = memchr::memchr2(b'"', b'\\', &json[at..])?;
        match json[at + offset] {
            b'"' => return Some(at + offset),
            _ => at += offset + 2,
        }
        if at > json.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(secrets: &[&str], patterns: &[&str]) -> Redactor {
        let own = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Redactor::new(&own(secrets), &own(patterns))
            .unwrap()
            .expect("something to redact")
    }

    fn json(r: &Redactor, text: &str) -> String {
        let mut out = Vec::new();
        r.json(text.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_holding_a_secret_are_rewritten_and_nothing_else_is() {
        let r = redactor(&["hunter22"], &["sk-[a-z0-9]{6,}"]);
        assert_eq!(
            json(
                &r,
                r#"{"a" : "my hunter22 pass","n":12,"k":["sk-abc123def","sk-ab"],"hunter22":1}"#
            ),
            r#"{"a" : "my [redacted] pass","n":12,"k":["[redacted]","sk-ab"],"[redacted]":1}"#
        );
    }

    #[test]
    fn escaped_secrets_are_found_decoded() {
        let r = redactor(&["hunter22"], &[]);
        assert_eq!(
            json(&r, r#"{"a":"\u0068unter22\n\"q\"","b":"x\\y"}"#),
            r#"{"a":"[redacted]\n\"q\"","b":"x\\y"}"#
        );
    }

    #[test]
    fn short_values_are_not_secrets_and_longer_ones_win() {
        assert!(
            Redactor::new(&["1".into(), "on".into()], &[])
                .unwrap()
                .is_none()
        );
        let r = redactor(&["abcd", "abcdefgh"], &[]);
        assert_eq!(r.text("xabcdefghx abcd"), "x[redacted]x [redacted]");
    }

    #[test]
    fn a_replacement_is_never_expanded_and_flags_stay_in_their_pattern() {
        let r = redactor(&["$1$2"], &["(?i)token", "case"]);
        assert_eq!(
            r.text("$1$2 TOKEN CASE case"),
            "[redacted] [redacted] CASE [redacted]"
        );
    }

    #[test]
    fn patterns_are_ascii_aware_and_other_characters_match_as_written() {
        let r = redactor(&["pässwörd"], &[r"(?i)bearer \w+", r"\d{4}"]);
        assert_eq!(
            r.text("Bearer abc_9 and BEARER x, 12345, pässwörd"),
            "[redacted] and [redacted], [redacted]5, [redacted]"
        );
        let r = redactor(&[], &["é."]);
        assert_eq!(r.text("café☃"), "caf[redacted]\u{fffd}\u{fffd}");
    }

    #[test]
    fn patterns_are_checked_for_syntax_empty_matches_and_size() {
        assert!(check_pattern("sk-[A-Za-z0-9]{20,}").is_ok());
        assert_eq!(
            check_pattern("(abc").unwrap_err().to_string(),
            "invalid regular expression `(abc`: unclosed group"
        );
        for empty in ["x*", r"\b", "a?|b"] {
            assert!(
                check_pattern(empty)
                    .unwrap_err()
                    .to_string()
                    .contains("can match the empty string"),
                "{empty}"
            );
        }
        assert!(
            check_pattern("(a|b)*a(a|b){40}")
                .unwrap_err()
                .to_string()
                .starts_with("cannot compile `(a|b)*a(a|b){40}`: "),
            "an automaton beyond the limit is refused"
        );
    }

    #[test]
    fn a_truncated_text_is_copied_as_it_is() {
        let r = redactor(&["hunter22"], &[]);
        assert_eq!(json(&r, r#"{"a":"hunter22"#), r#"{"a":"hunter22"#);
        assert_eq!(json(&r, r#""\"#), r#""\"#);
    }
}
