//! When memory runs out, the kernel's out-of-memory killer should take a component rather
//! than the conductor: every component process starts with a raised `oom_score_adj`, so one
//! chain fails (and under `serve`, one connection) instead of every session at once.

use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};

fn oom_score_adj(pid: u32) -> i32 {
    std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj"))
        .expect("a running process's oom_score_adj")
        .trim()
        .parse()
        .expect("a number")
}

#[test]
fn components_are_preferred_over_the_conductor_by_the_oom_killer() {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, "oom-preference", 1);
    let mut editor = chain.launch();
    editor.initialize();
    let conductor = oom_score_adj(editor.pid());
    assert!(conductor < 300, "{conductor}");
    for name in ["p1", AGENT] {
        assert_eq!(oom_score_adj(chain.pid(name)), 300, "{name}");
    }
    editor.close_stdin();
    editor.wait_exit();
}
