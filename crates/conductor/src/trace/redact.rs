//! Redaction: every JSON string of a record whose decoded text holds a secret (an `env` value
//! of the config, a match of a `redact` pattern) is rewritten with each match as "[redacted]".

use std::borrow::Cow;

use regex::{NoExpand, Regex};

/// What a secret becomes.
pub const REDACTED: &str = "[redacted]";

/// `env` values shorter than this are not treated as secrets: they would match everywhere
/// ("1", "on") and no credential is that short.
pub const MIN_SECRET_LEN: usize = 4;

/// The secret values and patterns of one run, as one regular expression.
#[derive(Debug, Clone)]
pub struct Redactor {
    regex: Regex,
}

impl Redactor {
    /// A redactor for `secrets` (literal values) and `patterns` (regular expressions, which
    /// the configuration has checked); `None` when there is nothing to redact.
    pub fn new(secrets: &[String], patterns: &[String]) -> Result<Option<Redactor>, regex::Error> {
        let mut literals: Vec<&str> = secrets
            .iter()
            .map(String::as_str)
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so that a secret containing another is redacted whole.
        literals.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        literals.dedup();
        let alternatives: Vec<String> = literals
            .into_iter()
            .map(regex::escape)
            .chain(patterns.iter().cloned())
            .map(|p| format!("(?:{p})"))
            .collect();
        if alternatives.is_empty() {
            return Ok(None);
        }
        Ok(Some(Redactor {
            regex: Regex::new(&alternatives.join("|"))?,
        }))
    }

    /// `text` with every match written as [`REDACTED`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.regex.replace_all(text, NoExpand(REDACTED))
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
    fn a_truncated_text_is_copied_as_it_is() {
        let r = redactor(&["hunter22"], &[]);
        assert_eq!(json(&r, r#"{"a":"hunter22"#), r#"{"a":"hunter22"#);
        assert_eq!(json(&r, r#""\"#), r#""\"#);
    }
}
