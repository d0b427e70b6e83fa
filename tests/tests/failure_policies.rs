//! Failure policies with real processes: a killed proxy under `bypass` is routed around and
//! the session goes on; under `restart` it comes back initialized as before; a proxy that
//! cannot start falls back after three failures; one stuck at start is timed out (and killed
//! with its group even though it ignores SIGTERM); a restarted agent's sessions are refused.

use std::path::Path;
use std::time::{Duration, Instant};

use acp_conductor_tests::agent_script::HANGING;
use acp_conductor_tests::editor::{Editor, initialize_params, patience, prompt_params};
use acp_conductor_tests::processes::{is_running, wait_until_gone};
use acp_conductor_tests::scenario::chunk_of;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::Value;

const FAILED: &str = "_acp-conductor/component_failed";
const RESTARTED: &str = "_acp-conductor/component_restarted";

fn kill(pid: u32) {
    // SAFETY: sending a signal has no memory effects.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
}

fn is_method(message: &Value, method: &str) -> bool {
    message["method"] == method
}

/// Waits for `path` to hold a pid other than `old` (a component started again).
fn new_pid(chain: &TestChain, name: &str, old: u32) -> u32 {
    let deadline = Instant::now() + patience();
    loop {
        let pid = chain.pid(name);
        if pid != old {
            return pid;
        }
        assert!(Instant::now() < deadline, "{name} was not started again");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn prompt_ends_turn(editor: &mut Editor, session: &str, text: &str) {
    let exchange = editor.prompt(session, text);
    assert_eq!(
        exchange.result()["stopReason"],
        "end_turn",
        "{}",
        editor.stderr()
    );
}

#[test]
fn a_killed_proxy_under_bypass_is_routed_around_and_the_session_goes_on() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "policy-bypass", 2);
    chain.proxies[0].setting("on_failure", "\"bypass\"");
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    prompt_ends_turn(&mut editor, &session, "before");

    // A prompt is inside the chain when the first proxy dies.
    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|m| chunk_of(m) == Some(HANGING));
    kill(chain.pid("p1"));
    let notice = editor.wait_for(|m| is_method(m, FAILED));
    assert_eq!(notice["params"]["component"], "p1");
    assert_eq!(notice["params"]["action"], "bypass");
    assert_eq!(notice["params"]["exitStatus"]["signal"], 9);
    let answer = editor.wait_for(|m| m["id"] == id && m.get("method").is_none());
    assert_eq!(answer["error"]["code"], -32001);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("proxy `p1` was killed by signal 9; it was taken out of the chain"),
        "{message}"
    );
    assert_eq!(answer["error"]["data"]["component"], "p1");
    assert!(answer["error"]["data"]["stderr"].is_array());

    // The same session goes on through the second proxy alone.
    prompt_ends_turn(&mut editor, &session, "after");
    let p2_saw_after = chain
        .received("p2")
        .iter()
        .any(|m| m["method"] == "session/prompt" && m["params"]["prompt"][0]["text"] == "after");
    assert!(p2_saw_after, "the second proxy carried the prompt");
    let stderr = editor.stderr();
    assert!(
        stderr.contains("proxy `p1` was killed by signal 9"),
        "{stderr}"
    );
}

#[test]
fn a_killed_proxy_under_restart_comes_back_initialized_as_before() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "policy-restart", 1);
    chain.proxies[0].setting("on_failure", "\"restart\"");
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let first = chain.pid("p1");
    kill(first);
    editor.wait_for(|m| is_method(m, FAILED) && m["params"]["action"] == "restart");
    let restarted = editor.wait_for(|m| is_method(m, RESTARTED));
    assert_eq!(restarted["params"]["component"], "p1");
    let second = new_pid(&chain, "p1", first);
    assert!(is_running(second));

    prompt_ends_turn(&mut editor, &session, "after the restart");
    // Both instances got the same proxy/initialize; the agent was initialized once.
    let inits: Vec<Value> = chain
        .received("p1")
        .into_iter()
        .filter(|m| m["method"] == "proxy/initialize")
        .collect();
    assert_eq!(inits.len(), 2, "{inits:?}");
    assert_eq!(inits[0]["params"], inits[1]["params"]);
    let agent_inits = chain
        .received("agent")
        .iter()
        .filter(|m| m["method"] == "initialize")
        .count();
    assert_eq!(agent_inits, 1);
}

