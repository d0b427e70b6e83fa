//! Bridge connections over time: concurrent connections to one server, shims closed by the
//! agent, by the agent's death and by the conductor's exit, and a provider that dies mid-call.

use std::time::Duration;

use acp_conductor_tests::mcp_chain::{
    RMCP, Variant, add_provider, line_after, of_kind, provider_events_until, run_script,
    use_rmcp_agent,
};
use acp_conductor_tests::processes::{descendants, describe, wait_until_gone};
use acp_conductor_tests::{Chain, Editor, binaries};

/// A chain of one RFD provider serving `tools` in front of the rmcp agent, initialized, with
/// a session; returns the editor and the session id.
fn start(chain: &mut Chain) -> (Editor, String) {
    add_provider(chain, "provider", "tools", Variant::Rfd);
    use_rmcp_agent(chain, &[]);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    (editor, session)
}

/// Opens connections `a` and `b` to `tools` and returns their shims' pids.
fn open_two(editor: &mut Editor, session: &str) -> [u32; 2] {
    let lines = run_script(
        editor,
        session,
        &["open a tools", "open b tools", "pid a", "pid b"],
    );
    let pid = |label: &str| -> u32 {
        line_after(&lines, &format!("pid {label} "))
            .parse()
            .expect("a pid")
    };
    [pid("a"), pid("b")]
}

fn assert_gone(pids: &[u32], what: &str) {
    let left = wait_until_gone(pids, Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "{what}: still running: {:?}",
        left.iter().map(|&p| describe(p)).collect::<Vec<_>>()
    );
}

#[test]
fn two_connections_to_one_server_are_separate() {
    let binaries = binaries!();
    let mut chain = Chain::new(&binaries, "mcp-two-connections");
    let (mut editor, session) = start(&mut chain);
    let [a, b] = open_two(&mut editor, &session);
    assert_ne!(a, b);
    let lines = run_script(
        &mut editor,
        &session,
        &[
            "call a whoami",
            "call b whoami",
            r#"call b echo {"text":"b"}"#,
        ],
    );
    let who_a = line_after(&lines, "result a whoami: ").to_string();
    let who_b = line_after(&lines, "result b whoami: ").to_string();
    assert_ne!(who_a, who_b);
    assert_eq!(lines[2], "result b echo: b");

    // Closing one connection disconnects it at the provider; the other keeps working.
    let lines = run_script(
        &mut editor,
        &session,
        &["close a", r#"call b echo {"text":"still"}"#],
    );
    assert!(lines[0].starts_with("closed a"), "{lines:?}");
    assert_eq!(lines[1], "result b echo: still");
    assert_gone(&[a], "the shim of a closed connection");
    let events =
        provider_events_until(&chain, "provider", |e| !of_kind(e, "disconnect").is_empty());
    assert_eq!(of_kind(&events, "connect").len(), 2, "{events:?}");
    let disconnects = of_kind(&events, "disconnect");
    assert_eq!(disconnects.len(), 1, "{events:?}");
    assert_eq!(disconnects[0]["connectionId"], who_a.as_str());
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
    assert_gone(&[b], "the other shim after the conductor exited");
}

#[test]
fn shims_exit_when_the_agent_dies() {
    let binaries = binaries!();
    let mut chain = Chain::new(&binaries, "mcp-agent-dies");
    let (mut editor, session) = start(&mut chain);
    let shims = open_two(&mut editor, &session);
    let agent = descendants(editor.pid())
        .into_iter()
        .find(|&pid| describe(pid).contains("test-rmcp-agent"))
        .expect("the agent runs under the conductor");
    // SAFETY: kill(2) on a process of this test's chain.
    assert_eq!(unsafe { libc::kill(agent as i32, libc::SIGKILL) }, 0);
    assert_gone(&shims, "shims of a dead agent");
    // The conductor reports the agent's death and ends; nothing of the chain is left.
    let chain_pids = descendants(editor.pid());
    editor.close_stdin();
    editor.wait_exit();
    assert_gone(&chain_pids, "the chain");
}

#[test]
fn no_shim_outlives_the_conductor() {
    let binaries = binaries!();
    for kill in [false, true] {
        let mut chain = Chain::new(&binaries, "mcp-conductor-exits");
        let (mut editor, session) = start(&mut chain);
        let shims = open_two(&mut editor, &session);
        let chain_pids = descendants(editor.pid());
        if kill {
            editor.signal(libc::SIGKILL);
        } else {
            editor.close_stdin();
            assert!(editor.wait_exit().success(), "{}", editor.stderr());
        }
        assert_gone(
            &shims,
            if kill {
                "shims of a killed conductor"
            } else {
                "shims"
            },
        );
        assert_gone(&chain_pids, "the chain");
    }
}

#[test]
fn a_provider_that_dies_mid_call_fails_the_call_not_hangs_it() {
    let binaries = binaries!();
    let mut chain = Chain::new(&binaries, "mcp-provider-dies");
    let (mut editor, session) = start(&mut chain);
    run_script(&mut editor, &session, &["open t tools"]);
    let exchange = editor.prompt(&session, "call t die");
    // The editor's prompt is answered (the chain lost a component) ...
    let error = exchange.error();
    assert_eq!(error["code"], -32001, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("provider"),
        "{error}"
    );
    // ... and the agent's MCP client got an MCP error for its call instead of waiting.
    let said = chain_said(&chain);
    assert!(
        said.iter().any(|l| l.starts_with("error t die: -32001")),
        "the agent said: {said:#?}"
    );
    editor.close_stdin();
    editor.wait_exit();
}

/// Every line the rmcp agent said, from its record, waiting for its last command to finish.
fn chain_said(chain: &Chain) -> Vec<String> {
    let deadline = std::time::Instant::now() + acp_conductor_tests::editor::patience();
    loop {
        let said: Vec<String> = chain
            .received(RMCP)
            .into_iter()
            .filter(|e| e["event"] == "said")
            .filter_map(|e| e["line"].as_str().map(str::to_string))
            .collect();
        if said.iter().any(|l| l.contains(" die: ")) || std::time::Instant::now() > deadline {
            return said;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
