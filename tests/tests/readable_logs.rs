//! Logs a person can read, from the real binary at `info`: one line when the chain is up
//! (each component, how it runs, its pid, its dialect, how long it took to start), one when
//! it ends (why, how long, how many requests were answered with errors), and component
//! stderr relayed without terminal escape sequences, unless the conductor's own stderr is a
//! terminal, where colours are kept and nothing else is.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::FromRawFd;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use acp_conductor_tests::agent_script::Recipe;
use acp_conductor_tests::editor::{initialize_params, patience};
use acp_conductor_tests::{TestChain, binaries};

/// What the test-agent writes to stderr as it starts: a coloured line, a line behind a
/// window-title sequence, a spinner frame that clears its line first.
fn coloured_stderr() -> String {
    Recipe::new()
        .line("\x1b[31merror\x1b[0m: coloured")
        .line("\x1b]0;agent title\x07after a title")
        .line("\x1b[2K\x1b[1G\u{280b} spinner")
        .words()
}

#[test]
fn the_chain_up_and_end_lines_and_component_stderr_without_escapes_when_not_a_terminal() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "logs-readable", 1);
    chain.agent_args(&["--stderr", &coloured_stderr()]);
    // `info` is what `run` logs at by default; given here so that the environment the tests
    // run in cannot change it.
    let mut editor = chain.launch_with(&["--log", "info"]);
    editor.initialize();

    let stderr = editor.wait_for_stderr("chain up after");
    let up: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("chain up after"))
        .collect();
    assert_eq!(up.len(), 1, "{stderr}");
    let expected = [
        format!(
            ": p1 (proxy, native pid {}, dialect proxy/*, started in ",
            chain.pid("p1")
        ),
        format!(
            " → agent (agent, native pid {}, started in ",
            chain.pid("agent")
        ),
    ];
    for part in &expected {
        assert!(up[0].contains(part.as_str()), "{part:?} in {}", up[0]);
    }

    let session = editor.new_session();
    editor.prompt(&session, "hi").result();
    // Refused by the conductor: one of the editor's requests answered with an error.
    editor.request("initialize", initialize_params()).error();
    editor.close_stdin();
    assert_eq!(editor.wait_exit().code(), Some(0), "{}", editor.stderr());

    let stderr = editor.wait_for_stderr("chain ended after");
    let end = stderr
        .lines()
        .find(|l| l.contains("chain ended after"))
        .expect("waited for");
    assert!(
        end.contains(
            ": the editor closed the conductor's stdin; requests answered with an error: 1 of 4 from the editor, "
        ),
        "{end}"
    );

    for relayed in [
        "stderr: error: coloured component=agent",
        "stderr: after a title component=agent",
        "stderr: \u{280b} spinner component=agent",
    ] {
        assert!(stderr.contains(relayed), "{relayed:?} in:\n{stderr}");
    }
    assert!(
        !stderr.contains('\x1b'),
        "an escape reached the log:\n{stderr}"
    );
    assert!(
        !stderr.contains("\\x1b") && !stderr.contains("agent title"),
        "an escape sequence reached the log as text:\n{stderr}"
    );
}

#[test]
fn on_a_terminal_component_colours_are_kept_and_other_sequences_removed() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "logs-terminal");
    chain.agent_args(&["--stderr", &coloured_stderr()]);
    let config = chain.write_config();
    let (master, slave) = pty();
    let mut conductor = Command::new(&binaries.conductor)
        .args(["run", "--config"])
        .arg(&config)
        .args(["--log", "info"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(slave))
        .spawn()
        .expect("start the conductor");
    // The terminal's output until every holder of its other end has closed it.
    let (log_tx, log_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut master = master;
        let mut log = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the conductor, the one holder of the other end, has exited.
        while let Ok(n @ 1..) = master.read(&mut buf) {
            log.extend_from_slice(&buf[..n]);
        }
        let _ = log_tx.send(log);
    });

    let mut stdin = conductor.stdin.take().expect("piped");
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()
    });
    writeln!(stdin, "{request}").expect("write initialize");
    let mut answer = String::new();
    BufReader::new(conductor.stdout.take().expect("piped"))
        .read_line(&mut answer)
        .expect("read the answer");
    assert!(answer.contains("\"result\""), "{answer}");
    drop(stdin);
    assert_eq!(conductor.wait().expect("wait").code(), Some(0));
    let log = log_rx
        .recv_timeout(patience())
        .expect("the terminal was closed");
    let log = String::from_utf8_lossy(&log);

    // The colours, and a reset at the end of the line so that none leaks into the next.
    assert!(
        log.contains("\x1b[31merror\x1b[0m: coloured\x1b[0m"),
        "coloured line in:\n{log:?}"
    );
    // A title or a cursor movement would garble the lines around it: removed.
    assert!(
        !log.contains("agent title") && !log.contains("\x1b]") && !log.contains("\x1b[2K"),
        "{log:?}"
    );
    assert!(log.contains("after a title"), "{log:?}");
    assert!(log.contains("\u{280b} spinner"), "{log:?}");
    assert!(!log.contains("\\x1b"), "escaped as text:\n{log:?}");
    assert!(log.contains("chain up after"), "{log:?}");
    assert!(log.contains("chain ended after"), "{log:?}");
}

/// A new pseudo-terminal: (the side a terminal emulator reads, the side a program writes).
fn pty() -> (File, File) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: two out-pointers to valid ints; no name, default terminal settings and size.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty succeeded: both are open descriptors that nothing else owns.
    unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) }
}
