//! The suite's side of the judge: a line the schema refuses fails the scenario, and the failure
//! names the line's link, its place there and the schema's reason. (The judge's own tests, in
//! tests/conformance-judge, pin what it refuses.)

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::links::{LinkKind, LinkRecord};
use super::report::Report;

/// What the conductor wrote to the editor: a `session/update` without its `sessionId`, after a
/// conforming line.
fn editor_link() -> LinkRecord {
    LinkRecord::new(
        "editor",
        LinkKind::Editor,
        vec![
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#.to_string(),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#.to_string(),
        ],
        vec![
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#
                .to_string(),
        ],
    )
}

#[test]
fn a_session_update_without_session_id_fails_the_scenario() {
    let report = Report::of(&[editor_link()]);
    let failures = report.failures();
    assert_eq!(failures.len(), 1, "{:#?}", report.judged);
    let refused = failures[0];
    assert_eq!(
        (refused.link.as_str(), refused.kind, refused.number),
        ("editor", LinkKind::Editor, 2)
    );
    assert_eq!(
        refused.what,
        "notification session/update agent_message_chunk"
    );
    let reason = refused.verdict.as_ref().expect_err("refused");
    assert!(reason.contains("sessionId"), "{reason}");
    assert!(report.judged_any(LinkKind::Editor, "result of session/new"));

    let failed = catch_unwind(AssertUnwindSafe(|| {
        report.assert_conformant("a refused line")
    }));
    let panic = failed.expect_err("a refused line passed the scenario");
    let message = panic
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    for context in [
        "the schema rejected 1 of 2 lines",
        "link: editor (editor), line 2",
        "sessionId",
    ] {
        assert!(message.contains(context), "no {context:?} in {message}");
    }
}
