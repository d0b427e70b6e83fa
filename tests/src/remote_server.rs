//! A remote agent for the tests: `test-remote-agent` (the official SDK's agent and HTTP /
//! WebSocket server) started on a loopback port, its address read from its first line.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::binaries::{Binaries, REMOTE_AGENT};

/// A running `test-remote-agent`, killed when dropped.
pub struct RemoteServer {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub address: String,
    /// Kept open: the server's stdout is not read after its first line.
    _stdout: BufReader<ChildStdout>,
}

impl RemoteServer {
    /// Starts the server on any free port, with `args` (`--token T`).
    pub fn start(binaries: &Binaries, args: &[&str]) -> Self {
        Self::start_on(binaries, 0, args)
    }

    /// Starts the server on `port` (0: any free one), waiting until it accepts connections.
    pub fn start_on(binaries: &Binaries, port: u16, args: &[&str]) -> Self {
        let program = binaries.workspace_program(&REMOTE_AGENT);
        let mut child = Command::new(&program)
            .arg("--port")
            .arg(port.to_string())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the server's first line");
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the server: {line:?}"))
            .to_string();
        Self {
            child,
            address,
            _stdout: stdout,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        let (_, port) = self.address.rsplit_once(':').expect("host:port");
        port.parse().expect("a port number")
    }

    /// `scheme://ADDRESS/acp`.
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}/acp", self.address)
    }

    /// Waits for the server to exit on its own (as `drop` makes it).
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the remote agent did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
