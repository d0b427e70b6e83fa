//! The limits of a WASM proxy: an endless loop is interrupted after `message_timeout` while a
//! neighbouring WASM proxy keeps answering; an allocation bomb stops at the memory cap and the
//! conductor's own memory stays bounded; under `restart` a proxy past its cap comes back. Each
//! failure names the proxy.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::test_chain::TestChain;
use acp_conductor_tests::wasm::{self, PROBE, WasmChain, WasmTarget};
use serde_json::{Value, json};

/// editor → `near` (WASM probe) → `far` (WASM probe, limited by `sandbox`) → test-agent.
fn two_probes(label: &str, target: WasmTarget, sandbox: &[(&str, &str)]) -> (WasmChain, Editor) {
    let binaries = binaries!();
    let probe = wasm::artifact(&binaries, PROBE, target);
    let mut chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("{label}-{}", target.triple()),
    ));
    chain.add_wasm("near", &probe).args(&["--name", "near"]);
    let far = chain.add_wasm("far", &probe);
    far.args(&["--name", "far"]);
    for (key, value) in sandbox {
        far.sandbox(key, value);
    }
    let mut editor = chain.launch();
    editor.initialize();
    (chain, editor)
}

/// `{"code": -32001, "message": "proxy `far` <reason>", "data": {...}}` with that reason.
fn assert_failed_with(error: &Value, reason: &str) {
    assert_eq!(error["code"], -32001, "{error}");
    assert_eq!(error["message"], format!("proxy `far` {reason}"), "{error}");
    assert_eq!(error["data"]["component"], "far", "{error}");
    assert_eq!(error["data"]["reason"], reason, "{error}");
}

fn endless_loop(target: WasmTarget) {
    let (_chain, mut editor) = two_probes("limits-spin", target, &[("message_timeout", "\"2s\"")]);
    let started = Instant::now();
    let spin = editor.start_request("probe/spin", json!({ "target": "far" }));
    // The neighbour keeps answering while `far` computes: every ping below is answered
    // before the spin is interrupted (counted, not timed: latencies move with the machine).
    let mut round_trips = 0;
    while started.elapsed() < Duration::from_millis(1500) {
        let pong = editor.request("probe/ping", json!({ "target": "near" }));
        assert_eq!(pong.result(), &json!({ "pong": "near" }));
        assert!(
            pong.other_responses.iter().all(|r| r["id"] != spin),
            "the spin ended before the neighbour's round trips"
        );
        round_trips += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        round_trips >= 5,
        "only {round_trips} round trips while `far` spun"
    );
    let answer = editor.finish_request(&spin, acp_conductor_tests::editor::refuse);
    let interrupted_after = started.elapsed();
    assert_failed_with(
        answer.error(),
        "was interrupted after computing for 2s without reading input",
    );
    assert!(
        interrupted_after >= Duration::from_secs(2),
        "interrupted after {interrupted_after:?}, before its timeout"
    );
    // As for a crashed native proxy: the chain is down and the conductor exits 1.
    assert_eq!(editor.wait_exit().code(), Some(1));
}

#[test]
fn a_wasip1_endless_loop_is_interrupted_while_its_neighbour_keeps_answering() {
    endless_loop(WasmTarget::P1);
}

#[test]
fn a_wasip2_endless_loop_is_interrupted_while_its_neighbour_keeps_answering() {
    endless_loop(WasmTarget::P2);
}

/// The conductor's resident set and its peak, in KiB, from /proc; `None` once it has
/// exited (a zombie has no memory fields).
fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Samples the conductor's peak resident set until `done` is set or it exits, because a
/// chain whose proxy failed may exit as soon as the editor has its answer.
fn watch_peak(pid: u32, done: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut peak = 0;
        while let Some((_, hwm)) = memory_kib(pid) {
            peak = peak.max(hwm);
            if done.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        peak
    })
}

