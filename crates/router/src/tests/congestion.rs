//! Backpressure as the core decides it: a sender into a congested queue is paused, and goes
//! on when that queue drains or its link dies. The queues themselves are the links' (driver).

use super::harness::Spec;
use crate::{Input, LinkEvent};

fn update(n: usize) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"n":{n}}}}}"#)
}

#[test]
fn a_sender_into_a_congested_queue_is_paused_until_that_queue_drains() {
    let mut chain = Spec::new(0).start();
    let (editor, agent) = (chain.editor.id, chain.agent().id);
    chain.agent().send(&update(0));
    chain.with_router(|router| router.congested(editor, agent));
    assert!(
        chain.agent().is_paused(),
        "the agent sent into the full queue"
    );
    assert!(
        !chain.editor.is_paused(),
        "only the path into the slow peer stalls"
    );
    // What the agent sends meanwhile waits at its reader, then arrives in order.
    chain.agent().send(&update(1));
    assert_eq!(chain.editor.recv()["params"]["n"], 0);
    assert_eq!(chain.editor.has_pending(), None);
    chain.report(Input::Link {
        link: editor,
        event: LinkEvent::Drained,
    });
    assert!(!chain.agent().is_paused());
    assert_eq!(chain.editor.recv()["params"]["n"], 1);
}

#[test]
fn senders_paused_behind_a_link_that_dies_go_on() {
    let mut chain = Spec::new(1).start();
    let (proxy, agent) = (chain.proxy(1).id, chain.agent().id);
    chain.with_router(|router| router.congested(proxy, agent));
    assert!(chain.agent().is_paused());
    chain.exited(proxy, "exited with status 1", &[]);
    assert!(
        !chain.agent().is_paused(),
        "the full queue is gone with its link"
    );
}

#[test]
fn a_link_is_never_paused_for_its_own_answers() {
    let chain = Spec::new(0).start();
    let editor = chain.editor.id;
    chain.with_router(|router| router.congested(editor, editor));
    assert!(!chain.editor.is_paused());
}
