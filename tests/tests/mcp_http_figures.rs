//! The HTTP bridge against the stdio shim, measured end to end: no process per server (3
//! provided servers, two sessions), the conductor's and the shims' memory, and a tool call's
//! round trip through each bridge and straight to the provider over ACP. Prints the figures
//! (`--nocapture`); docs/performance.md quotes them.

use acp_conductor_tests::binaries::NOTES_PROXY;
use acp_conductor_tests::mcp_chain::{Variant, launch_with_provider, run_script, use_rmcp_agent};
use acp_conductor_tests::processes::descendants;
use acp_conductor_tests::{Editor, TestChain, binaries};

const SERVERS: [&str; 3] = ["n1", "n2", "n3"];

/// Three notes proxies serving `n1`, `n2`, `n3`, and the rmcp agent with `agent_args`.
fn three_servers(label: &str, agent_args: &[&str]) -> Editor {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, label);
    let notes = binaries.workspace_program(&NOTES_PROXY);
    for name in SERVERS {
        chain.add_proxy(name, &notes, &["--name", name]);
    }
    use_rmcp_agent(&mut chain, agent_args);
    let mut editor = chain.launch();
    editor.initialize();
    editor
}

/// `VmRSS` of `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or(0)
}

/// The conductor's shim processes (`acp-conductor mcp-bridge ...`).
fn shims(conductor: u32) -> Vec<u32> {
    descendants(conductor)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.contains("\0mcp-bridge\0"))
        })
        .collect()
}

/// Opens the three servers in a new session and calls each once; then the shim processes
/// and the KiB resident in the conductor and in the shims.
fn session_with_three_servers(editor: &mut Editor, n: usize) -> (usize, u64, u64) {
    let session = editor.new_session();
    let mut script = Vec::new();
    for name in SERVERS {
        script.push(format!("open {name}-{n} {name}"));
        script.push(format!("call {name}-{n} recall"));
    }
    let script: Vec<&str> = script.iter().map(String::as_str).collect();
    let lines = run_script(editor, &session, &script);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("No notes are stored"))
            .count(),
        3,
        "{lines:#?}"
    );
    let shims = shims(editor.pid());
    let shims_kib = shims.iter().map(|pid| rss_kib(*pid)).sum();
    (shims.len(), rss_kib(editor.pid()), shims_kib)
}

#[test]
fn the_http_bridge_adds_no_process_per_server() {
    for (form, args) in [("http", &["--http"][..]), ("stdio", &[][..])] {
        let mut editor = three_servers(&format!("figures-{form}"), args);
        let before = rss_kib(editor.pid());
        let mut rows = Vec::new();
        for n in 1..=2 {
            let (processes, conductor, shims) = session_with_three_servers(&mut editor, n);
            let expected = if form == "http" { 0 } else { 3 * n };
            assert_eq!(
                processes, expected,
                "{form}: shim processes after {n} sessions"
            );
            rows.push(format!(
                "{form}: after {n} session(s) with 3 servers each: {processes} shim processes \
                 ({shims} KiB resident), conductor {conductor} KiB (was {before} KiB)"
            ));
        }
        println!("{}", rows.join("\n"));
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}

/// One tool call's round trip (300 in a row, `whoami` of the `rfd` fixture provider): through
/// the HTTP bridge, through the stdio shim, and straight to the provider over ACP by an agent
/// that speaks MCP over ACP itself.
#[test]
fn a_tool_calls_round_trip_through_each_bridge_and_directly() {
    for (form, args) in [
        ("http bridge", &["--http"][..]),
        ("stdio shim", &[][..]),
        ("direct over ACP", &["--acp"][..]),
    ] {
        let binaries = binaries!();
        let mut chain = TestChain::new(&binaries, &format!("figures-rtt-{}", form.len()));
        let (mut editor, session) = launch_with_provider(&mut chain, Variant::Rfd, args);
        let bench = run_script(
            &mut editor,
            &session,
            &["open b tools", "bench b whoami 300"],
        );
        assert!(bench[0].starts_with("opened b tools"), "{bench:#?}");
        assert!(bench[1].starts_with("bench b whoami: n=300 "), "{bench:#?}");
        println!("{form}: {}", bench[1]);
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}
