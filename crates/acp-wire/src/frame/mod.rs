//! Line framing: ACP's stdio transport is one JSON-RPC message per line. [`LineDecoder`]
//! splits bytes into frames, [`LineEncoder`] joins frames into bytes. Knows bytes only.
//!
//! A frame is one line without its newline. Both sides are pure: the transport decides when
//! to read and when to write, in the spirit of tokio-util's `Decoder`/`Encoder` split.

mod decoder;
mod encoder;
mod top_level_scan;

pub use decoder::LineDecoder;
pub use encoder::LineEncoder;
pub use top_level_scan::{MAX_ID_BYTES, TopLevel, TopLevelScan};

/// Default cap on one line: 64 MiB, enough for a prompt carrying large files.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// A line that could not be framed. The stream goes on after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The line was longer than the limit; its bytes were discarded as they came, not
    /// buffered, and scanned on the way ([`TopLevelScan`]) so that its `id` can still be
    /// answered wherever it was in the line.
    TooLong {
        limit: usize,
        len: usize,
        seen: TopLevel,
    },
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLong { limit, len, .. } => {
                write!(f, "line of {len} bytes exceeds the limit of {limit} bytes")
            }
        }
    }
}

impl std::error::Error for FrameError {}
