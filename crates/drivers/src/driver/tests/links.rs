//! What the links do that the core only hears of: a peer that stops reading is failed after
//! the write timeout, reported by its writer and answered by the core as any failure.

use std::time::Duration;

use super::harness::Spec;

#[tokio::test(start_paused = true)]
async fn a_peer_that_stops_reading_is_failed_after_the_write_timeout() {
    let mut spec = Spec::new(0);
    spec.peer_capacity = 1;
    spec.limits.write_timeout = Duration::from_secs(3);
    let mut chain = spec.start();
    // The agent reads nothing: one frame fits its queue, the next write waits.
    for id in 1..=3 {
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{}}}}"#
        ));
    }
    let mut failed = Vec::new();
    for _ in 1..=3 {
        let answer = chain.editor.recv().await;
        assert_eq!(answer["error"]["code"], -32001);
        assert_eq!(
            answer["error"]["message"],
            "agent `agent` stopped reading its input for more than 3s"
        );
        failed.push(answer["id"].as_u64().unwrap());
    }
    failed.sort_unstable();
    assert_eq!(failed, [1, 2, 3]);
}
