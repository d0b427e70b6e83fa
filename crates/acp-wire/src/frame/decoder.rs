//! Line framing, reading side: splits a byte stream into newline-terminated frames of
//! bounded length. Knows bytes only; what a line means is the envelope module's business.

use bytes::{Buf, Bytes, BytesMut};

use super::{FrameError, HEAD_BYTES};

/// Splits a buffer into lines. Accepts `\n` and `\r\n`; skips blank lines; a line longer
/// than `max_line` bytes is reported once and skipped without being held in memory.
///
/// ```
/// use acp_wire::LineDecoder;
/// use bytes::BytesMut;
/// let mut dec = LineDecoder::new(1024);
/// let mut buf = BytesMut::from(&b"{\"a\":1}\r\n\n{\"b\""[..]);
/// assert_eq!(dec.decode(&mut buf).unwrap().unwrap(), &b"{\"a\":1}"[..]);
/// assert!(dec.decode(&mut buf).is_none()); // the second line is incomplete
/// ```
#[derive(Debug)]
pub struct LineDecoder {
    max_line: usize,
    /// How far into the buffer we already know there is no newline.
    scanned: usize,
    /// While skipping an over-long line: how many of its bytes were dropped so far.
    discarding: Option<usize>,
    /// While skipping: whether the last dropped byte was `\r` (not part of the length).
    dropped_cr: bool,
    /// While skipping: the start of the dropped line, filled up to `HEAD_BYTES` from every
    /// chunk it spans, so the head does not depend on where reads happened to cut it.
    head: BytesMut,
}

