//! One run of a third-party client (or any program) as a child process, to its end: its
//! stdout, stderr and exit status, within a time limit, with every process it started marked
//! and checked gone afterwards. Knows processes and JSON lines, not what the client does.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::marked_processes::{MARK_VARIABLE, MarkedProcesses, mark};

/// What a finished run left.
#[derive(Debug)]
pub struct ClientRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// The command line of every process the run started (the client, the conductor, its
    /// components, whatever they started), all gone by the time the run is returned.
    pub processes: Vec<String>,
}

impl ClientRun {
    /// Runs `command` with stdin closed and a unique mark in its environment; kills it after
    /// `limit`. Panics when the run leaves a process behind, or did not end in time.
    pub fn run(label: &str, command: Command, limit: Duration) -> Self {
        Self::run_with_stdin(label, command, Stdio::null(), limit)
    }

    /// Like [`ClientRun::run`], with `stdin` as the program's standard input.
    pub fn run_with_stdin(label: &str, command: Command, stdin: Stdio, limit: Duration) -> Self {
        let mark = mark(label);
        let watch = MarkedProcesses::watch(&mark);
        let mut run = Self::run_marked(label, command, stdin, limit, &mark);
        run.processes = watch.assert_all_gone(Duration::from_secs(10));
        run
    }

    /// Runs `command` with `mark` in its environment until it ends (killed after `limit`),
    /// leaving the processes it started to the caller: `processes` is empty.
    pub fn run_marked(
        label: &str,
        mut command: Command,
        stdin: Stdio,
        limit: Duration,
        mark: &str,
    ) -> Self {
        let mut child = command
            .env(MARK_VARIABLE, mark)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let stdout = read_all_in_background(child.stdout.take().expect("piped stdout"));
        let stderr = read_all_in_background(child.stderr.take().expect("piped stderr"));
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the client") {
                break Some(status);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = stdout.finish();
        let stderr = stderr.finish();
        let Some(status) = status else {
            panic!("{label} did not end within {limit:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        };
        Self {
            status,
            stdout,
            stderr,
            processes: Vec::new(),
        }
    }

    /// The JSON lines of stdout (other lines are left out).
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Everything the run printed, for assertion messages.
    pub fn output(&self) -> String {
        format!(
            "status {}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.stdout, self.stderr
        )
    }

    /// Panics unless one of the run's processes had a command line containing `needle`.
    pub fn assert_ran(&self, needle: &str) {
        assert!(
            self.processes.iter().any(|p| p.contains(needle)),
            "no process of the run ran {needle}: {:#?}",
            self.processes
        );
    }
}

/// A pipe read to its end on a thread of its own.
struct PipeReader {
    text: Arc<Mutex<Vec<u8>>>,
    ended: Receiver<()>,
}

/// How long a pipe may stay open after the program that was given it ended: a process it
/// left behind may hold it, and the process check says which.
const PIPE_GRACE: Duration = Duration::from_secs(10);

impl PipeReader {
    /// What was read once the pipe ended, or [`PIPE_GRACE`] passed.
    fn finish(self) -> String {
        let _ = self.ended.recv_timeout(PIPE_GRACE);
        let bytes = self.text.lock().expect("pipe text lock");
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

fn read_all_in_background(mut stream: impl Read + Send + 'static) -> PipeReader {
    let text = Arc::new(Mutex::new(Vec::new()));
    let (end, ended) = std::sync::mpsc::channel();
    let sink = text.clone();
    std::thread::spawn(move || {
        let _end = end;
        let mut buffer = [0u8; 8192];
        while let Ok(n @ 1..) = stream.read(&mut buffer) {
            sink.lock()
                .expect("pipe text lock")
                .extend_from_slice(&buffer[..n]);
        }
    });
    PipeReader { text, ended }
}
