//! Messages leave the conductor in the order the agent wrote them, even when one write
//! holds chunks, the prompt's response and more chunks: 1000 prompts out of 1000.

use acp_conductor_tests::agent_script::{self, BURST_AFTER, BURST_BEFORE};
use acp_conductor_tests::editor::{Direction, prompt_params, refuse};
use acp_conductor_tests::scenario::chunk_of;
use acp_conductor_tests::{TestChain, binaries};
use serde_json::Value;

const PROMPTS: usize = 1000;

fn burst_order_through(proxies: usize) {
    let binaries = binaries!();
    let mut chain =
        TestChain::with_test_proxies(&binaries, &format!("ordering-{proxies}"), proxies);
    chain.agent_args(&["--updates", "0", "--burst"]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let start = editor.transcript.len();

    let mut expected = Vec::new();
    for i in 0..PROMPTS {
        let text = format!("burst-{i}");
        let id = editor.start_request("session/prompt", prompt_params(&session, &text));
        editor.finish_request(&id, refuse);
        expected.extend((1..=BURST_BEFORE).map(|n| agent_script::burst_before_text(&text, n)));
        expected.push(format!("response {id}"));
        expected.extend((1..=BURST_AFTER).map(|n| agent_script::burst_after_text(&text, n)));
    }
    let last = agent_script::burst_after_text(&format!("burst-{}", PROMPTS - 1), BURST_AFTER);
    editor.wait_for(|message| chunk_of(message) == Some(last.as_str()));

    let seen: Vec<String> = editor.transcript[start..]
        .iter()
        .filter(|(direction, _)| *direction == Direction::Received)
        .map(|(_, line)| {
            let message: Value = serde_json::from_str(line).expect("JSON");
            match chunk_of(&message) {
                Some(text) => text.to_string(),
                None => format!("response {}", message["id"]),
            }
        })
        .collect();
    if let Some(at) = seen.iter().zip(&expected).position(|(a, b)| a != b) {
        panic!(
            "order differs at #{at}: saw {:?}, expected {:?}",
            &seen[at.saturating_sub(3)..(at + 4).min(seen.len())],
            &expected[at.saturating_sub(3)..(at + 4).min(expected.len())]
        );
    }
    assert_eq!(seen.len(), expected.len());
}

#[test]
fn response_written_with_notifications_keeps_its_place_1000_times_without_proxies() {
    burst_order_through(0);
}

#[test]
fn response_written_with_notifications_keeps_its_place_1000_times_through_a_proxy() {
    burst_order_through(1);
}