impl LineDecoder {
    pub fn new(max_line: usize) -> Self {
        LineDecoder {
            max_line,
            scanned: 0,
            discarding: None,
            dropped_cr: false,
            head: BytesMut::new(),
        }
    }

    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// The next complete line in `buf`, if any; consumed bytes are removed from `buf`.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Option<Result<Bytes, FrameError>> {
        loop {
            if let Some(dropped) = self.discarding {
                match memchr::memchr(b'\n', buf) {
                    Some(i) => {
                        let cr = if i == 0 {
                            self.dropped_cr
                        } else {
                            buf[i - 1] == b'\r'
                        };
                        self.keep_head(&buf[..i]);
                        buf.advance(i + 1);
                        self.discarding = None;
                        self.scanned = 0;
                        return Some(Err(self.too_long(dropped + i - usize::from(cr))));
                    }
                    None => {
                        if let Some(&last) = buf.last() {
                            self.dropped_cr = last == b'\r';
                        }
                        self.keep_head(buf);
                        self.discarding = Some(dropped + buf.len());
                        buf.clear();
                        return None;
                    }
                }
            }
            match memchr::memchr(b'\n', &buf[self.scanned..]) {
                Some(offset) => {
                    let end = self.scanned + offset;
                    self.scanned = 0;
                    let mut line = buf.split_to(end + 1);
                    line.truncate(end);
                    if line.last() == Some(&b'\r') {
                        line.truncate(end - 1);
                    }
                    if line.len() > self.max_line {
                        self.keep_head(&line);
                        return Some(Err(self.too_long(line.len())));
                    }
                    if is_blank(&line) {
                        continue;
                    }
                    return Some(Ok(line.freeze()));
                }
                None => {
                    // One byte of slack: a line of exactly `max_line` bytes may still be
                    // waiting for its `\r`.
                    if buf.len() > self.max_line + 1 {
                        self.keep_head(buf);
                        self.dropped_cr = buf.last() == Some(&b'\r');
                        self.discarding = Some(buf.len());
                        self.scanned = 0;
                        buf.clear();
                        continue;
                    }
                    self.scanned = buf.len();
                    return None;
                }
            }
        }
    }

    /// Like [`decode`](Self::decode), at end of stream: an unterminated last line counts.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Result<Bytes, FrameError>> {
        if let Some(item) = self.decode(buf) {
            return Some(item);
        }
        if let Some(dropped) = self.discarding.take() {
            let cr = match buf.last() {
                Some(&b) => b == b'\r',
                None => self.dropped_cr,
            };
            let len = dropped + buf.len() - usize::from(cr);
            self.keep_head(buf);
            buf.clear();
            return Some(Err(self.too_long(len)));
        }
        if buf.is_empty() {
            return None;
        }
        buf.extend_from_slice(b"\n");
        self.decode(buf)
    }

    /// Adds the next bytes of a line being dropped to its head, up to `HEAD_BYTES`.
    fn keep_head(&mut self, bytes: &[u8]) {
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
    }

    /// The report of a dropped line of `len` bytes. A short line's head may have taken in
    /// the `\r` before its newline, which is not part of the line.
    fn too_long(&mut self, len: usize) -> FrameError {
        self.head.truncate(len);
        FrameError::TooLong {
            limit: self.max_line,
            len,
            head: self.head.split().freeze(),
        }
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::DEFAULT_MAX_LINE;

    type Item = Result<Vec<u8>, (usize, usize)>;

    fn item(r: Result<Bytes, FrameError>) -> Item {
        r.map(|b| b.to_vec())
            .map_err(|FrameError::TooLong { limit, len, .. }| (limit, len))
    }

    /// Feeds `input` in chunks of `chunk` bytes and collects every item, EOF included.
    fn run(input: &[u8], chunk: usize, max: usize) -> Vec<Item> {
        let mut dec = LineDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            buf.extend_from_slice(piece);
            while let Some(item_) = dec.decode(&mut buf) {
                out.push(item(item_));
            }
        }
        while let Some(item_) = dec.decode_eof(&mut buf) {
            out.push(item(item_));
        }
        out
    }

    fn every_chunking(input: &[u8], max: usize, expected: &[Item]) {
        for chunk in 1..=input.len().max(1) {
            assert_eq!(run(input, chunk, max), expected, "chunk size {chunk}");
        }
    }

    fn ok(s: &str) -> Item {
        Ok(s.as_bytes().to_vec())
    }

    #[test]
    fn splits_lines_under_every_chunking() {
        every_chunking(
            b"{\"a\":1}\n{\"b\":2}\n",
            100,
            &[ok("{\"a\":1}"), ok("{\"b\":2}")],
        );
    }

    #[test]
    fn accepts_crlf_and_skips_blank_lines() {
        every_chunking(
            b"\n\r\n  \n{\"a\":1}\r\n\t\r\n{\"b\":2}\n\n",
            100,
            &[ok("{\"a\":1}"), ok("{\"b\":2}")],
        );
    }

    #[test]
    fn unterminated_last_line_counts_at_eof() {
        every_chunking(
            b"{\"a\":1}\n{\"b\":2}",
            100,
            &[ok("{\"a\":1}"), ok("{\"b\":2}")],
        );
        every_chunking(b"{\"b\":2}\r", 100, &[ok("{\"b\":2}")]);
    }

    #[test]
    fn too_long_line_is_reported_and_stream_continues() {
        let too_long = Err((8, 12));
        every_chunking(
            b"{\"a\":1}\n123456789012\n{\"b\":2}\n",
            8,
            &[ok("{\"a\":1}"), too_long, ok("{\"b\":2}")],
        );
    }

    #[test]
    fn line_exactly_at_limit_passes_with_crlf() {
        every_chunking(
            b"12345678\r\n123456789\r\n",
            8,
            &[ok("12345678"), Err((8, 9))],
        );
    }

    #[test]
    fn too_long_unterminated_line_reported_at_eof() {
        every_chunking(b"ok\n0123456789abcdef", 8, &[ok("ok"), Err((8, 16))]);
    }

    #[test]
    fn over_long_line_is_not_buffered() {
        let mut dec = LineDecoder::new(16);
        let mut buf = BytesMut::new();
        for _ in 0..1000 {
            buf.extend_from_slice(&[b'x'; 1024]);
            assert!(dec.decode(&mut buf).is_none());
            assert!(buf.len() <= 1024, "discarded bytes must not accumulate");
        }
        buf.extend_from_slice(b"x\nnext\n");
        match dec.decode(&mut buf) {
            Some(Err(FrameError::TooLong { limit, len, head })) => {
                assert_eq!((limit, len), (16, 1024 * 1000 + 1));
                assert_eq!(head.len(), HEAD_BYTES);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(dec.decode(&mut buf), Some(Ok(Bytes::from_static(b"next"))));
    }

    #[test]
    fn dropped_line_head_is_the_same_under_every_chunking() {
        // Found by the chunking property test: with a limit below HEAD_BYTES, the head used
        // to be whatever the read that began discarding held (too short, or ending in the
        // `\r` of the line ending).
        for (input, max, head) in [
            (&b"0123456789\r\nok\n"[..], 4, &b"0123456789"[..]),
            (b"012345678\r\n", 7, b"012345678"),
            (b"0123456789\r", 4, b"0123456789"),
        ] {
            for chunk in 1..=input.len() {
                let mut dec = LineDecoder::new(max);
                let mut buf = BytesMut::new();
                let mut heads = Vec::new();
                for piece in input.chunks(chunk) {
                    buf.extend_from_slice(piece);
                    while let Some(r) = dec.decode(&mut buf) {
                        heads.extend(r.err());
                    }
                }
                heads.extend(dec.decode_eof(&mut buf).and_then(Result::err));
                match &heads[..] {
                    [FrameError::TooLong { head: got, .. }] => {
                        assert_eq!(&got[..], head, "chunk {chunk}")
                    }
                    other => panic!("chunk {chunk}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn does_not_rescan_a_growing_line() {
        // A 1 MiB line arriving in 1 KiB pieces must be found once, not re-searched
        // from the start each time; this checks the resume offset is kept correctly.
        let mut dec = LineDecoder::new(DEFAULT_MAX_LINE);
        let mut buf = BytesMut::new();
        for _ in 0..1024 {
            buf.extend_from_slice(&[b'a'; 1024]);
            assert!(dec.decode(&mut buf).is_none());
            assert_eq!(dec.scanned, buf.len());
        }
        buf.extend_from_slice(b"\n");
        assert_eq!(dec.decode(&mut buf).unwrap().unwrap().len(), 1024 * 1024);
    }

    #[test]
    fn dropped_line_keeps_its_head() {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\",\"params\":\"{}\"}}\n",
            "x".repeat(1000)
        );
        for chunk in [1, 7, 100, 2000] {
            let mut dec = LineDecoder::new(64);
            let mut buf = BytesMut::new();
            let mut got = None;
            for piece in line.as_bytes().chunks(chunk) {
                buf.extend_from_slice(piece);
                if let Some(r) = dec.decode(&mut buf) {
                    got = Some(r);
                }
            }
            match got {
                Some(Err(FrameError::TooLong { head, .. })) => {
                    assert!(
                        head.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":7"),
                        "chunk {chunk}"
                    )
                }
                other => panic!("chunk {chunk}: {other:?}"),
            }
        }
    }
}
