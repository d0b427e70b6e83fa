//! The body of the `framing_envelope` fuzz target: untrusted bytes through the line decoder
//! in the chunking the input picks, then every frame through what the router runs on it.
//!
//! A plain function, so that the seed corpus runs under `cargo test` on stable (the tests
//! below) and `cargo fuzz` (fuzz/) only wraps it. Panics on any broken invariant.

use bytes::{Bytes, BytesMut};
use serde_json::value::RawValue;

use crate::encode::{self, Call};
use crate::envelope::{Envelope, Outcome, decode_str};
use crate::frame::{FrameError, LineDecoder, LineEncoder, TopLevel, TopLevelScan};
use crate::id::{IdKey, own_id};
use crate::splice::{Members, set_path};
use crate::successor::{self, Dialect};

/// Input layout: byte 0 picks the line limit, byte 1 seeds the chunking and the encoder's
/// batch size, the rest is the stream. Short inputs are a stream with default choices.
pub fn framing_envelope(data: &[u8]) {
    let (max_line, seed, stream) = match data {
        [limit, seed, rest @ ..] => (max_line_of(*limit), *seed, rest),
        _ => (64, 0, data),
    };
    let whole = decode(stream, &[], max_line);
    let cuts = cuts(seed, stream.len());
    let pieces = decode(stream, &cuts, max_line);
    assert_eq!(pieces, whole, "chunking at {cuts:?} changed the frames");

    let mut frames = Vec::new();
    for item in &whole {
        match item {
            Ok(frame) => {
                check_frame(frame, seed);
                frames.push(frame.clone());
            }
            Err(FrameError::TooLong { limit, len, seen }) => {
                assert!(
                    len > limit,
                    "a line of {len} bytes is within the limit {limit}"
                );
                check_seen(seen, None);
            }
        }
    }
    check_encoder_round_trip(&frames, seed);
}

/// Tiny limits (ids and members cut across the end of what is kept), middling ones, and a
/// roomy one.
fn max_line_of(byte: u8) -> usize {
    match byte >> 6 {
        0 => 1 + usize::from(byte & 0x3f),
        1 => 224 + usize::from(byte & 0x3f),
        _ => 4096,
    }
}

/// Cut points for a stream of `len` bytes: a few, chosen by `seed`, or every byte.
fn cuts(seed: u8, len: usize) -> Vec<usize> {
    if seed == 0xff {
        return (0..len).collect();
    }
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
    let count = usize::from(seed % 8);
    let mut cuts: Vec<usize> = (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize % (len + 1)
        })
        .collect();
    cuts.sort_unstable();
    cuts
}

type Item = Result<Bytes, FrameError>;

fn decode(stream: &[u8], cuts: &[usize], max_line: usize) -> Vec<Item> {
    let mut decoder = LineDecoder::new(max_line);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut start = 0;
    for end in cuts.iter().copied().chain([stream.len()]) {
        buf.extend_from_slice(&stream[start..end]);
        start = end;
        while let Some(item) = decoder.decode(&mut buf) {
            out.push(item);
        }
    }
    while let Some(item) = decoder.decode_eof(&mut buf) {
        out.push(item);
    }
    out
}

/// One frame through classification and through each rewrite the router may apply to it:
/// whatever is written from a parsed envelope parses back to the same parts.
fn check_frame(frame: &[u8], seed: u8) {
    assert!(!frame.contains(&b'\n'), "a frame holds a newline");
    check_one_pass(frame);
    let envelope = match crate::parse(frame) {
        Ok(envelope) => envelope,
        Err(invalid) => {
            let _ = invalid.to_string();
            let mut out = Vec::new();
            encode::error_response(&mut out, invalid.reply_id(), invalid.code(), "m", None);
            check_error_reply(&out, invalid.reply_id(), invalid.code());
            return;
        }
    };
    match envelope {
        Envelope::Request { id, method, params } => {
            check_id(id);
            check_prefixes_scan(frame, Some(id.get()), seed);
            check_call(Some(id.get()), method, params);
            check_params(method, params);
        }
        Envelope::Notification { method, params } => {
            check_prefixes_scan(frame, None, seed);
            check_call(None, method, params);
            check_params(method, params);
        }
        Envelope::Response { id, outcome } => {
            check_id(id);
            check_prefixes_scan(frame, Some(id.get()), seed);
            let mut out = Vec::new();
            encode::response(&mut out, id.get(), outcome);
            match (crate::parse(&out), outcome) {
                (
                    Ok(Envelope::Response {
                        id: got,
                        outcome: Outcome::Result(r),
                    }),
                    Outcome::Result(want),
                )
                | (
                    Ok(Envelope::Response {
                        id: got,
                        outcome: Outcome::Error(r),
                    }),
                    Outcome::Error(want),
                ) => {
                    assert_eq!(got.get(), id.get());
                    assert_eq!(r.get(), want.get());
                }
                other => panic!("response does not parse back: {other:?}"),
            }
        }
    }
}

