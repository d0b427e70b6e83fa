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
    assert_eq!(
        exchange(
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#
        ),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"sessionId\":\"demo-session-1\"}}\n"
    );
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"demo-session-1","prompt":[{{"type":"text","text":"hello"}}]}}}}"#
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
