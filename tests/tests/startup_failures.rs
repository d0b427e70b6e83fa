//! Components that cannot start: a proxy or an agent that exits at once fails the editor's
//! `initialize` with a JSON-RPC error naming it, and nothing is left running.

use acp_conductor_tests::editor::initialize_params;
use acp_conductor_tests::scenario;
use acp_conductor_tests::{TestChain, binaries};
use std::path::Path;

#[test]
fn proxy_that_exits_at_startup_fails_initialize_with_its_name() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "startup-proxy", 1);
    chain.add_proxy::<&str>("quitter-proxy", Path::new("/bin/false"), &[]);
    let mut editor = chain.launch();
    let exchange = editor.request("initialize", initialize_params());
    let error = exchange.error();
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("quitter-proxy"),
        "the error should name the component: {}",
        exchange.response
    );
    assert!(error["code"].is_i64(), "{}", exchange.response);
    let pids = scenario::chain_pids(&editor, &[]);
    editor.close_stdin();
    scenario::assert_all_gone_after_exit(&mut editor, &pids);
}

#[test]
fn agent_that_exits_at_startup_fails_initialize_with_its_name() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "startup-agent", 1);
    chain.agent = Some(acp_conductor_tests::test_chain::AgentEntry {
        command: "/bin/false".into(),
        args: Vec::new(),
        settings: Vec::new(),
    });
    let mut editor = chain.launch();
    let exchange = editor.request("initialize", initialize_params());
    let message = exchange.error()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("agent"),
        "the error should name the agent: {}",
        exchange.response
    );
    let pids = scenario::chain_pids(&editor, &[]);
    editor.close_stdin();
    scenario::assert_all_gone_after_exit(&mut editor, &pids);
}

#[test]
fn run_with_a_missing_proxy_command_exits_78_before_starting_anything() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "startup-missing");
    chain.add_proxy::<&str>("ghost", Path::new("/nonexistent/ghost-proxy"), &[]);
    let mut editor = chain.launch();
    let status = editor.wait_exit();
    assert_eq!(status.code(), Some(78), "{}", editor.stderr());
    assert!(
        editor.stderr().contains("/nonexistent/ghost-proxy"),
        "stderr should name the missing program:\n{}",
        editor.stderr()
    );
    assert!(
        !chain
            .file(acp_conductor_tests::test_chain::AGENT, "pid")
            .exists(),
        "the agent was started although the config is invalid"
    );
}