/// The one-pass parse reads every frame as serde_json does (the same envelope or the same
/// error), and a wrapper's members found on the way are the ones `unwrap` reads itself.
pub(crate) fn check_one_pass(frame: &[u8]) {
    let parsed = crate::parse_frame(frame);
    let by_serde = crate::envelope::parse_with_serde(frame);
    let envelope = parsed.as_ref().map(|p| p.envelope);
    assert_eq!(format!("{envelope:?}"), format!("{by_serde:?}"));
    if let Ok(parsed) = parsed {
        let params = match parsed.envelope {
            Envelope::Request { params, .. } | Envelope::Notification { params, .. } => params,
            Envelope::Response { .. } => None,
        };
        assert_eq!(
            format!("{:?}", successor::unwrap_found(params, parsed.wrapper)),
            format!("{:?}", successor::unwrap(params)),
        );
    }
}

/// Ids keep their text, compare equal to themselves, and a conductor id reads back.
fn check_id(id: &RawValue) {
    assert_eq!(IdKey::of(id), IdKey::of(id));
    if id.get().starts_with('"') {
        assert!(decode_str(id).is_some(), "a string id that does not decode");
    }
    if let Some(n) = own_id(id) {
        assert_eq!(n.to_string(), id.get(), "own ids are plain u64 text");
    }
}

/// A dropped or broken line is answered by the id its top level shows: that id must be a
/// valid JSON-RPC id (a string or a number) and, for a message with an id, that message's id.
fn check_seen(seen: &TopLevel, real_id: Option<&str>) {
    if let Some(id) = &seen.id {
        let raw: &RawValue = serde_json::from_str(id).expect("a scanned id is JSON");
        assert!(
            raw.get().starts_with('"') || is_number(raw.get()),
            "a scanned id that is neither a string nor a number: {id}"
        );
        if let Some(real) = real_id {
            assert_eq!(id, real, "the scan shows another id");
        }
        let mut out = Vec::new();
        encode::error_response(&mut out, raw.get(), -32003, "too long", None);
        check_error_reply(&out, raw.get(), -32003);
    }
}

/// JSON number syntax: any number a peer may send, however large (`serde_json`'s numbers stop
/// at the range of `f64`).
fn is_number(text: &str) -> bool {
    text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
}

/// `out` is a valid JSON-RPC error response carrying `id` as sent, byte for byte (a
/// fractional or exponent number too: JSON-RPC allows it, and its sender can match it; only
/// `parse` refuses it in a response to the conductor, which never sends such ids).
fn check_error_reply(out: &[u8], id: &str, code: i64) {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Reply<'a> {
        jsonrpc: &'a str,
        #[serde(borrow)]
        id: &'a RawValue,
        error: ErrorObject,
    }
    #[derive(serde::Deserialize)]
    struct ErrorObject {
        code: i64,
    }
    let reply: Reply<'_> = serde_json::from_slice(out).expect("an error reply is JSON-RPC");
    assert_eq!(reply.jsonrpc, "2.0");
    assert_eq!(reply.id.get(), id, "the reply names another id");
    assert!(id == "null" || id.starts_with('"') || is_number(id), "{id}");
    assert_eq!(reply.error.code, code);
}

/// The top-level scan of a whole message agrees with `parse`, fed in the chunks the seed
/// picks as well as at once; of a prefix (a line cut short), it shows the message's id or
/// none.
fn check_prefixes_scan(frame: &[u8], id: Option<&str>, seed: u8) {
    let whole = TopLevel::of(frame);
    let mut pieces = TopLevelScan::new();
    let mut start = 0;
    for end in cuts(seed, frame.len()).into_iter().chain([frame.len()]) {
        pieces.feed(&frame[start..end]);
        start = end;
    }
    assert_eq!(pieces.finish(), whole, "the scan depends on chunking");
    if let (Some(seen), Some(real)) = (&whole.id, id) {
        assert_eq!(seen, real, "the scan of the whole message");
    }
    for cut in [frame.len() / 2, frame.len() * usize::from(seed) / 256] {
        check_seen(&TopLevel::of(&frame[..cut]), id);
    }
    // A message without an id never shows one, however it is cut.
    if id.is_none() {
        assert_eq!(whole.id, None, "the scan found an id in {frame:?}");
    }
}

