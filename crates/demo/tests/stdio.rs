//! `acp-demo-agent` as a process: ACP on its stdin and stdout, nothing on stderr unless asked,
//! exit 0 once its input ends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn the_demo_agent_serves_acp_on_stdio_quietly_and_exits_at_eof() {
    let mut agent = Command::new(env!("CARGO_BIN_EXE_acp-demo-agent"))
        .env_remove("ACP_DEMO_LOG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start acp-demo-agent");
    let mut input = agent.stdin.take().unwrap();
    let mut output = BufReader::new(agent.stdout.take().unwrap());
    let mut exchange = |line: &str| {
        writeln!(input, "{line}").unwrap();
        let mut answer = String::new();
        output.read_line(&mut answer).unwrap();
        answer
    };
    let initialized = exchange(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    );
    assert!(
        initialized.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"#),
        "{initialized}"
    );
    let created = exchange(
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
    );
    // `demo-session-<8 hex digits>-1`: unique across processes, so only its shape is known.
    let session = created
        .strip_prefix(r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":""#)
        .and_then(|rest| rest.strip_suffix("\"}}\n"))
        .unwrap_or_else(|| panic!("{created}"));
    let token = session
        .strip_prefix("demo-session-")
        .and_then(|rest| rest.strip_suffix("-1"))
        .unwrap_or_else(|| panic!("{session}"));
    assert!(
        token.len() == 8
            && token
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{session}"
    );
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"hello"}}]}}}}"#
    )
    .unwrap();
    let mut last = String::new();
    while !last.contains(r#""id":3"#) {
        last.clear();
        assert_ne!(
            output.read_line(&mut last).unwrap(),
            0,
            "EOF before the answer"
        );
    }
    assert_eq!(
        last,
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n"
    );
    drop(input);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut output, &mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the last answer");
    let finished = agent.wait_with_output().unwrap();
    assert!(finished.status.success(), "{:?}", finished.status);
    assert_eq!(String::from_utf8_lossy(&finished.stderr), "");
}

/// The session id the first `session/new` of a fresh `acp-demo-agent` process gets.
fn first_session_id() -> String {
    let mut agent = Command::new(env!("CARGO_BIN_EXE_acp-demo-agent"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start acp-demo-agent");
    let mut input = agent.stdin.take().unwrap();
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1,"clientCapabilities":{{}}}}}}"#
    )
    .unwrap();
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"/","mcpServers":[]}}}}"#
    )
    .unwrap();
    drop(input);
    let output = agent.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let answer: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    answer["result"]["sessionId"].as_str().unwrap().to_owned()
}

/// Clients such as acpx keep sessions by id across every agent they run: two demo agents (two
/// conductors) must not both call their first session `demo-session-1`.
#[test]
fn two_demo_agent_processes_give_their_first_sessions_different_ids() {
    let (first, second) = (first_session_id(), first_session_id());
    assert!(first.starts_with("demo-session-"), "{first}");
    assert!(second.starts_with("demo-session-"), "{second}");
    assert_ne!(first, second);
}
