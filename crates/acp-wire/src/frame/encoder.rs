//! Line framing, writing side: frames become the bytes of a newline-delimited stream, gathered
//! into write batches. Knows bytes only; the transport decides when a batch is written out.

use bytes::{BufMut, Bytes, BytesMut};

/// Joins frames into newline-terminated lines, batched for few writes and few copies.
///
/// Frames shorter than the coalescing size are copied together into one buffer, each
/// followed by its newline; longer ones are passed on as they are, so a large message is
/// never copied, and their newline starts the next buffer. A batch is a list of chunks to
/// write in order.
///
/// ```
/// use acp_wire::frame::LineEncoder;
/// use bytes::Bytes;
/// let mut enc = LineEncoder::new(16);
/// assert!(!enc.encode(Bytes::from_static(b"{\"a\":1}")));
/// assert!(enc.encode(Bytes::from_static(b"{\"big\":\"0123456789\"}"))); // time to write
/// let written: Vec<u8> = enc.chunks().concat();
/// assert_eq!(written, b"{\"a\":1}\n{\"big\":\"0123456789\"}\n");
/// assert_eq!(enc.written(), 27); // frame bytes, newlines not counted
/// assert!(enc.is_empty());
/// ```
#[derive(Debug)]
pub struct LineEncoder {
    coalesce: usize,
    /// Chunks of the batch that are complete, in write order.
    sealed: Vec<Bytes>,
    /// Small frames copied together, each with its newline; the batch's last chunk.
    open: BytesMut,
    /// Bytes of the frames in the batch, newlines not counted.
    frame_bytes: usize,
}

impl LineEncoder {
    /// An encoder that copies frames shorter than `coalesce` bytes and writes longer ones
    /// as they are; a batch is ready to write once it holds `coalesce` bytes.
    pub fn new(coalesce: usize) -> Self {
        LineEncoder {
            coalesce: coalesce.max(1),
            sealed: Vec::new(),
            open: BytesMut::new(),
            frame_bytes: 0,
        }
    }

    /// Adds one frame (without its newline) to the batch. Returns true once the batch
    /// holds enough to be worth writing out now.
    ///
    /// A frame must not contain a newline: it would split into two lines on the wire.
    pub fn encode(&mut self, frame: Bytes) -> bool {
        debug_assert!(
            memchr::memchr(b'\n', &frame).is_none(),
            "a frame must not contain a newline"
        );
        self.frame_bytes += frame.len();
        if frame.len() >= self.coalesce {
            if !self.open.is_empty() {
                self.sealed.push(self.open.split().freeze());
            }
            self.sealed.push(frame);
            self.open.put_u8(b'\n');
            return true;
        }
        // Grows as batches need (a link that only ever sends small batches keeps a small
        // buffer); once written, the buffer is reused.
        self.open.reserve(frame.len() + 1);
        self.open.put_slice(&frame);
        self.open.put_u8(b'\n');
        self.open.len() >= self.coalesce
    }

    /// The batch as chunks to write in order. Call [`written`](Self::written) once they are.
    pub fn chunks(&mut self) -> &[Bytes] {
        if !self.open.is_empty() {
            self.sealed.push(self.open.split().freeze());
        }
        &self.sealed
    }

    /// Empties the batch after its chunks were written; returns the bytes of the frames
    /// it held (what a byte-counted queue of frames can release).
    pub fn written(&mut self) -> usize {
        self.sealed.clear();
        self.open.clear();
        std::mem::take(&mut self.frame_bytes)
    }

