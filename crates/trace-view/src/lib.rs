//! acp-trace-view: the trace viewer (`acp-conductor trace view`): a trace file (docs/trace.md,
//! format version 1) as one self-contained HTML page, written to a file or served with the
//! file followed as it grows. Reads trace files only; knows nothing of how they are written.
//!
//! The page does the reading (lifelines, pairing, hops, summaries): it has to anyway for the
//! records a live view appends. This side only splits the file into records, keeping each
//! line's text as it is, and drops what is not a JSON object (a truncated last line, a stray
//! line); record types and members it does not know are the page's to ignore.

mod error;
mod page;
mod serve;

use std::path::Path;

pub use error::{ServeAddrError, ViewError};
pub use page::{LiveConfig, page};
pub use serve::serve;

/// Reads `file` and writes its page to `output`; returns how many records it holds.
pub fn write_page(file: &Path, output: &Path) -> Result<usize, ViewError> {
    let bytes = std::fs::read(file).map_err(|source| ViewError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let split = split_records(&bytes, true);
    split.report(file);
    let title = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let html = page(&split.records, &title, None);
    std::fs::write(output, html).map_err(|source| ViewError::Write {
        path: output.to_path_buf(),
        source,
    })?;
    Ok(split.records.len())
}

/// A trace's bytes cut into records.
#[derive(Debug, Default)]
pub struct Split {
    /// Each record's line, without its newline (nor a `\r` before it).
    pub records: Vec<String>,
    /// Lines that are not a JSON object: how many, and the 1-based number of the first.
    pub skipped: usize,
    pub first_skipped: Option<usize>,
    /// Bytes consumed: up to and including the last newline, or everything when the tail was
    /// taken too.
    pub consumed: usize,
}

impl Split {
    fn report(&self, file: &Path) {
        if let Some(first) = self.first_skipped {
            eprintln!(
                "trace view: {} line(s) of {} are not JSON records and are left out (the first is line {first})",
                self.skipped,
                file.display(),
            );
        }
    }
}

/// Cuts `bytes` into records. The text after the last newline is a record only when
/// `take_tail` and it is a whole JSON object (a writer that stopped mid-line left a truncated
/// line, which is dropped); otherwise it is not consumed, for a follower to read again later.
/// `line_offset` is the number of lines before `bytes`, for the report.
pub fn split_records(bytes: &[u8], take_tail: bool) -> Split {
    split_records_from(bytes, take_tail, 0)
}

fn split_records_from(bytes: &[u8], take_tail: bool, line_offset: usize) -> Split {
    let mut split = Split::default();
    let mut start = 0;
    let mut line_number = line_offset;
    while start < bytes.len() {
        let (end, next, whole) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1, true),
            None => (bytes.len(), bytes.len(), false),
        };
        line_number += 1;
        let mut line = &bytes[start..end];
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        let record = as_record(line);
        if !whole && (!take_tail || record.is_none()) {
            // Still being written (or cut short): not consumed.
            break;
        }
        match record {
            Some(text) => split.records.push(text.to_string()),
            None if line.iter().all(u8::is_ascii_whitespace) => {}
            None => {
                split.skipped += 1;
                split.first_skipped.get_or_insert(line_number);
            }
        }
        start = next;
        split.consumed = next;
    }
    split
}

/// The line as text when it is one JSON object.
fn as_record(line: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(line).ok()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_are_records_and_a_truncated_tail_is_not() {
        let text = b"{\"type\":\"header\"}\n{\"type\":\"message\",\"t\":1}\r\n{\"type\":\"mess";
        let split = split_records(text, true);
        assert_eq!(
            split.records,
            ["{\"type\":\"header\"}", "{\"type\":\"message\",\"t\":1}"]
        );
        assert_eq!(split.skipped, 0);
        assert_eq!(split.consumed, text.len() - "{\"type\":\"mess".len());
    }

    #[test]
    fn a_whole_tail_is_taken_only_when_asked() {
        let text = b"{\"a\":1}\n{\"b\":2}";
        assert_eq!(split_records(text, true).records.len(), 2);
        assert_eq!(split_records(text, true).consumed, text.len());
        let following = split_records(text, false);
        assert_eq!(following.records, ["{\"a\":1}"]);
        assert_eq!(following.consumed, 8);
    }

    #[test]
    fn lines_that_are_not_objects_are_counted_and_left_out() {
        let text = b"{\"a\":1}\n\nnot json\n[1,2]\n{\"b\":\n{\"c\":3}\n";
        let split = split_records(text, true);
        assert_eq!(split.records, ["{\"a\":1}", "{\"c\":3}"]);
        assert_eq!(split.skipped, 3);
        assert_eq!(split.first_skipped, Some(3));
    }
}
