//! The records of trace format 1 (docs/trace.md), each written as one JSON line. Pure: what
//! goes in a record is decided by the trace thread, how it is spelled is decided here.

use std::io::Write;

use super::classify::Kind;
use super::item::Dir;

/// The message as on the link, or not.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// Left out (`trace_payloads = false`, or a line dropped unread).
    Omitted,
    /// A line that is JSON, written as it is.
    Json(&'a [u8]),
    /// A line that is not JSON, written as a string (invalid UTF-8 already replaced).
    Text(&'a str),
}

/// `{"type":"message",...}`.
#[derive(Debug)]
pub struct MessageRecord<'a> {
    pub t: f64,
    pub link: &'a str,
    pub position: Option<usize>,
    pub dir: Dir,
    pub kind: Kind,
    pub method: Option<&'a str>,
    pub wrapped: Option<&'a str>,
    /// JSON text.
    pub id: Option<&'a str>,
    /// The link and the id there (JSON text).
    pub maps_to: Option<(&'a str, &'a str)>,
    pub cancels: Option<(&'a str, &'a str)>,
    pub session: Option<&'a str>,
    pub bytes: usize,
    pub payload: Payload<'a>,
}

impl MessageRecord<'_> {
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"type\":\"message\",\"t\":");
        time(out, self.t);
        out.extend_from_slice(b",\"link\":");
        string(out, self.link);
        out.extend_from_slice(b",\"position\":");
        match self.position {
            Some(position) => number(out, position as u64),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"dir\":\"");
        out.extend_from_slice(self.dir.name().as_bytes());
        out.extend_from_slice(b"\",\"kind\":\"");
        out.extend_from_slice(self.kind.name().as_bytes());
        out.extend_from_slice(b"\",\"method\":");
        optional_string(out, self.method);
        out.extend_from_slice(b",\"wrapped\":");
        optional_string(out, self.wrapped);
        out.extend_from_slice(b",\"id\":");
        out.extend_from_slice(self.id.unwrap_or("null").as_bytes());
        out.extend_from_slice(b",\"mapsTo\":");
        link_id(out, self.maps_to);
        if self.cancels.is_some() {
            out.extend_from_slice(b",\"cancels\":");
            link_id(out, self.cancels);
        }
        out.extend_from_slice(b",\"session\":");
        optional_string(out, self.session);
        out.extend_from_slice(b",\"bytes\":");
        number(out, self.bytes as u64);
        match self.payload {
            Payload::Omitted => {}
            Payload::Json(json) => {
                out.extend_from_slice(b",\"payload\":");
                out.extend_from_slice(json);
            }
            Payload::Text(text) => {
                out.extend_from_slice(b",\"payload\":");
                string(out, text);
            }
        }
        out.push(b'}');
    }
}

/// `{"type":"component",...}`.
pub fn component(out: &mut Vec<u8>, t: f64, link: &str, event: &str, detail: &str) {
    out.extend_from_slice(b"{\"type\":\"component\",\"t\":");
    time(out, t);
    out.extend_from_slice(b",\"link\":");
    string(out, link);
    out.extend_from_slice(b",\"event\":");
    string(out, event);
    out.extend_from_slice(b",\"detail\":");
    string(out, detail);
    out.push(b'}');
}

/// `{"type":"dropped",...}`: messages left out because the trace thread fell behind.
pub fn dropped(out: &mut Vec<u8>, t: f64, count: u64, total: u64) {
    out.extend_from_slice(b"{\"type\":\"dropped\",\"t\":");
    time(out, t);
    out.extend_from_slice(b",\"count\":");
    number(out, count);
    out.extend_from_slice(b",\"total\":");
    number(out, total);
    out.push(b'}');
}

/// `{"type":"end",...}`, the last line of a run that ended normally.
pub fn end(out: &mut Vec<u8>, t: f64, reason: &str, dropped: u64) {
    out.extend_from_slice(b"{\"type\":\"end\",\"t\":");
    time(out, t);
    out.extend_from_slice(b",\"reason\":");
    string(out, reason);
    out.extend_from_slice(b",\"dropped\":");
    number(out, dropped);
    out.push(b'}');
}

