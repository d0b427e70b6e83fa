//! Property tests of line framing: any chunking of a byte stream yields the frames (and the
//! too-long reports, in place) of a plain line-by-line reading, and encoding round-trips.
//!
//! `PROPTEST_CASES=N cargo test -p acp-wire --test frame_properties` runs more cases.

use acp_wire::frame::TopLevel;
use acp_wire::{FrameError, LineDecoder, LineEncoder};
use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

/// What a reading yields, comparable: a frame, or a too-long line's limit, length and what
/// its top level showed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Frame(Vec<u8>),
    TooLong {
        limit: usize,
        len: usize,
        seen: TopLevel,
    },
}

fn item(r: Result<Bytes, FrameError>) -> Item {
    match r {
        Ok(frame) => Item::Frame(frame.to_vec()),
        Err(FrameError::TooLong { limit, len, seen }) => Item::TooLong { limit, len, seen },
    }
}

/// Feeds `stream` to a decoder cut at `cuts` (offsets, any order), then ends it.
fn decode_in_pieces(stream: &[u8], cuts: &[usize], max_line: usize) -> Vec<Item> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.push(stream.len());
    cuts.sort_unstable();
    let mut decoder = LineDecoder::new(max_line);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut start = 0;
    for end in cuts {
        buf.extend_from_slice(&stream[start..end]);
        start = end;
        while let Some(r) = decoder.decode(&mut buf) {
            out.push(item(r));
        }
    }
    while let Some(r) = decoder.decode_eof(&mut buf) {
        out.push(item(r));
    }
    out
}

/// The framing rules read off the whole stream at once, without the decoder: lines end at
/// `\n` (an unterminated last one counts), one `\r` before it is dropped, blank lines are
/// skipped, a line over the limit is reported with what a scan of its top level shows.
fn reference(stream: &[u8], max_line: usize) -> Vec<Item> {
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = Vec::new();
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max_line {
            out.push(Item::TooLong {
                limit: max_line,
                len: line.len(),
                seen: TopLevel::of(line),
            });
        } else if !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Item::Frame(line.to_vec()));
        }
    }
    out
}

/// One line's bytes, without its terminator: JSON-ish text, blanks, invalid UTF-8, stray `\r`.
fn line_bytes(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"{}[]\":,0123456789abcjsonrpcid".to_vec()),
        2 => prop::sample::select(b" \t\r".to_vec()),
        1 => prop::sample::select(vec![0x80u8, 0xc3, 0xa9, 0xff, 0xfe, 0x00]),
    ];
    prop::collection::vec(byte, 0..=max_len)
}

/// A stream of lines around the limit: short ones, blank ones, ones just over it and far over
/// it, terminated by `\n`, `\r\n` or (the last) nothing.
fn stream(max_line: usize) -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        3 => line_bytes(max_line),
        1 => prop::sample::select(vec![b"".to_vec(), b" ".to_vec(), b"\t \r".to_vec()]),
        2 => line_bytes(max_line + 3),
        1 => line_bytes(3 * max_line + 512),
    ];
    let ending = prop::sample::select(vec![&b"\n"[..], b"\r\n", b"\r\r\n"]);
    (
        prop::collection::vec((line, ending), 0..8),
        line_bytes(max_line + 2),
    )
        .prop_map(|(lines, last)| {
            let mut out = Vec::new();
            for (line, ending) in lines {
                out.extend_from_slice(&line);
                out.extend_from_slice(ending);
            }
            out.extend_from_slice(&last);
            out
        })
}

/// A limit and a stream for it: tiny limits (ids and members cut across reads and the limit)
/// and middling ones.
fn limit_and_stream() -> impl Strategy<Value = (usize, Vec<u8>)> {
    prop_oneof![1usize..=24, 248usize..=264]
        .prop_flat_map(|max_line| (Just(max_line), stream(max_line)))
}

/// `PROPTEST_CASES` when set, else `default`: quick under `cargo test`, longer on demand.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn any_chunking_yields_the_frames_of_one_chunk(
        (max_line, stream) in limit_and_stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = decode_in_pieces(&stream, &[], max_line);
        prop_assert_eq!(&whole, &reference(&stream, max_line));
        prop_assert_eq!(decode_in_pieces(&stream, &cuts, max_line), whole);
    }

    #[test]
    fn byte_by_byte_yields_the_frames_of_one_chunk((max_line, stream) in limit_and_stream()) {
        let every: Vec<usize> = (0..stream.len()).collect();
        prop_assert_eq!(
            decode_in_pieces(&stream, &every, max_line),
            reference(&stream, max_line)
        );
    }

    #[test]
    fn encoded_frames_decode_back_under_any_chunking(
        frames in prop::collection::vec(line_bytes(40), 0..16),
        coalesce in 1usize..64,
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut encoder = LineEncoder::new(coalesce);
        let mut stream = Vec::new();
        let mut frame_bytes = 0;
        for frame in &frames {
            frame_bytes += frame.len();
            if encoder.encode(Bytes::copy_from_slice(frame)) {
                stream.extend(encoder.chunks().iter().flat_map(|c| c.to_vec()));
                frame_bytes -= encoder.written();
            }
        }
        stream.extend(encoder.chunks().iter().flat_map(|c| c.to_vec()));
        prop_assert_eq!(encoder.written(), frame_bytes, "every frame's bytes counted once");
        prop_assert!(encoder.is_empty());
        // What reading gives back: each frame less one trailing `\r` (JSON whitespace), blank
        // ones skipped, exactly as written otherwise.
        let expected: Vec<Item> = frames
            .iter()
            .map(|f| f.strip_suffix(b"\r").unwrap_or(f))
            .filter(|f| !f.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
            .map(|f| Item::Frame(f.to_vec()))
            .collect();
        prop_assert_eq!(decode_in_pieces(&stream, &cuts, 64), expected);
    }
}
