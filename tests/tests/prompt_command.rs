//! `acp-conductor prompt`: plays the editor for one prompt through the chain, answering
//! permission requests as told, printing the agent's words, leaving no process behind.

use std::process::{Command, Output};

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
