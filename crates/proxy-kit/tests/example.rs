//! The example proxy of docs/proxies.md: the guide shows exactly `examples/shout.rs`, and that
//! file does what the guide says when driven the way the conductor drives it.

#[allow(dead_code)]
#[path = "../examples/shout.rs"]
mod shout;

const GUIDE: &str = include_str!("../../../docs/proxies.md");
const EXAMPLE: &str = include_str!("../examples/shout.rs");

#[test]
fn guide_shows_the_example_file_verbatim() {
    let start = GUIDE
        .find("```rust,no_run\n//! `shout`")
        .expect("docs/proxies.md shows the shout example");
    let code = &GUIDE[start + "```rust,no_run\n".len()..];
    let end = code.find("\n```").expect("the code block ends");
    assert_eq!(&code[..end + 1], EXAMPLE);
}

#[test]
fn shout_upper_cases_agent_text_chunks_and_nothing_else() {
    let input = [
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"quiet please"}]}}"#,
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello, world"},"n":1.50}}}}"#,
        r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
    ]
    .join("\n");
    let mut out = Vec::new();
    proxy_kit::serve(shout::Shout, input.as_bytes(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"quiet please"}]}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"HELLO, WORLD"},"n":1.50}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}"#,
        ]
    );
}
