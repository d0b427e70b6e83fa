//! The notes proxy end to end: its per-session tools used by an rmcp agent through the bridge,
//! native and as WASM, and by the built-in demo agent as the README shows.

use acp_conductor_tests::binaries::NOTES_PROXY;
use acp_conductor_tests::mcp_chain::{run_script, use_rmcp_agent};
use acp_conductor_tests::scenario::prompt_example_config;
use acp_conductor_tests::wasm::{self, WasmChain, WasmTarget};
use acp_conductor_tests::{Editor, TestChain, binaries};

/// Remembers in one session, recalls in both: notes belong to the session they were made in.
fn assert_notes_are_per_session(editor: &mut Editor) {
    editor.initialize();
    let first = editor.new_session();
    let second = editor.new_session();
    let lines = run_script(
        editor,
        &first,
        &[
            "open n notes",
            "list n",
            r#"call n remember {"note":"the release is on Friday"}"#,
            r#"call n remember {"note":"run the migrations first"}"#,
            "call n forget {\"number\":2}",
            "call n recall",
            "call n forget {\"number\":7}",
        ],
    );
    assert!(lines[0].starts_with("opened n notes "), "{lines:#?}");
    assert_eq!(lines[1], "tools n: remember,recall,forget", "{lines:#?}");
    assert_eq!(
        lines[2],
        "result n remember: Remembered note 1 for this session: the release is on Friday"
    );
    assert!(lines[4].starts_with("result n forget: Forgot note 2: run the migrations first"));
    let recall = lines
        .iter()
        .position(|l| l.starts_with("result n recall:"))
        .expect("recall answered");
    assert!(
        lines[recall..]
            .iter()
            .any(|l| l.contains("1. the release is on Friday")),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("2. run the migrations")),
        "{lines:#?}"
    );
    let bad = lines.last().expect("forget 7 answered");
    assert!(
        bad.starts_with("result n forget:") && bad.ends_with("[isError]"),
        "{lines:#?}"
    );

    let other = run_script(editor, &second, &["open m notes", "call m recall"]);
    assert_eq!(
        other[1],
        "result m recall: No notes are stored for this session."
    );
}

#[test]
fn notes_tools_through_the_bridge_native() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "notes-native");
    let notes = binaries.workspace_program(&NOTES_PROXY);
    chain.add_proxy::<&str>("notes", &notes, &[]);
    use_rmcp_agent(&mut chain, &[]);
    let mut editor = chain.launch();
    assert_notes_are_per_session(&mut editor);
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn notes_tools_through_the_bridge_as_wasm() {
    let binaries = binaries!();
    for target in WasmTarget::ALL {
        let mut chain = TestChain::new(&binaries, &format!("notes-{}", target.triple()));
        use_rmcp_agent(&mut chain, &[]);
        let mut chain = WasmChain::new(chain);
        chain.add_wasm("notes", &wasm::artifact(&binaries, wasm::NOTES, target));
        let mut editor = chain.launch();
        assert_notes_are_per_session(&mut editor);
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
    }
}

/// The README's tool demo, as written there (run from the repository's root): the demo agent
/// calls the notes proxy's tools through the bridge, and the note outlives the turn.
#[test]
fn readme_tool_demo_remembers_then_recalls() {
    let binaries = binaries!();
    let (stdout, stderr) = prompt_example_config(
        &binaries,
        &[
            "Remember that the release is on Friday",
            "What do you recall?",
        ],
    );
    let expected = [
        "[tool] notes: remember (other) pending",
        "[tool] demo-tool-1 -> completed",
        "The `remember` tool of notes answered: Remembered note 1 for this session: the release is on Friday",
        "[prompt] What do you recall?",
        "[tool] notes: recall (other) pending",
        "[tool] demo-tool-2 -> completed",
        "1. the release is on Friday",
    ];
    let mut rest: &str = &stdout;
    for text in expected {
        let at = rest.find(text).unwrap_or_else(|| {
            panic!("stdout should contain `{text}` (in this order):\n{stdout}\nstderr:\n{stderr}")
        });
        rest = &rest[at + text.len()..];
    }
}
