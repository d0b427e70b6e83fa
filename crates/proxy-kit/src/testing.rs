//! For a proxy's own tests: run its built binary over stdio the way a conductor does, with
//! every input line written at once, and collect what it wrote back. Native targets only.

use std::io::Write;
use std::process::{Command, Stdio};

/// What a proxy run wrote and how it ended.
#[derive(Debug)]
pub struct StdioRun {
    /// Its stdout, one protocol line an entry.
    pub stdout: Vec<String>,
    pub stderr: String,
    /// The exit code; `None` if a signal ended it.
    pub code: Option<i32>,
}

/// Starts `command` with piped stdio (and `ACP_PROXY_LOG` unset, so its stderr holds only
/// what it always says), writes `input` one line each, closes its stdin and waits for it.
///
/// ```no_run
/// let run = proxy_kit::testing::run_over_stdio(
///     std::process::Command::new("target/debug/my-proxy"),
///     &[r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{}}"#],
/// );
/// assert_eq!(run.code, Some(0));
/// ```
pub fn run_over_stdio(mut command: Command, input: &[impl AsRef<str>]) -> StdioRun {
    let mut child = command
        .env_remove("ACP_PROXY_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", command.get_program()));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let mut text = String::new();
    for line in input {
        text.push_str(line.as_ref());
        text.push('\n');
    }
    // A proxy that exits early closes its stdin; what it did not read shows in its output.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let output = child.wait_with_output().expect("wait for the proxy");
    writer.join().expect("the writer thread does not panic");
    StdioRun {
        stdout: String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}