/// A proxy that exits at once, every time.
fn add_failing_proxy(chain: &mut TestChain, policy: &[(&str, &str)]) {
    let proxy = chain.add_proxy(
        "broken",
        Path::new("/bin/sh"),
        &["-c", "echo broken >&2; exit 3"],
    );
    for (key, value) in policy {
        proxy.setting(key, value);
    }
}

#[test]
fn a_proxy_that_keeps_failing_falls_back_to_bypass_after_three_failures() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "policy-fallback-bypass");
    add_failing_proxy(
        &mut chain,
        &[
            ("on_failure", "\"restart\""),
            ("restart_then", "\"bypass\""),
        ],
    );
    let mut editor = chain.launch();
    // Held while it restarts, then sent around it once restarting stops.
    let result = editor.initialize();
    assert_eq!(result["protocolVersion"], 1);
    let session = editor.new_session();
    prompt_ends_turn(&mut editor, &session, "without it");
    let stderr = editor.stderr();
    assert!(
        stderr.contains("after failing 3 times within 60 s"),
        "{stderr}"
    );
}

#[test]
fn a_proxy_that_keeps_failing_under_restart_stops_the_chain_with_its_stderr() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "policy-fallback-fail");
    add_failing_proxy(&mut chain, &[("on_failure", "\"restart\"")]);
    let mut editor = chain.launch();
    let exchange = editor.request("initialize", initialize_params());
    let error = exchange.error();
    assert_eq!(error["code"], -32001);
    assert_eq!(
        error["message"],
        "proxy `broken` exited with status 3; it failed 3 times within 60 s, so the chain stopped"
    );
    assert_eq!(error["data"]["exitStatus"]["code"], 3);
    assert_eq!(error["data"]["stderr"][0], "broken");
    let status = editor.wait_exit();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn a_proxy_stuck_at_start_is_timed_out_bypassed_and_killed_with_its_group() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "policy-startup-timeout");
    let grandchild = chain.dir.join("grandchild.pid");
    let stuck = chain.dir.join("stuck.pid");
    // Ignores SIGTERM (inherited by what it starts), leaves a grandchild behind, and never
    // answers: an `npx` waiting on the network.
    let script = format!(
        "trap '' TERM; sleep 600 & echo $! > {}; echo $$ > {}; exec sleep 600",
        grandchild.display(),
        stuck.display()
    );
    let proxy = chain.add_proxy("stuck", Path::new("/bin/sh"), &["-c", &script]);
    proxy.setting("on_failure", "\"bypass\"");
    proxy.setting("startup_timeout", "\"1s\"");
    let mut editor = chain.launch();
    let result = editor.initialize();
    assert_eq!(result["protocolVersion"], 1);
    let read = |path: &Path| -> u32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let pids = [read(&stuck), read(&grandchild)];
    let left = wait_until_gone(&pids, patience());
    assert!(left.is_empty(), "still running: {left:?}");
    let session = editor.new_session();
    prompt_ends_turn(&mut editor, &session, "around it");
    let stderr = editor.stderr();
    assert!(
        stderr.contains("proxy `stuck` did not answer `initialize` within 1 s"),
        "{stderr}"
    );
}

#[test]
fn a_restarted_agent_refuses_its_old_sessions_by_name_and_serves_new_ones() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "policy-agent-restart", 1);
    chain.agent_setting("on_failure", "\"restart\"");
    let mut editor = chain.launch();
    editor.initialize();
    let old = editor.new_session();
    let id = editor.start_request("session/prompt", prompt_params(&old, "hang"));
    editor.wait_for(|m| chunk_of(m) == Some(HANGING));
    let first = chain.pid("agent");
    kill(first);
    let answer = editor.wait_for(|m| m["id"] == id && m.get("method").is_none());
    assert_eq!(
        answer["error"]["message"],
        "agent `agent` was killed by signal 9; restarting it (its sessions are lost: start or \
         load a session again)"
    );
    editor.wait_for(|m| is_method(m, RESTARTED));
    new_pid(&chain, "agent", first);

    let refused = editor.prompt(&old, "hello");
    let message = refused.error()["message"].as_str().unwrap().to_string();
    assert_eq!(
        message,
        format!(
            "agent `agent` was restarted and no longer has session `{old}`: start a new \
             session, or load this one again if the agent supports it"
        )
    );
    let fresh = editor.new_session();
    prompt_ends_turn(&mut editor, &fresh, "hello again");
}

