//! W3C trace context in an editor's request (`_meta.traceparent`, `_meta.tracestate`), read
//! strictly: a malformed value starts a trace of our own. Pure; knows no spans nor exporters.

use std::borrow::Cow;

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use serde::Deserialize;

/// A `traceparent` value, as W3C Trace Context (level 1, "traceparent Header") defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub parent_id: [u8; 8],
    pub flags: u8,
}

/// `version "-" trace-id "-" parent-id "-" trace-flags` for version `00`.
const VERSION_00_LEN: usize = 2 + 1 + 32 + 1 + 16 + 1 + 2;

impl TraceParent {
    /// `text` as a `traceparent`; `None` when it is not one: fields of the wrong length or
    /// not lowercase hex, version `ff`, an all-zero trace id or parent id, or a version `00`
    /// value with anything after its flags. A later version may carry more after a `-`.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let bytes = text.as_bytes();
        if bytes.len() < VERSION_00_LEN {
            return None;
        }
        let version = hex_field::<1>(&bytes[0..2])?[0];
        if version == 0xff {
            return None;
        }
        match (version, bytes.get(VERSION_00_LEN)) {
            (0, None) => {}
            (0, Some(_)) => return None,
            (_, None | Some(b'-')) => {}
            (_, Some(_)) => return None,
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let trace_id = hex_field::<16>(&bytes[3..35])?;
        let parent_id = hex_field::<8>(&bytes[36..52])?;
        let flags = hex_field::<1>(&bytes[53..55])?[0];
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }

    /// The editor's span, as the remote parent of ours, with `tracestate` when it is valid.
    pub fn span_context(&self, tracestate: Option<&str>) -> SpanContext {
        let state = tracestate.and_then(trace_state).unwrap_or_default();
        SpanContext::new(
            TraceId::from_bytes(self.trace_id),
            SpanId::from_bytes(self.parent_id),
            TraceFlags::new(self.flags),
            true,
            state,
        )
    }
}

/// A `tracestate` value: `key=value` members separated by commas (empty members and the
/// spaces around members are allowed); `None` when any member is not one.
fn trace_state(text: &str) -> Option<TraceState> {
    let mut members = Vec::new();
    for member in text.split(',').map(|m| m.trim_matches([' ', '\t'])) {
        if member.is_empty() {
            continue;
        }
        let (key, value) = member.split_once('=')?;
        let key_ok = (1..=256).contains(&key.len())
            && key.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && key
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"_-*/@".contains(&c));
        let value_ok = (1..=256).contains(&value.len())
            && !value.ends_with(' ')
            && value
                .bytes()
                .all(|c| (0x20..=0x7e).contains(&c) && c != b',' && c != b'=');
        if !key_ok || !value_ok {
            return None;
        }
        members.push((key, value));
    }
    TraceState::from_key_value(members).ok()
}

/// `N` bytes written as `2 * N` lowercase hex digits, or `None`.
fn hex_field<const N: usize>(text: &[u8]) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(text.chunks_exact(2)) {
        *byte = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(out)
}

fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// The editor's span named in a request's params (`_meta.traceparent`, `_meta.tracestate`),
/// or `None` when there is none or it is malformed.
pub fn from_params(params: &str) -> Option<SpanContext> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<Meta<'a>>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(borrow)]
        traceparent: Option<Cow<'a, str>>,
        #[serde(borrow)]
        tracestate: Option<Cow<'a, str>>,
    }
    let params: Params<'_> = serde_json::from_str(params).ok()?;
    let meta = params.meta?;
    let parent = TraceParent::parse(meta.traceparent.as_deref()?)?;
    Some(parent.span_context(meta.tracestate.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_well_formed_traceparent_is_read_field_by_field() {
        let parent = TraceParent::parse(GOOD).expect("valid");
        assert_eq!(
            TraceId::from_bytes(parent.trace_id),
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap()
        );
        assert_eq!(
            SpanId::from_bytes(parent.parent_id),
            SpanId::from_hex("00f067aa0ba902b7").unwrap()
        );
        assert_eq!(parent.flags, 1);
        let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        assert_eq!(TraceParent::parse(unsampled).unwrap().flags, 0);
    }

    #[test]
    fn a_later_version_may_carry_more_after_a_dash() {
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-comes";
        assert_eq!(TraceParent::parse(later).unwrap().flags, 9);
        let later_exact = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert!(TraceParent::parse(later_exact).is_some());
        let later_glued = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x";
        assert_eq!(TraceParent::parse(later_glued), None);
    }

    #[test]
    fn every_malformed_traceparent_is_refused() {
        let refused = [
            "",
            "00",
            "00-",
            // version 00 with anything after the flags
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-010",
            // version ff is invalid
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            // all-zero ids
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            // uppercase hex
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
            "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
            // wrong separators
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
            // fields of the wrong length
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            // whitespace is not trimmed
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
            // not hex at all
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
            "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ];
        for text in refused {
            assert_eq!(TraceParent::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn no_single_character_change_of_a_field_yields_a_different_valid_value_unnoticed() {
        // Every position, every byte: the result is refused, or a valid value that reads
        // back as the text it was parsed from (no byte is skipped or misread).
        for at in 0..GOOD.len() {
            for byte in 0u8..=255 {
                let mut text = GOOD.as_bytes().to_vec();
                text[at] = byte;
                let Ok(text) = String::from_utf8(text) else {
                    continue;
                };
                if let Some(parent) = TraceParent::parse(&text) {
                    let written = format!(
                        "{}-{}-{}-{:02x}",
                        &text[0..2],
                        TraceId::from_bytes(parent.trace_id),
                        SpanId::from_bytes(parent.parent_id),
                        parent.flags
                    );
                    assert_eq!(written, text, "changed at {at} to {byte}");
                }
            }
        }
        // Every prefix and every longer text of version 00 is refused.
        for end in 0..GOOD.len() {
            assert_eq!(TraceParent::parse(&GOOD[..end]), None);
        }
    }

    #[test]
    fn a_tracestate_is_kept_only_when_every_member_is_well_formed() {
        let state = trace_state("a=1, b@vendor=x y ,,c=2").expect("valid");
        assert_eq!(state.get("b@vendor"), Some("x y"));
        assert_eq!(state.get("c"), Some("2"));
        for refused in [
            "=", "a", "a=", "=1", "A=1", "a=1=2", "a=1 ,b", "-a=1", "a=\u{7f}",
        ] {
            assert!(trace_state(refused).is_none(), "{refused:?}");
        }
        assert_eq!(
            trace_state(""),
            Some(TraceState::NONE).map(|_| TraceState::default())
        );
    }

    #[test]
    fn the_meta_of_a_request_is_found_and_a_bad_one_ignored() {
        let params = format!(
            r#"{{"sessionId":"s","prompt":[{{"type":"text","text":"hi"}}],"_meta":{{"traceparent":"{GOOD}","tracestate":"vendor=abc"}}}}"#
        );
        let parent = from_params(&params).expect("a parent");
        assert!(parent.is_remote());
        assert!(parent.is_sampled());
        assert_eq!(parent.trace_state().get("vendor"), Some("abc"));
        // A tracestate that is not one is dropped; the traceparent still counts.
        let params = format!(r#"{{"_meta":{{"traceparent":"{GOOD}","tracestate":"=,="}}}}"#);
        assert_eq!(
            from_params(&params).unwrap().trace_state(),
            &TraceState::NONE
        );
        for params in [
            r#"{}"#,
            r#"{"_meta":{}}"#,
            r#"{"_meta":null}"#,
            r#"{"_meta":{"traceparent":"00-zz"}}"#,
            r#"{"_meta":{"traceparent":7}}"#,
            r#"{"_meta":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}"#,
            r#"[]"#,
            r#"not json"#,
        ] {
            assert_eq!(from_params(params), None, "{params}");
        }
        // Escapes in the value are decoded before it is read.
        let escaped = r#"{"_meta":{"traceparent":"00\u002d4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#;
        assert!(from_params(escaped).is_some());
    }
}
