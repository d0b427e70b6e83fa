//! How long a reload takes, end to end: from SIGHUP to the editor hearing that the new chain
//! took its place (the new instance started, initialized, introduced to the open session and
//! placed), for a native proxy and a WASM proxy whose compiled code is cached. Prints the
//! figures (`--nocapture`); docs/reload.md quotes them.

use std::time::{Duration, Instant};

use acp_conductor_tests::binaries::CONTEXT_PROXY;
use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::wasm::{self, CONTEXT, WasmChain, WasmTarget};
use acp_conductor_tests::{TestChain, binaries};

const RELOADS: usize = 7;
/// A reload past this is a bug, not a slow machine.
const LIMIT: Duration = Duration::from_secs(10);

/// Reloads `RELOADS` times, each with the proxy's rule changed by `edit`, and returns each
/// time from SIGHUP to `_acp-conductor/config_reloaded`, sorted.
fn measure(editor: &mut Editor, mut edit: impl FnMut(usize)) -> Vec<Duration> {
    editor.initialize();
    let session = editor.new_session();
    let mut times = Vec::new();
    for round in 0..RELOADS {
        edit(round);
        let start = Instant::now();
        editor.signal(libc::SIGHUP);
        editor.wait_for(|m| m["method"] == "_acp-conductor/config_reloaded");
        let took = start.elapsed();
        assert!(took < LIMIT, "a reload took {took:?}");
        times.push(took);
        let answer = editor.prompt(&session, &format!("question {round}"));
        assert!(
            answer.response.get("result").is_some(),
            "{:?}",
            answer.response
        );
    }
    times.sort();
    times
}

fn report(what: &str, times: &[Duration]) {
    println!(
        "reload of {what}: median {:?}, fastest {:?}, slowest {:?} ({} reloads)",
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len()
    );
}

#[test]
fn time_from_sighup_to_the_new_chain_taking_traffic() {
    let binaries = binaries!();

    let mut native = TestChain::new(&binaries, "reload-figures-native");
    let context = native.binaries.workspace_program(&CONTEXT_PROXY);
    native.add_proxy("context", &context, &["--rule", "rule 0"]);
    let mut editor = native.launch();
    let times = measure(&mut editor, |round| {
        native.proxies[0].args = vec!["--rule".into(), format!("rule {}", round + 1)];
        native.write_config();
    });
    report("a native proxy (acp-context-proxy)", &times);
    editor.close_stdin();
    editor.wait_exit();

    let module = wasm::artifact(&binaries, CONTEXT, WasmTarget::P2);
    let mut chain = WasmChain::new(TestChain::new(&binaries, "reload-figures-wasm"));
    chain
        .add_wasm("context", &module)
        .args(&["--rule", "rule 0"]);
    let mut editor = chain.launch();
    let times = measure(&mut editor, |round| {
        chain.proxies[0].args = vec!["--rule".into(), format!("rule {}", round + 1)];
        chain.write_config();
    });
    report(
        "a WASM proxy (acp-context-proxy, wasm32-wasip2, compiled code cached)",
        &times,
    );
    editor.close_stdin();
    editor.wait_exit();
}