#[test]
fn a_proxy_that_closes_its_output_is_bypassed_after_a_grace() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "policy-closed-output");
    let mute = chain.add_proxy(
        "mute",
        Path::new("/bin/sh"),
        &["-c", "exec >&-; exec sleep 600"],
    );
    mute.setting("on_failure", "\"bypass\"");
    let mut editor = chain.launch();
    let result = editor.initialize();
    assert_eq!(result["protocolVersion"], 1);
    let session = editor.new_session();
    prompt_ends_turn(&mut editor, &session, "around the mute one");
    let stderr = editor.stderr();
    assert!(
        stderr.contains("proxy `mute` closed its output; it was taken out of the chain"),
        "{stderr}"
    );
}

#[test]
fn a_proxy_that_stops_reading_is_failed_after_the_write_timeout_and_bypassed() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "policy-stalled-input");
    chain.conductor_setting("write_timeout", "\"1s\"");
    let deaf = chain.add_proxy("deaf", Path::new("/bin/sh"), &["-c", "exec sleep 600"]);
    deaf.setting("on_failure", "\"bypass\"");
    let mut editor = chain.launch();
    // More than a pipe holds: the write to the proxy that never reads cannot finish.
    let mut params = initialize_params();
    params["_meta"] = serde_json::json!({ "padding": "x".repeat(1 << 20) });
    let exchange = editor.request("initialize", params);
    assert_eq!(exchange.result()["protocolVersion"], 1);
    let stderr = editor.stderr();
    assert!(
        stderr.contains("proxy `deaf` stopped reading its input for more than 1s"),
        "{stderr}"
    );
    let agent_got_it = chain
        .received("agent")
        .iter()
        .any(|m| m["method"] == "initialize" && m["params"]["_meta"]["padding"].is_string());
    assert!(agent_got_it, "the initialize went around the deaf proxy");
}

#[test]
fn a_proxy_stuck_with_half_a_line_written_is_failed_after_the_write_timeout_and_bypassed() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "policy-half-line");
    chain.conductor_setting("write_timeout", "\"1s\"");
    // Half a message and no newline, then waiting for input forever: nothing else would
    // time out, since the message never arrived whole.
    let half = chain.add_proxy(
        "half",
        Path::new("/bin/sh"),
        &[
            "-c",
            "printf '%s' '{\"jsonrpc\":\"2.0\",\"method\":\"x\"'; exec sleep 600",
        ],
    );
    half.setting("on_failure", "\"bypass\"");
    let mut editor = chain.launch();
    let exchange = editor.request("initialize", initialize_params());
    assert_eq!(exchange.result()["protocolVersion"], 1);
    let stderr = editor.stderr();
    assert!(
        stderr.contains("wrote 29 bytes of a line and nothing more for 1s"),
        "{stderr}"
    );
    assert!(
        chain
            .received("agent")
            .iter()
            .any(|m| m["method"] == "initialize"),
        "the initialize went around the stuck proxy"
    );
}

#[test]
fn an_agent_that_misses_its_request_timeout_is_restarted() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "policy-request-timeout", 1);
    chain.agent_setting("on_failure", "\"restart\"");
    chain.agent_setting("request_timeout", "\"1s\"");
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let first = chain.pid("agent");
    let hung = editor.prompt(&session, "hang");
    assert_eq!(
        hung.error()["message"],
        "agent `agent` did not answer `session/prompt` within 1 s; restarting it (its sessions \
         are lost: start or load a session again)"
    );
    assert_eq!(hung.error()["data"]["exitStatus"], Value::Null);
    editor.wait_for(|m| is_method(m, RESTARTED));
    new_pid(&chain, "agent", first);
    let left = wait_until_gone(&[first], patience());
    assert!(left.is_empty(), "the hung agent was stopped");
    let fresh = editor.new_session();
    prompt_ends_turn(&mut editor, &fresh, "quick this time");
}
