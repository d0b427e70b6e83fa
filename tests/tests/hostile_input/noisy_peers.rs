//! Peers that misbehave as programs: an agent or proxy printing before it speaks, and an editor
//! that stops reading and then leaves.

use std::path::Path;
use std::time::Duration;

use acp_conductor_tests::agent_script::Recipe;
use acp_conductor_tests::editor::prompt_params;
use acp_conductor_tests::processes;
use acp_conductor_tests::scenario::{assert_all_gone_after_exit, chain_pids};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{TestChain, binaries};

use super::harness::{agent_got_responses, assert_not_routed, chain, started, still_serves};

// A banner on stdout before the component speaks.

#[test]
fn an_agents_banner_before_it_speaks_is_skipped() {
    let binaries = binaries!();
    let banner = Recipe::new()
        .line("ExampleAgent v1.2 (build 7f3c) starting")
        .line("Loading model... done")
        .words();
    let chain = chain(&binaries, "banner", 1, &["--on-start", &banner]);
    let mut editor = started(&chain);
    still_serves(&mut editor);
    assert!(
        agent_got_responses(&chain).is_empty(),
        "the agent got an answer to its banner: {:?}",
        chain.received(AGENT)
    );
    assert_not_routed(editor, &[("invalid_lines", 2)]);
}

// An editor that stops reading, then closes.

/// How much the conductor's peak resident memory may grow while the editor does not read:
/// the editor's queue (`queue_limit`, then the agent is paused), what one read of the agent
/// adds past it (64 KiB), the write loop's batch (64 KiB) and the allocator's slack, with room
/// to spare: measured, +1.4 MiB with a 1 MiB queue. A conductor that buffered the agent's
/// output would grow by the whole 200 MiB.
fn growth_bound(queue_limit: u64) -> u64 {
    2 * queue_limit + 4 * (1 << 20)
}

/// Waits until the agent's flood stops advancing (or ends); returns how much it wrote.
fn wait_until_held_back(progress: &Path, total: u64) -> u64 {
    let read = || -> u64 {
        std::fs::read_to_string(progress)
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + acp_conductor_tests::editor::patience() * 6;
    let (mut last, mut unchanged) = (read(), 0);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = read();
        if now >= total {
            return now;
        }
        // Held back: no progress for a second, after the conductor took at least something.
        unchanged = if now == last && now > 0 {
            unchanged + 1
        } else {
            0
        };
        if unchanged >= 20 {
            return now;
        }
        last = now;
        assert!(
            std::time::Instant::now() < deadline,
            "the agent's flood neither ended nor stopped: at {now} bytes"
        );
    }
}

#[test]
fn an_editor_that_stops_reading_holds_the_agent_back_and_then_leaves_cleanly() {
    const QUEUE_LIMIT: u64 = 1 << 20;
    const FLOOD: u64 = 200 << 20;
    let binaries = binaries!();
    // The default max_line: the flood's lines are longer than this file's 4 KiB.
    let mut chain = TestChain::new(&binaries, "stalled-editor");
    let progress = chain.file(AGENT, "progress");
    chain.agent_args(&["--progress-file", &progress.display().to_string()]);
    chain.conductor_setting("queue_limit", &QUEUE_LIMIT.to_string());
    let mut editor = started(&chain);
    let session = editor.new_session();
    let conductor = editor.pid();
    let before = processes::peak_rss_kib(conductor) * 1024;

    editor.stop_reading();
    editor.start_request(
        "session/prompt",
        prompt_params(&session, &format!("flood {FLOOD}")),
    );
    let written = wait_until_held_back(&progress, FLOOD);
    let peak = processes::peak_rss_kib(conductor) * 1024;
    let grown = peak.saturating_sub(before);
    eprintln!(
        "flood held back at {written} bytes; conductor VmHWM {before} -> {peak} bytes (+{grown}), bound +{}",
        growth_bound(QUEUE_LIMIT)
    );
    assert!(written < FLOOD, "the agent was never held back");
    assert!(
        written > QUEUE_LIMIT,
        "the conductor took only {written} bytes, less than its queue limit"
    );
    assert!(
        grown < growth_bound(QUEUE_LIMIT),
        "the conductor's peak memory grew by {grown} bytes while the agent had written {written}"
    );

    // The editor closes the conductor's stdout (its stdin stays open): the conductor exits 0
    // and leaves no process behind.
    let pids = chain_pids(&editor, &chain.fixture_pids());
    editor.close_stdout();
    let status = assert_all_gone_after_exit(&mut editor, &pids);
    assert!(status.success(), "{status}; stderr:\n{}", editor.stderr());
}

// The same from a proxy: what it prints before it speaks goes through the same link code.

#[test]
fn a_proxys_banner_garbage_stray_answer_and_over_long_line_are_skipped_and_counted() {
    let binaries = binaries!();
    let mut chain = chain(&binaries, "proxy-banner", 1, &[]);
    let proxy = &mut chain.proxies[0];
    let mut args = vec![
        "-c".to_string(),
        "printf 'proxy v1 starting\\n'; printf '\\000\\000\\n'; \
         printf '{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\\n'; \
         head -c 5000 /dev/zero | tr '\\000' x; echo; exec \"$@\""
            .to_string(),
        "sh".to_string(),
        proxy.command.display().to_string(),
    ];
    args.append(&mut proxy.args);
    proxy.command = Path::new("/bin/sh").to_path_buf();
    proxy.args = args;
    let mut editor = started(&chain);
    still_serves(&mut editor);
    let answered_null = chain
        .received("p1")
        .iter()
        .filter(|m| m.get("method").is_none() && m["id"].is_null())
        .count();
    assert_eq!(
        answered_null, 0,
        "nothing was written back for lines with no id"
    );
    assert_not_routed(
        editor,
        &[
            ("invalid_lines", 2),
            ("too_long_lines", 1),
            ("unknown_responses", 1),
        ],
    );
}
