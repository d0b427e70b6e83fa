//! Proxies speaking `_proxy/initialize` / `_proxy/successor` (older SDKs) work next to
//! RFD proxies in one chain, whether the conductor detects the dialect or it is pinned.

use acp_conductor_tests::scenario::{self, standard_session};
use acp_conductor_tests::{TestChain, binaries};

/// The methods of every message the conductor sent to proxy `name`.
fn methods(chain: &TestChain, name: &str) -> Vec<String> {
    chain
        .received(name)
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn underscore_and_rfd_proxies_share_a_chain_with_detected_dialects() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "dialects-mixed");
    chain.agent_args(&["--updates", &scenario::UPDATES.to_string()]);
    chain.add_test_proxy("rfd");
    chain
        .add_test_proxy("old")
        .args(&["--dialect", "underscore"]);
    chain.add_test_proxy("rfd-after");
    let mut editor = chain.launch();
    standard_session(&mut editor);

    scenario::assert_proxy_saw_the_editor_conversation(
        &chain,
        &editor,
        "rfd",
        "proxy/initialize",
        &[],
    );
    scenario::assert_proxy_saw_the_editor_conversation(
        &chain,
        &editor,
        "rfd-after",
        "proxy/initialize",
        &[],
    );
    scenario::assert_proxy_saw_the_editor_conversation(
        &chain,
        &editor,
        "old",
        "_proxy/initialize",
        &["proxy/initialize"],
    );
    scenario::assert_agent_got_what_the_editor_sent(&chain, &editor);

    let old = methods(&chain, "old");
    let after_init = old.iter().skip_while(|m| *m != "_proxy/initialize").skip(1);
    for method in after_init {
        assert!(
            !method.starts_with("proxy/"),
            "after _proxy/initialize, `old` got {method}: {old:?}"
        );
    }
    assert!(old.iter().any(|m| m == "_proxy/successor"), "{old:?}");
    let rfd = methods(&chain, "rfd");
    assert!(rfd.iter().all(|m| !m.starts_with("_proxy/")), "{rfd:?}");
}

#[test]
fn pinned_underscore_protocol_is_spoken_from_the_first_message() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "dialects-pinned");
    chain.agent_args(&["--updates", &scenario::UPDATES.to_string()]);
    chain
        .add_test_proxy("old")
        .args(&["--dialect", "underscore"])
        .protocol("underscore");
    chain.add_test_proxy("new").protocol("rfd");
    let mut editor = chain.launch();
    standard_session(&mut editor);

    scenario::assert_proxy_saw_the_editor_conversation(
        &chain,
        &editor,
        "old",
        "_proxy/initialize",
        &[],
    );
    scenario::assert_proxy_saw_the_editor_conversation(
        &chain,
        &editor,
        "new",
        "proxy/initialize",
        &[],
    );
    scenario::assert_agent_got_what_the_editor_sent(&chain, &editor);
    let old = methods(&chain, "old");
    assert!(old.iter().all(|m| !m.starts_with("proxy/")), "{old:?}");
}