/// A request or notification written plain, and wrapped in each dialect, parses back.
fn check_call(id: Option<&str>, method: &str, params: Option<&RawValue>) {
    let mut plain = Vec::new();
    encode::call(&mut plain, id, Call::Plain { method, params });
    let (got_id, got_method, got_params) = call_parts(&plain);
    assert_eq!((got_id.as_deref(), got_method.as_str()), (id, method));
    assert_eq!(got_params.as_deref(), params.map(RawValue::get));

    if let Some(dialect) = Dialect::of_successor(method) {
        let Ok(inner) = successor::unwrap(params) else {
            return;
        };
        // The router re-wraps what it unwrapped (to the next proxy, or the parent).
        for via in [dialect, Dialect::Rfd, Dialect::Underscore] {
            let mut out = Vec::new();
            let call = Call::Wrapped {
                via: via.successor_method(),
                method: inner.method,
                params: inner.params,
                meta: inner.meta,
            };
            encode::call(&mut out, id, call);
            let (_, outer, outer_params) = call_parts(&out);
            assert_eq!(outer, via.successor_method());
            let outer_params = outer_params.expect("a wrapped call has params");
            let raw = RawValue::from_string(outer_params).expect("params are JSON");
            let again = successor::unwrap(Some(&raw)).expect("re-wrapped parses");
            assert_eq!(again.method, inner.method);
            assert_eq!(
                again.params.map(RawValue::get),
                inner.params.map(RawValue::get)
            );
            assert_eq!(
                again.meta.meta.map(RawValue::get),
                inner.meta.meta.map(RawValue::get)
            );
            assert_eq!(
                again.meta.underscore_meta.map(RawValue::get),
                inner.meta.underscore_meta.map(RawValue::get)
            );
        }
    }
}

/// The id text, method and params text of a written call, which must parse.
fn call_parts(line: &[u8]) -> (Option<String>, String, Option<String>) {
    match crate::parse(line) {
        Ok(Envelope::Request { id, method, params }) => (
            Some(id.get().to_string()),
            method.to_string(),
            params.map(|p| p.get().to_string()),
        ),
        Ok(Envelope::Notification { method, params }) => (
            None,
            method.to_string(),
            params.map(|p| p.get().to_string()),
        ),
        other => panic!(
            "a written call does not parse back ({other:?}): {}",
            String::from_utf8_lossy(line)
        ),
    }
}

/// The member edits the router makes: `$/cancel_request`'s `requestId`, and a nested set as
/// on an initialize result. Every other member keeps its bytes and order.
fn check_params(method: &str, params: Option<&RawValue>) {
    let Some(params) = params else { return };
    let path: &[&str] = if method == "$/cancel_request" {
        &["requestId"]
    } else {
        &["agentCapabilities", "mcpCapabilities", "acp"]
    };
    let edited = set_path(params, path, "7");
    let raw = RawValue::from_string(edited).expect("set_path writes JSON");
    let after = Members::of(&raw).expect("set_path writes an object");
    let Some(before) = Members::of(params) else {
        // Not an object: replaced by a fresh one holding only the path.
        assert_eq!(after.0.len(), 1);
        return;
    };
    let (key, rest) = path.split_first().expect("non-empty path");
    let first = before.0.iter().position(|(k, _)| k == key);
    let added = usize::from(first.is_none());
    assert_eq!(after.0.len(), before.0.len() + added, "members kept");
    for (i, ((k, v), (k2, v2))) in before.0.iter().zip(&after.0).enumerate() {
        assert_eq!(k, k2, "member {i} renamed or moved");
        if Some(i) != first {
            assert_eq!(v.get(), v2.get(), "member {k} changed");
        }
    }
    let mut at = after.get(key).expect("the edited member");
    for key in rest {
        at = Members::of(at)
            .and_then(|m| m.get(key))
            .expect("the path exists");
    }
    assert_eq!(at.get(), "7");
}

/// Frames through the encoder in batches, then back through the decoder: the same frames,
/// less a trailing `\r` (JSON whitespace, dropped by reading as part of a `\r\n`).
fn check_encoder_round_trip(frames: &[Bytes], seed: u8) {
    let mut encoder = LineEncoder::new(1 + usize::from(seed) * 3);
    let mut stream = Vec::new();
    for frame in frames {
        if encoder.encode(frame.clone()) {
            stream.extend(encoder.chunks().iter().flat_map(|c| c.to_vec()));
            encoder.written();
        }
    }
    stream.extend(encoder.chunks().iter().flat_map(|c| c.to_vec()));
    encoder.written();
    let longest = frames.iter().map(Bytes::len).max().unwrap_or(0);
    let back: Vec<Bytes> = decode(&stream, &cuts(seed.wrapping_add(1), stream.len()), longest)
        .into_iter()
        .map(|item| item.expect("nothing is too long"))
        .collect();
    let expected: Vec<&[u8]> = frames
        .iter()
        .map(|f| f.strip_suffix(b"\r").unwrap_or(f))
        .filter(|f| !f.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
        .collect();
    assert_eq!(back, expected);
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// Every input of the committed seed corpus (hand-written seeds and what fuzzing found),
    /// so `cargo test` on stable checks the target's invariants on them.
    #[test]
    fn seed_corpus_holds() {
        let dir =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/framing_envelope");
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        inputs.sort();
        assert!(inputs.len() >= 20, "the seed corpus is missing");
        for input in inputs {
            let data = std::fs::read(&input).expect("a corpus file");
            let name = input.display().to_string();
            std::panic::catch_unwind(|| super::framing_envelope(&data))
                .unwrap_or_else(|_| panic!("{name} breaks an invariant"));
        }
    }
}
