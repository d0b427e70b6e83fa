//! What the fixture programs share: their command line, the recording of what they
//! receive and send, their pid file and their stdout. Knows nothing of what a fixture answers.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Mutex;

/// `--name value` pairs and bare `--flag`s of a fixture's command line.
pub struct FixtureArgs {
    values: HashMap<String, String>,
    flags: Vec<String>,
}

impl FixtureArgs {
    /// Parses the process's arguments; `flags` names the options that take no value.
    pub fn from_env(flags: &[&str]) -> Self {
        Self::parse(std::env::args().skip(1), flags)
    }

    pub fn parse(args: impl IntoIterator<Item = String>, flags: &[&str]) -> Self {
        let mut values = HashMap::new();
        let mut set_flags = Vec::new();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let Some(name) = arg.strip_prefix("--") else {
                panic!("unexpected argument `{arg}`");
            };
            if flags.contains(&name) {
                set_flags.push(name.to_string());
            } else {
                let value = args
                    .next()
                    .unwrap_or_else(|| panic!("--{name} needs a value"));
                values.insert(name.to_string(), value);
            }
        }
        Self {
            values,
            flags: set_flags,
        }
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }
}

/// Appends every received line to a file, flushed line by line so that a test reading
/// it after a round trip sees everything received before that round trip.
pub struct Recording {
    file: Option<File>,
}

impl Recording {
    pub fn open(path: Option<&str>) -> Self {
        let file = path.map(|path| {
            File::options()
                .create(true)
                .append(true)
                .open(path)
                .unwrap_or_else(|e| panic!("cannot open recording {path}: {e}"))
        });
        Self { file }
    }

    pub fn record(&mut self, line: &str) {
        if let Some(file) = &mut self.file {
            // One write per line: the line and its newline together.
            file.write_all(format!("{line}\n").as_bytes())
                .and_then(|()| file.flush())
                .expect("write recording");
        }
    }
}

/// Where [`send_lines`] and [`send_bytes`] record what they send, once [`record_sent`] set it.
static SENT: Mutex<Option<File>> = Mutex::new(None);

/// Records everything this fixture sends on stdout from now on in `path` (when a path was
/// given), appended as it is written: the conformance suite needs to know which request a
/// response the conductor wrote to this fixture answers.
pub fn record_sent(path: Option<&str>) {
    let Some(path) = path else {
        return;
    };
    let file = File::options()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open recording {path}: {e}"));
    *SENT.lock().expect("sent recording lock") = Some(file);
}

/// Appends `bytes` to the recording of what was sent, if there is one.
fn note_sent(bytes: &[u8]) {
    if let Some(file) = SENT.lock().expect("sent recording lock").as_mut() {
        file.write_all(bytes)
            .and_then(|()| file.flush())
            .expect("write recording");
    }
}

/// Writes this process's pid to `path`, so a test can check it is gone after shutdown.
pub fn write_pid_file(path: Option<&str>) {
    if let Some(path) = path {
        std::fs::write(path, std::process::id().to_string())
            .unwrap_or_else(|e| panic!("cannot write pid file {path}: {e}"));
    }
}

/// Writes `text` to `path` when a path was given.
pub fn write_file(path: Option<&str>, text: &str) {
    if let Some(path) = path {
        std::fs::write(Path::new(path), text)
            .unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    }
}

/// Notes in `path` that stdin reached EOF: a fixture stopped by its peer closing the pipe
/// leaves this file, one killed by a signal before that does not.
pub fn note_stdin_eof(path: Option<&str>) {
    write_file(path, "eof");
}

/// Sends lines on stdout. Several lines given together go out in a single `write`, which
/// is what the ordering tests rely on.
pub fn send_lines(lines: &[String]) {
    let mut buffer = String::new();
    for line in lines {
        buffer.push_str(line);
        buffer.push('\n');
    }
    note_sent(buffer.as_bytes());
    let mut stdout = std::io::stdout().lock();
    // Stdout is line-buffered: with an empty buffer, data ending in a newline is handed to
    // one write(2) as a whole. A failed write means the peer has gone; the read loop sees
    // EOF next and the fixture exits then.
    let _ = stdout
        .write_all(buffer.as_bytes())
        .and_then(|()| stdout.flush());
}

pub fn send_line(line: String) {
    send_lines(&[line]);
}

/// Every line of stdin, without its line ending, until EOF.
pub fn stdin_lines() -> impl Iterator<Item = String> {
    std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .map(|mut line| {
            if line.ends_with('\r') {
                line.pop();
            }
            line
        })
}

/// Writes `bytes` to stdout exactly as given, in one write; `false` once the peer is gone.
pub fn send_bytes(bytes: &[u8]) -> bool {
    note_sent(bytes);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Replaces the contents of `path` with `text` at once (written aside, then renamed), so
/// that a reader never sees a half-written file.
pub fn replace_file(path: &str, text: &str) {
    let aside = format!("{path}.new");
    std::fs::write(&aside, text)
        .and_then(|()| std::fs::rename(&aside, path))
        .unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
}
