//! Chains of 0, 1 and 3 proxies carry a whole editor session: initialize, session/new, a
//! prompt with streamed updates and an agent permission request answered by the editor;
//! every proxy sees every message once, in order, and the agent sees what the editor sent.

use acp_conductor_tests::scenario::{self, standard_session};
use acp_conductor_tests::{TestChain, binaries};

fn session_through(proxies: usize) {
    let binaries = binaries!();
    let mut chain =
        TestChain::with_test_proxies(&binaries, &format!("forwarding-{proxies}"), proxies);
    chain.agent_args(&["--updates", &scenario::UPDATES.to_string()]);
    let mut editor = chain.launch();
    standard_session(&mut editor);
    let names: Vec<String> = (1..=proxies).map(|i| format!("p{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    scenario::assert_everyone_saw_the_editor_conversation(
        &chain,
        &editor,
        &names,
        "proxy/initialize",
    );
}

#[test]
fn zero_proxies_carry_a_whole_session() {
    session_through(0);
}

#[test]
fn one_proxy_carries_a_whole_session() {
    session_through(1);
}

#[test]
fn three_proxies_carry_a_whole_session_each_seeing_every_message_once_in_order() {
    session_through(3);
}
