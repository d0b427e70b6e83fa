//! Chains of 0, 1 and 3 proxies carry a whole editor session: initialize, session/new, a
//! prompt with streamed updates and an agent permission request answered by the editor;
//! every proxy sees every message once, in order, and the agent sees what the editor sent.

use acp_conductor_tests::agent_script;
use acp_conductor_tests::scenario::{self, standard_session};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::json;

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

/// A method written with JSON escapes (`"session\/close"`, as PHP's `json_encode` writes every
/// `/`) names the method it decodes to: it is routed, through proxies, not refused with -32600.
#[test]
fn a_method_written_with_escapes_is_routed_as_the_method_it_names() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "escaped-method", 1);
    let replies = chain.file(AGENT, "replies");
    std::fs::write(
        &replies,
        agent_script::reply_line("session/close", "result", r#"{"closed":true}"#) + "\n",
    )
    .expect("write the agent's replies");
    chain.agent_args(&["--replies", &replies.display().to_string()]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    editor.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":"close-1","method":"session\/close","params":{{"sessionId":"{session}"}}}}"#
    ));
    let answer = editor.recv();
    assert_eq!(answer["id"], "close-1", "{answer}");
    assert_eq!(answer["result"], json!({ "closed": true }), "{answer}");
    let agent_saw = chain.received(AGENT);
    let close = agent_saw
        .iter()
        .find(|message| message["method"] == "session/close")
        .unwrap_or_else(|| panic!("the agent never got session/close: {agent_saw:#?}"));
    assert_eq!(close["params"], json!({ "sessionId": session }));
}
