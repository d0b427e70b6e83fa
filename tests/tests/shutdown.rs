//! Shutdown: when the editor closes stdin, or the conductor gets SIGTERM, it exits 0 and no
//! process of the chain remains; a request still pending gets its one response first, and
//! the components are first asked to stop by closing their stdin, before any signal.

use acp_conductor_tests::agent_script::HANGING;
use acp_conductor_tests::editor::{Editor, prompt_params};
use acp_conductor_tests::scenario::{self, chunk_of};
use acp_conductor_tests::{TestChain, binaries};

/// A running two-proxy chain after a prompt, and the pids of all its processes.
fn running_chain(label: &str) -> (TestChain, Editor, Vec<u32>) {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, label, 2);
    chain.agent_args(&["--updates", "1"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    assert_eq!(
        editor.prompt(&session, "hi").result()["stopReason"],
        "end_turn"
    );
    let pids = scenario::chain_pids(&editor, &chain.fixture_pids());
    assert!(
        pids.len() >= 3,
        "two proxies and the agent at least: {pids:?}"
    );
    (chain, editor, pids)
}

#[test]
fn stdin_eof_stops_the_conductor_with_exit_0_and_leaves_no_process() {
    let (_chain, mut editor, pids) = running_chain("shutdown-eof");
    editor.close_stdin();
    let status = scenario::assert_all_gone_after_exit(&mut editor, &pids);
    assert_eq!(status.code(), Some(0), "{}", editor.stderr());
}

#[test]
fn sigterm_stops_the_conductor_with_exit_0_and_leaves_no_process() {
    let (_chain, mut editor, pids) = running_chain("shutdown-term");
    editor.signal(libc::SIGTERM);
    let status = scenario::assert_all_gone_after_exit(&mut editor, &pids);
    assert_eq!(status.code(), Some(0), "{}", editor.stderr());
}

#[test]
fn sigterm_answers_the_pending_prompt_before_exiting() {
    let (_chain, mut editor, pids) = running_chain("shutdown-pending");
    let session = editor.new_session();
    let id = editor.start_request("session/prompt", prompt_params(&session, "hang"));
    editor.wait_for(|message| chunk_of(message) == Some(HANGING));
    editor.signal(libc::SIGTERM);
    let rest = editor.drain();
    let answers: Vec<serde_json::Value> = rest
        .iter()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .filter(|message| message.get("method").is_none() && message["id"] == id)
        .collect();
    assert_eq!(
        answers.len(),
        1,
        "exactly one response to the pending prompt, got {rest:#?}"
    );
    let status = scenario::assert_all_gone_after_exit(&mut editor, &pids);
    assert_eq!(status.code(), Some(0), "{}", editor.stderr());
}

/// Asserts that every fixture of `chain` saw its stdin close, i.e. was not killed first.
fn assert_every_component_saw_stdin_eof(chain: &TestChain) {
    let killed_first: Vec<&str> = chain
        .fixture_names()
        .into_iter()
        .filter(|name| !chain.saw_stdin_eof(name))
        .collect();
    assert!(
        killed_first.is_empty(),
        "these components never saw their stdin close (they were killed before): {killed_first:?}"
    );
}

#[test]
fn stdin_eof_closes_every_components_stdin_before_signalling_it() {
    let (chain, mut editor, pids) = running_chain("shutdown-eof-graceful");
    editor.close_stdin();
    scenario::assert_all_gone_after_exit(&mut editor, &pids);
    assert_every_component_saw_stdin_eof(&chain);
}

#[test]
fn sigterm_closes_every_components_stdin_before_signalling_it() {
    let (chain, mut editor, pids) = running_chain("shutdown-term-graceful");
    editor.signal(libc::SIGTERM);
    scenario::assert_all_gone_after_exit(&mut editor, &pids);
    assert_every_component_saw_stdin_eof(&chain);
}