/// Milliseconds with microseconds.
fn time(out: &mut Vec<u8>, t: f64) {
    let _ = write!(out, "{t:.3}");
}

fn number(out: &mut Vec<u8>, n: u64) {
    let _ = write!(out, "{n}");
}

fn string(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(&mut *out, text).expect("writing to a Vec");
}

fn optional_string(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => string(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

fn link_id(out: &mut Vec<u8>, target: Option<(&str, &str)>) {
    let Some((link, id)) = target else {
        out.extend_from_slice(b"null");
        return;
    };
    out.extend_from_slice(b"{\"link\":");
    string(out, link);
    out.extend_from_slice(b",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parsed(out: &[u8]) -> Value {
        serde_json::from_slice(out)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
    }

    #[test]
    fn a_message_record_has_every_member_of_the_format() {
        let mut out = Vec::new();
        MessageRecord {
            t: 1.2345678,
            link: "p\"1",
            position: Some(1),
            dir: Dir::In,
            kind: Kind::Request,
            method: Some("session/prompt"),
            wrapped: Some("proxy/successor"),
            id: Some("\"a\""),
            maps_to: Some(("agent", "4")),
            cancels: None,
            session: Some("s1"),
            bytes: 99,
            payload: Payload::Json(br#"{"jsonrpc":"2.0"}"#),
        }
        .write(&mut out);
        assert!(out.starts_with(b"{\"type\":\"message\",\"t\":1.235,"));
        assert_eq!(
            parsed(&out),
            json!({
                "type": "message", "t": 1.235, "link": "p\"1", "position": 1, "dir": "in",
                "kind": "request", "method": "session/prompt", "wrapped": "proxy/successor",
                "id": "a", "mapsTo": {"link": "agent", "id": 4}, "session": "s1", "bytes": 99,
                "payload": {"jsonrpc": "2.0"}
            })
        );
    }

    #[test]
    fn absent_members_are_null_and_a_left_out_payload_is_absent() {
        let mut out = Vec::new();
        MessageRecord {
            t: 0.0,
            link: "shim:tools#1",
            position: None,
            dir: Dir::Out,
            kind: Kind::Notification,
            method: Some("$/cancel_request"),
            wrapped: None,
            id: None,
            maps_to: None,
            cancels: Some(("p1", "\"x\"")),
            session: None,
            bytes: 3,
            payload: Payload::Omitted,
        }
        .write(&mut out);
        let record = parsed(&out);
        assert_eq!(record["position"], Value::Null);
        assert_eq!(record["mapsTo"], Value::Null);
        assert_eq!(record["cancels"], json!({"link": "p1", "id": "x"}));
        assert!(record.get("payload").is_none());
    }

    #[test]
    fn a_line_that_is_not_json_is_a_string_payload() {
        let mut out = Vec::new();
        MessageRecord {
            t: 0.0,
            link: "agent",
            position: Some(2),
            dir: Dir::In,
            kind: Kind::Invalid,
            method: None,
            wrapped: None,
            id: None,
            maps_to: None,
            cancels: None,
            session: None,
            bytes: 5,
            payload: Payload::Text("hi \u{fffd}\""),
        }
        .write(&mut out);
        assert_eq!(parsed(&out)["payload"], "hi \u{fffd}\"");
    }

    #[test]
    fn component_dropped_and_end_records() {
        let mut out = Vec::new();
        component(&mut out, 2.0, "p1", "failed", "it \"crashed\"");
        assert_eq!(
            parsed(&out),
            json!({"type":"component","t":2.0,"link":"p1","event":"failed","detail":"it \"crashed\""})
        );
        out.clear();
        dropped(&mut out, 3.0, 2, 5);
        assert_eq!(
            parsed(&out),
            json!({"type":"dropped","t":3.0,"count":2,"total":5})
        );
        out.clear();
        end(&mut out, 4.0, "the editor closed its input", 5);
        assert_eq!(
            parsed(&out),
            json!({"type":"end","t":4.0,"reason":"the editor closed its input","dropped":5})
        );
    }
}