fn allocation_bomb(target: WasmTarget, cap: Option<&str>, reason: &str) {
    let sandbox: Vec<(&str, &str)> = cap.map(|cap| ("memory", cap)).into_iter().collect();
    let (_chain, mut editor) = two_probes("limits-alloc", target, &sandbox);
    let (before, _) = memory_kib(editor.pid()).expect("the conductor is running");
    let done = Arc::new(AtomicBool::new(false));
    let sampler = watch_peak(editor.pid(), done.clone());
    let answer = editor.request("probe/allocate", json!({ "target": "far" }));
    assert_failed_with(answer.error(), reason);
    done.store(true, Ordering::SeqCst);
    let peak = sampler.join().expect("sampler");
    // The guest may fill its cap (64 MiB by default); the conductor adds nothing per byte.
    let grown_mib = peak.saturating_sub(before) / 1024;
    assert!(
        grown_mib < 64 + 32,
        "the conductor grew by {grown_mib} MiB (from {before} KiB to a peak of {peak} KiB)"
    );
}

#[test]
fn a_wasip1_allocation_bomb_stops_at_the_default_cap() {
    allocation_bomb(WasmTarget::P1, None, "exceeded its memory limit of 64 MiB");
}

#[test]
fn a_wasip2_allocation_bomb_stops_at_a_configured_cap() {
    allocation_bomb(
        WasmTarget::P2,
        Some("\"24MiB\""),
        "exceeded its memory limit of 24 MiB",
    );
}

/// Under `restart`, a WASM proxy that hit its memory cap is instantiated again (from the
/// compile cache) and answers again; its neighbour never noticed.
fn restarted_after_its_memory_cap(target: WasmTarget) {
    let binaries = binaries!();
    let probe = wasm::artifact(&binaries, PROBE, target);
    let mut chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("limits-restart-{}", target.triple()),
    ));
    chain.add_wasm("near", &probe).args(&["--name", "near"]);
    chain
        .add_wasm("far", &probe)
        .args(&["--name", "far"])
        .setting("on_failure", "\"restart\"");
    let mut editor = chain.launch();
    editor.initialize();
    let answer = editor.request("probe/allocate", json!({ "target": "far" }));
    assert_eq!(
        answer.error()["message"],
        "proxy `far` exceeded its memory limit of 64 MiB; restarting it"
    );
    assert_eq!(answer.error()["data"]["action"], "restart");
    editor.wait_for(|m| m["method"] == "_acp-conductor/component_restarted");
    let pong = editor.request("probe/ping", json!({ "target": "far" }));
    assert_eq!(pong.result(), &json!({ "pong": "far" }));
    let pong = editor.request("probe/ping", json!({ "target": "near" }));
    assert_eq!(pong.result(), &json!({ "pong": "near" }));
}

#[test]
fn a_wasip1_proxy_past_its_memory_cap_is_restarted_under_restart() {
    restarted_after_its_memory_cap(WasmTarget::P1);
}

#[test]
fn a_wasip2_proxy_past_its_memory_cap_is_restarted_under_restart() {
    restarted_after_its_memory_cap(WasmTarget::P2);
}

/// A 70 KB line written to stdout with one `write` call is taken whole and reaches the
/// editor whole: the host's permit is the guest's memory cap, not 64 KiB of it.
fn one_write_of_a_long_line(target: WasmTarget) {
    let binaries = binaries!();
    let probe = wasm::artifact(&binaries, PROBE, target);
    let mut chain = WasmChain::new(TestChain::new(
        &binaries,
        &format!("limits-long-line-{}", target.triple()),
    ));
    chain.add_wasm("long", &probe).args(&["--name", "long"]);
    let mut editor = chain.launch();
    editor.initialize();
    let length = 70_000;
    let answer = editor.request("probe/line", json!({ "target": "long", "length": length }));
    let line_bytes =
        length + r#"{"jsonrpc":"2.0","method":"probe/line","params":{"x":""}}"#.len() + 1;
    assert_eq!(
        answer.result(),
        &json!({ "ok": true, "value": { "written": line_bytes, "of": line_bytes } })
    );
    let lines: Vec<&Value> = answer
        .notifications
        .iter()
        .filter(|m| m["method"] == "probe/line")
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", answer.notifications);
    assert_eq!(lines[0]["params"]["x"].as_str().map(str::len), Some(length));
}

#[test]
fn a_wasip1_proxy_writes_a_70_kb_line_with_one_write() {
    one_write_of_a_long_line(WasmTarget::P1);
}

#[test]
fn a_wasip2_proxy_writes_a_70_kb_line_with_one_write() {
    one_write_of_a_long_line(WasmTarget::P2);
}
