//! Fairness between links: one pair of links streaming flat out does not starve a neighbour's
//! round trips through the same router, and the neighbour does not stop the stream. Counted,
//! not timed: the router, every link loop and both peers share one thread, as in a run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::harness::Spec;

/// How many neighbour round trips are made while the stream runs.
const ROUND_TRIPS: usize = 200;

#[tokio::test]
async fn a_neighbour_is_served_while_another_link_streams_flat_out() {
    // editor (0) - p1 (1) - p2 (2) - agent (3): the agent streams to p2 while the editor and
    // p1 make round trips; the two paths share no link, only the router and its thread.
    let mut chain = Spec::new(2).start();
    let agent = chain.agent.take().expect("an agent");
    let mut p2 = chain.proxies.pop().expect("p2");
    let streamed = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));

    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}"#;
    let streaming = {
        let (stop, streamed) = (stop.clone(), streamed.clone());
        tokio::spawn(async move {
            let mut sent = 0usize;
            while !stop.load(Ordering::Relaxed) {
                // As fast as the path takes them: never more than 4,096 ahead of p2.
                while sent < streamed.load(Ordering::Relaxed) + 4096 {
                    agent.send(update);
                    sent += 1;
                }
                tokio::task::yield_now().await;
            }
            agent
        })
    };
    let draining = {
        let (stop, streamed) = (stop.clone(), streamed.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let frame = p2.recv_text().await;
                assert!(frame.contains("session/update"), "{frame}");
                streamed.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // The stream is under way before the neighbour starts.
    while streamed.load(Ordering::Relaxed) < 10_000 {
        tokio::task::yield_now().await;
    }

    let mut most_during_one = 0;
    for n in 0..ROUND_TRIPS {
        let before = streamed.load(Ordering::Relaxed);
        chain.editor.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"_x/ping","params":{{}}}}"#
        ));
        let request = chain.proxy(1).recv().await;
        assert_eq!(request["method"], "_x/ping");
        chain.proxy(1).send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"pong":{n}}}}}"#,
            request["id"]
        ));
        let answer = chain.editor.recv().await;
        assert_eq!(answer["id"], n);
        assert_eq!(answer["result"]["pong"], n);
        most_during_one = most_during_one.max(streamed.load(Ordering::Relaxed) - before);
    }
    let during = streamed.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    draining.abort();
    let _ = streaming.await;

    // Neither side starved the other: the stream went on through the round trips, and no
    // round trip waited behind more than what the router's event queue can hold, twice
    // (the request and the answer each queue behind the stream's events once).
    assert!(
        during > 10_000 + ROUND_TRIPS,
        "the stream stalled while the neighbour made its round trips: {during} updates"
    );
    assert!(
        most_during_one <= 2 * 1024 + 4096,
        "one round trip waited behind {most_during_one} streamed updates"
    );
}
