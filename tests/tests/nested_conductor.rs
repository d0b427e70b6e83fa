//! A conductor in proxy mode nests inside another: the outer chain runs a test-proxy, then
//! the inner conductor (`run --proxy`) with its own test-proxy, then the agent.

use acp_conductor_tests::scenario::{self, standard_session};
use acp_conductor_tests::{TestChain, binaries};

/// The outer chain (`outer-p`, `inner` conductor, agent) and the inner one (`inner-p`).
fn nested_chains(label: &str) -> (TestChain, TestChain) {
    let binaries = binaries!();
    let mut inner = TestChain::new(&binaries, &format!("{label}-inner"));
    inner.without_agent();
    inner.add_test_proxy("inner-p");
    let inner_config = inner.write_config();

    let mut outer = TestChain::new(&binaries, label);
    outer.agent_args(&["--updates", &scenario::UPDATES.to_string()]);
    outer.add_test_proxy("outer-p");
    let inner_config = inner_config.display().to_string();
    outer.add_proxy(
        "inner",
        &binaries.conductor,
        &["run", "--proxy", "--config", inner_config.as_str()],
    );
    (outer, inner)
}

#[test]
fn conductor_in_proxy_mode_nests_inside_another_conductor() {
    let (outer, inner) = nested_chains("nested");
    let mut editor = outer.launch();
    standard_session(&mut editor);

    scenario::assert_proxy_saw_the_editor_conversation(
        &outer,
        &editor,
        "outer-p",
        "proxy/initialize",
        &[],
    );
    scenario::assert_proxy_saw_the_editor_conversation(
        &inner,
        &editor,
        "inner-p",
        "proxy/initialize",
        &[],
    );
    scenario::assert_agent_got_what_the_editor_sent(&outer, &editor);
    for (chain, name) in [(&outer, "outer-p"), (&inner, "inner-p")] {
        let answer = chain.init_response(name);
        assert_eq!(
            answer["result"]["agentCapabilities"]["mcpCapabilities"]["acp"], true,
            "{name}: {answer}"
        );
    }
}

#[test]
fn nested_chain_stops_entirely_when_the_editor_leaves() {
    let (outer, inner) = nested_chains("nested-stop");
    let mut editor = outer.launch();
    editor.initialize();
    editor.new_session();
    let mut fixtures = outer.fixture_pids();
    fixtures.extend(inner.fixture_pids());
    let pids = scenario::chain_pids(&editor, &fixtures);
    assert!(
        pids.len() >= 4,
        "outer-p, inner conductor, inner-p and agent: {pids:?}"
    );
    editor.close_stdin();
    let status = scenario::assert_all_gone_after_exit(&mut editor, &pids);
    assert_eq!(status.code(), Some(0), "{}", editor.stderr());
}