    /// True when no frame is waiting to be written.
    pub fn is_empty(&self) -> bool {
        self.sealed.is_empty() && self.open.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::LineDecoder;

    /// Encodes `frames` writing a batch whenever the encoder says so (and at the end),
    /// and returns every batch's bytes.
    fn encode_all(frames: &[&[u8]], coalesce: usize) -> Vec<Vec<u8>> {
        let mut enc = LineEncoder::new(coalesce);
        let mut batches = Vec::new();
        let mut expected_frame_bytes = 0;
        for frame in frames {
            expected_frame_bytes += frame.len();
            if enc.encode(Bytes::copy_from_slice(frame)) {
                batches.push(enc.chunks().concat());
                assert_eq!(enc.written(), expected_frame_bytes);
                expected_frame_bytes = 0;
            }
        }
        if !enc.is_empty() {
            batches.push(enc.chunks().concat());
            assert_eq!(enc.written(), expected_frame_bytes);
        }
        assert!(enc.is_empty());
        batches
    }

    fn lines(frames: &[&[u8]]) -> Vec<u8> {
        frames.iter().flat_map(|f| [*f, b"\n"].concat()).collect()
    }

    #[test]
    fn small_frames_share_one_batch() {
        let frames: [&[u8]; 3] = [b"{\"a\":1}", b"{\"b\":2}", b"{}"];
        assert_eq!(encode_all(&frames, 1024), [lines(&frames)]);
    }

    #[test]
    fn a_batch_is_ready_once_it_holds_the_coalescing_size() {
        let frames: [&[u8]; 4] = [b"aaaa", b"bbbb", b"cc", b"d"];
        // 5 + 5 bytes reach 8: the first two lines go out together.
        assert_eq!(
            encode_all(&frames, 8),
            [b"aaaa\nbbbb\n".to_vec(), b"cc\nd\n".to_vec()]
        );
    }

    #[test]
    fn large_frames_are_not_copied() {
        let big = Bytes::from(vec![b'x'; 100]);
        let mut enc = LineEncoder::new(16);
        assert!(!enc.encode(Bytes::from_static(b"small")));
        assert!(enc.encode(big.clone()));
        let chunks = enc.chunks().to_vec();
        assert_eq!(chunks.len(), 3, "small lines, the large frame, its newline");
        assert_eq!(&chunks[0][..], b"small\n");
        assert_eq!(
            chunks[1].as_ptr(),
            big.as_ptr(),
            "the frame itself, not a copy"
        );
        assert_eq!(&chunks[2][..], b"\n");
        assert_eq!(enc.written(), 105);
    }

    #[test]
    fn the_newline_of_a_large_frame_leads_the_next_lines() {
        let big = [b'y'; 20];
        let frames: [&[u8]; 3] = [&big, b"a", b"b"];
        let mut enc = LineEncoder::new(16);
        assert!(enc.encode(Bytes::copy_from_slice(frames[0])));
        assert!(!enc.encode(Bytes::from_static(b"a")));
        assert!(!enc.encode(Bytes::from_static(b"b")));
        let chunks = enc.chunks().to_vec();
        assert_eq!(chunks.len(), 2);
        assert_eq!(&chunks[1][..], b"\na\nb\n");
        assert_eq!(chunks.concat(), lines(&frames));
    }

    #[test]
    fn empty_encoder_has_nothing_to_write() {
        let mut enc = LineEncoder::new(8);
        assert!(enc.is_empty());
        assert!(enc.chunks().is_empty());
        assert_eq!(enc.written(), 0);
    }

    /// Deterministic pseudo-random frames: lengths around the coalescing size.
    fn frames(seed: u64, count: usize, max_len: usize) -> Vec<Vec<u8>> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        (0..count)
            .map(|i| {
                let len = 1 + next() % max_len;
                (0..len).map(|j| b'a' + ((i + j) % 26) as u8).collect()
            })
            .collect()
    }

    #[test]
    fn encoding_then_decoding_gives_the_frames_back_under_every_chunking() {
        for seed in 0..20 {
            let frames = frames(seed, 12, 40);
            let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
            for coalesce in [1, 7, 16, 64] {
                let stream = encode_all(&refs, coalesce).concat();
                assert_eq!(stream, lines(&refs), "seed {seed}, coalesce {coalesce}");
                for chunk in [1, 3, 17, stream.len()] {
                    let mut dec = LineDecoder::new(1024);
                    let mut buf = BytesMut::new();
                    let mut decoded = Vec::new();
                    for piece in stream.chunks(chunk) {
                        buf.extend_from_slice(piece);
                        while let Some(frame) = dec.decode(&mut buf) {
                            decoded.push(frame.unwrap().to_vec());
                        }
                    }
                    assert_eq!(decoded, frames, "seed {seed}, chunk {chunk}");
                }
            }
        }
    }
}
