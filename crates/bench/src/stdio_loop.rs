//! The line loop the bench agent and bench proxy run on stdin/stdout: buffered reads,
//! output coalesced and flushed only when no more input is waiting. Must not know ACP.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::fd::AsFd;

/// Big enough that a stream of small messages is read and written in few syscalls.
const BUFFER_BYTES: usize = 256 * 1024;

/// Feeds every non-blank line of stdin (without its line ending) to `handle`, which appends
/// its output lines to the given buffer. Returns at end of input.
pub fn serve(mut handle: impl FnMut(&[u8], &mut Vec<u8>)) -> io::Result<()> {
    // Own handles on fds 0 and 1: std's Stdin/Stdout add a buffer and a line writer of
    // their own that would only copy the bytes once more.
    let input = File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let output = File::from(io::stdout().as_fd().try_clone_to_owned()?);
    serve_streams(input, output, &mut handle)
}

/// [`serve`] over any streams.
pub fn serve_streams(
    input: impl io::Read,
    output: impl Write,
    handle: &mut dyn FnMut(&[u8], &mut Vec<u8>),
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(BUFFER_BYTES, input);
    let mut writer = BufWriter::with_capacity(BUFFER_BYTES, output);
    let mut line = Vec::new();
    let mut out = Vec::new();
    loop {
        if reader.buffer().is_empty() {
            // The next read may block: whoever waits for our output must have it first.
            writer.flush()?;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let frame = trim_line_end(&line);
        if frame.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.clear();
        handle(frame, &mut out);
        writer.write_all(&out)?;
    }
    writer.flush()
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_over_each_line_without_its_ending() {
        let input: &[u8] = b"one\r\n\n  \ntwo\nthree";
        let mut output = Vec::new();
        let mut seen = Vec::new();
        serve_streams(input, &mut output, &mut |frame, out| {
            seen.push(String::from_utf8(frame.to_vec()).unwrap());
            out.extend_from_slice(frame);
            out.push(b'\n');
        })
        .unwrap();
        assert_eq!(seen, ["one", "two", "three"]);
        assert_eq!(output, b"one\ntwo\nthree\n");
    }
}
