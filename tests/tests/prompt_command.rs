//! `acp-conductor prompt`: plays the editor for one prompt through the chain, answering
//! permission requests as told, printing the agent's words, leaving no process behind; exits
//! 78 on a bad configuration, 1 when the chain fails, and passes a Ctrl-C on to its conductor.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use acp_conductor_tests::test_chain::fresh_dir;
use acp_conductor_tests::{TestChain, binaries, processes};

fn prompt(chain: &TestChain, permissions: &str, text: &str) -> Output {
    let config = chain.write_config();
    Command::new(&chain.binaries.conductor)
        .args(["prompt", "--config"])
        .arg(&config)
        .args(["--permissions", permissions, text])
        .output()
        .expect("run acp-conductor prompt")
}

fn prompt_through_a_proxy(label: &str, permissions: &str, expected: &str) {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, label, 1);
    chain.agent_args(&["--updates", "1"]);
    let output = prompt(&chain, permissions, "permission please");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for text in ["update 1/1 for permission please", expected] {
        assert!(
            stdout.contains(text),
            "stdout should contain `{text}`:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    let remaining = processes::wait_until_gone(
        &chain.fixture_pids(),
        acp_conductor_tests::editor::patience(),
    );
    assert!(
        remaining.is_empty(),
        "still running after `prompt` exited: {remaining:?}"
    );
}

#[test]
fn prompt_command_allows_permission_when_told_to() {
    prompt_through_a_proxy("prompt-allow", "allow", "permission selected allow-once");
}

#[test]
fn prompt_command_rejects_permission_when_told_to() {
    prompt_through_a_proxy("prompt-deny", "deny", "permission selected reject-once");
}

#[test]
fn prompt_command_exits_78_on_an_invalid_config() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "prompt-bad-config");
    chain.conductor_setting("max_line", "\"lots\"");
    let output = prompt(&chain, "deny", "hello");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(78), "stderr:\n{stderr}");
    assert!(
        stderr.starts_with(&format!("{}:2:12: ", chain.config_path().display())),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn prompt_command_says_the_chain_failed_when_the_agent_cannot_run() {
    let binaries = binaries!();
    let dir = fresh_dir("prompt-failed-chain");
    let config = dir.join("conductor.toml");
    std::fs::write(&config, "[agent]\ncommand = \"/bin/false\"\n").unwrap();
    let output = Command::new(&binaries.conductor)
        .args(["prompt", "--config"])
        .arg(&config)
        .arg("hello")
        .output()
        .expect("run acp-conductor prompt");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(output.stdout.is_empty());
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.iter().any(|line| line.starts_with(
            "acp-conductor: initialize failed: agent `agent` exited with status 1 (JSON-RPC error -32001)"
        )),
        "{stderr}"
    );
    assert_eq!(
        lines.last(),
        Some(&"acp-conductor: the chain failed; run with --log debug for details"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Ctrl-C in a terminal reaches the prompt client (and its conductor): the conductor answers
/// the prompt still running, and the client prints what it got and exits 1.
#[test]
fn prompt_command_passes_sigint_on_and_prints_what_it_got() {
    let binaries = binaries!();
    let chain = TestChain::with_demo_agent(&binaries, "prompt-sigint");
    let config = chain.write_config();
    let child = Command::new(&chain.binaries.conductor)
        .args(["prompt", "--config"])
        .arg(&config)
        .arg("go slow")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run acp-conductor prompt");
    let pid = child.id();
    // The demo agent says "tick N" every 100 ms once the turn has started.
    let started = Instant::now();
    let mut descendants = Vec::new();
    while started.elapsed() < acp_conductor_tests::editor::patience() {
        descendants = processes::descendants(pid);
        if descendants.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: plain syscall on our own child.
    unsafe {
        libc::kill(pid as i32, libc::SIGINT);
    }
    let output = child
        .wait_with_output()
        .expect("wait for acp-conductor prompt");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("> go slow\ntick 1\n"), "{stdout}");
    assert!(!stdout.contains("[stop]"), "{stdout}");
    assert_eq!(
        stderr,
        "acp-conductor: session/prompt failed: the conductor received SIGINT and is shutting \
         down (JSON-RPC error -32002)\n"
    );
    let remaining =
        processes::wait_until_gone(&descendants, acp_conductor_tests::editor::patience());
    assert!(remaining.is_empty(), "still running: {remaining:?}");
}
