//! `acp-context-proxy` in a real chain (conductor, proxy and agent as child processes): the
//! context files of the session's directory and the rules reach the agent after the user's
//! blocks (or before them, `--placement before`), once or on every prompt, never twice; asserted
//! on what the agent shows or records. The demo agent takes none of it as a request.

use std::path::PathBuf;

use acp_conductor_tests::agent_script;
use acp_conductor_tests::binaries::CONTEXT_PROXY;
use acp_conductor_tests::editor::Exchange;
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{Editor, TestChain, binaries};
use serde_json::{Value, json};

const AGENTS_MD: &str = "# Team rules\n\n- Be kind to reviewers.\n";
/// No final newline: the delimited text form adds one before `</context>`.
const STYLE_MD: &str = "Use British spelling.";

/// Stands for the project directory's absolute path in the proxy's arguments.
const PROJECT: &str = "{project}";

/// The arguments most tests give the proxy: two files relative to the session's directory
/// and two rules (worded so the demo agent does not take them as a request to act).
const FILES_AND_RULES: [&str; 8] = [
    "--file",
    "AGENTS.md",
    "--file",
    "docs/style.md",
    "--rule",
    "Always add tests",
    "--rule",
    "Keep answers short",
];

/// editor → conductor → context proxy → agent, initialized. The editor is declared first so
/// that the conductor stops before the directory goes.
struct Injected {
    editor: Editor,
    chain: TestChain,
    /// The sessions' working directory, holding `AGENTS.md` and `docs/style.md`.
    project: PathBuf,
}

impl Injected {
    /// In front of the built-in demo agent, which shows back every block it receives.
    fn demo(label: &str, args: &[&str]) -> Self {
        let binaries = binaries!();
        Self::launch(TestChain::with_demo_agent(&binaries, label), args)
    }

    /// In front of the test-agent, which records every line it receives.
    fn test_agent(label: &str, args: &[&str], agent_args: &[&str]) -> Self {
        let binaries = binaries!();
        let mut chain = TestChain::new(&binaries, label);
        chain.agent_args(agent_args);
        Self::launch(chain, args)
    }

    /// Adds the proxy with `args`, where [`PROJECT`] stands for the project's absolute path.
    fn launch(mut chain: TestChain, args: &[&str]) -> Self {
        let project = chain.dir.join("project");
        let args: Vec<String> = args
            .iter()
            .map(|arg| arg.replace(PROJECT, &project.display().to_string()))
            .collect();
        let proxy = chain.binaries.workspace_program(&CONTEXT_PROXY);
        chain.add_proxy("context", &proxy, &args);
        std::fs::create_dir_all(project.join("docs")).expect("create the project directory");
        std::fs::write(project.join("AGENTS.md"), AGENTS_MD).expect("write AGENTS.md");
        std::fs::write(project.join("docs/style.md"), STYLE_MD).expect("write docs/style.md");
        let mut editor = chain.launch();
        editor.initialize();
        Injected {
            editor,
            chain,
            project,
        }
    }

    fn new_session(&mut self) -> String {
        self.editor.new_session_in(&self.project)
    }

    /// The `file://` URI of a file of the project.
    fn uri(&self, relative: &str) -> String {
        format!("file://{}", self.project.join(relative).display())
    }

    /// What the demo agent shows for the injected `AGENTS.md`.
    fn agents_md_shown(&self) -> String {
        format!(
            "[resource {}]\n{}",
            self.uri("AGENTS.md"),
            quoted(AGENTS_MD)
        )
    }

    fn style_md_shown(&self) -> String {
        format!(
            "[resource {}]\n{}",
            self.uri("docs/style.md"),
            quoted(STYLE_MD)
        )
    }

    /// What the demo agent shows for the context of [`FILES_AND_RULES`], in order.
    fn all_context_shown(&self) -> Vec<String> {
        vec![
            self.agents_md_shown(),
            self.style_md_shown(),
            quoted(&rules_block(&["Always add tests", "Keep answers short"])),
        ]
    }
}

/// The text of the proxy's rules block.
fn rules_block(rules: &[&str]) -> String {
    let list: String = rules.iter().map(|rule| format!("- {rule}\n")).collect();
    format!("<context source=\"rules\">\n{list}</context>")
}

/// Markdown-style quote, the way the demo agent shows a text back: `> ` before every line.
fn quoted(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                ">\n".to_string()
            } else {
                format!("> {line}\n")
            }
        })
        .collect()
}

fn update_message(session: &str, update: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": { "sessionId": session, "update": update },
    })
}

/// The demo agent's checklist, as a client that takes no plan operations gets it.
fn checklist(session: &str, shown: &str, acted: &str) -> Value {
    update_message(
        session,
        json!({ "sessionUpdate": "plan", "entries": [
            { "content": "Show what the prompt contained", "priority": "high", "status": shown },
            { "content": "Carry out a requested write or read", "priority": "medium", "status": acted },
        ] }),
    )
}

/// Every notification of a demo agent turn that only shows back the blocks it received:
/// the plan, the count, one chunk per block, then the plan again, all done.
fn demo_turn(session: &str, blocks_shown: &[String]) -> Vec<Value> {
    let chunk = |text: &str| {
        update_message(
            session,
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
        )
    };
    let mut messages = vec![
        checklist(session, "in_progress", "pending"),
        chunk(&format!(
            "Demo agent here. I received {} content block(s):\n",
            blocks_shown.len()
        )),
    ];
    messages.extend(blocks_shown.iter().map(|text| chunk(text)));
    messages.push(checklist(session, "completed", "completed"));
    messages
}

/// Asserts the demo agent's turn showed exactly `blocks_shown` and ended normally.
fn assert_demo_turn(exchange: &Exchange, session: &str, blocks_shown: &[String]) {
    assert_eq!(
        exchange.notifications,
        demo_turn(session, blocks_shown),
        "\nchunks: {:#?}",
        exchange.chunk_texts()
    );
    assert_eq!(*exchange.result(), json!({ "stopReason": "end_turn" }));
    assert!(exchange.requests.is_empty(), "{:?}", exchange.requests);
}

/// What the demo agent shows: the user's blocks, then the context added after them.
fn with(context: Vec<String>, prompt_shown: &[&str]) -> Vec<String> {
    let mut shown: Vec<String> = prompt_shown.iter().map(|text| text.to_string()).collect();
    shown.extend(context);
    shown
}

#[test]
fn files_relative_to_the_session_directory_and_rules_reach_the_demo_agent_as_embedded_resources() {
    let mut injected = Injected::demo("context-demo", &FILES_AND_RULES);
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "hello");
    assert_demo_turn(
        &exchange,
        &session,
        &with(injected.all_context_shown(), &["> hello\n"]),
    );
    injected.editor.wait_for_stderr(&format!(
        "session {session}: added 3 context block(s) as embedded resources (2 file(s), 2 rule(s))"
    ));
}

#[test]
fn mode_once_injects_on_the_first_prompt_of_each_session_only() {
    let mut args = FILES_AND_RULES.to_vec();
    args.extend(["--mode", "once"]);
    let mut injected = Injected::demo("context-once", &args);
    let first_session = injected.new_session();
    let first = injected.editor.prompt(&first_session, "hello");
    assert_demo_turn(
        &first,
        &first_session,
        &with(injected.all_context_shown(), &["> hello\n"]),
    );
    let second = injected.editor.prompt(&first_session, "and again");
    assert_demo_turn(
        &second,
        &first_session,
        &with(Vec::new(), &["> and again\n"]),
    );

    // A new session gets its own first prompt.
    let other_session = injected.new_session();
    assert_ne!(other_session, first_session);
    let other = injected.editor.prompt(&other_session, "hello there");
    assert_demo_turn(
        &other,
        &other_session,
        &with(injected.all_context_shown(), &["> hello there\n"]),
    );
    let third = injected.editor.prompt(&first_session, "still nothing");
    assert_demo_turn(
        &third,
        &first_session,
        &with(Vec::new(), &["> still nothing\n"]),
    );
}

#[test]
fn mode_every_injects_on_every_prompt_once_and_rereads_the_files() {
    let mut args = FILES_AND_RULES.to_vec();
    args.extend(["--mode", "every"]);
    let mut injected = Injected::demo("context-every", &args);
    let session = injected.new_session();
    for text in ["one", "two", "three"] {
        let exchange = injected.editor.prompt(&session, text);
        assert_demo_turn(
            &exchange,
            &session,
            &with(injected.all_context_shown(), &[&quoted(text)]),
        );
    }
    // Read when injected: an edit shows up in the next prompt.
    let edited = "Use American spelling.";
    std::fs::write(injected.project.join("docs/style.md"), edited).unwrap();
    let exchange = injected.editor.prompt(&session, "four");
    let mut shown = injected.all_context_shown();
    shown[1] = format!(
        "[resource {}]\n{}",
        injected.uri("docs/style.md"),
        quoted(edited)
    );
    assert_demo_turn(&exchange, &session, &with(shown, &["> four\n"]));
}

#[test]
fn context_already_listed_or_already_in_the_prompt_is_not_injected_again() {
    let mut injected = Injected::demo(
        "context-dedup",
        &[
            "--file",
            "AGENTS.md",
            "--file",
            "./AGENTS.md",
            "--file",
            "docs/../AGENTS.md",
            "--file",
            &format!("{PROJECT}/AGENTS.md"),
            "--rule",
            "Always add tests",
            "--rule",
            "Always add tests",
            "--mode",
            "every",
        ],
    );
    let session = injected.new_session();
    let rules_shown = quoted(&rules_block(&["Always add tests"]));

    // Four spellings of one file, one rule twice: each once.
    let plain = injected.editor.prompt(&session, "hello");
    assert_demo_turn(
        &plain,
        &session,
        &with(
            vec![injected.agents_md_shown(), rules_shown.clone()],
            &["> hello\n"],
        ),
    );

    // The editor already links the file: only the rules are added.
    let agents_uri = injected.uri("AGENTS.md");
    let linked = injected.editor.request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [
            { "type": "resource_link", "uri": agents_uri, "name": "AGENTS.md" },
            { "type": "text", "text": "with a link" },
        ] }),
    );
    assert_demo_turn(
        &linked,
        &session,
        &with(
            vec![rules_shown],
            &[&format!("[link {agents_uri}]\n"), "> with a link\n"],
        ),
    );

    // The editor already embeds the file and the rules block: nothing is added.
    let carried = rules_block(&["Always add tests"]);
    let complete = injected.editor.request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [
            { "type": "resource", "resource": { "uri": agents_uri, "mimeType": "text/markdown", "text": "my copy\n" } },
            { "type": "text", "text": carried },
        ] }),
    );
    assert_demo_turn(
        &complete,
        &session,
        &[
            format!("[resource {agents_uri}]\n> my copy\n"),
            quoted(&carried),
        ],
    );
    injected
        .editor
        .wait_for_stderr(&format!("session {session}: nothing to add to this prompt"));
}

#[test]
fn a_missing_file_is_skipped_with_a_log_line_and_the_prompt_still_works() {
    let mut injected = Injected::demo(
        "context-missing",
        &["--file", "missing.md", "--file", "AGENTS.md"],
    );
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "hello");
    assert_demo_turn(
        &exchange,
        &session,
        &with(vec![injected.agents_md_shown()], &["> hello\n"]),
    );
    let missing = injected.project.join("missing.md");
    injected.editor.wait_for_stderr(&format!(
        "context file {} skipped: No such file or directory (os error 2)",
        missing.display()
    ));
}

#[test]
fn only_missing_files_leave_the_prompt_as_sent() {
    let mut injected = Injected::demo("context-all-missing", &["--file", "missing.md"]);
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "hello");
    assert_demo_turn(&exchange, &session, &with(Vec::new(), &["> hello\n"]));
    injected
        .editor
        .wait_for_stderr(&format!("session {session}: nothing to add to this prompt"));
}

/// The `params` of the `session/prompt` the test-agent received last.
fn last_prompt_params(chain: &TestChain) -> Value {
    chain
        .received(AGENT)
        .into_iter()
        .rfind(|message| message["method"] == "session/prompt")
        .expect("the agent received a prompt")["params"]
        .clone()
}

#[test]
fn test_agent_with_embedded_context_records_the_prompt_then_resources_then_rules() {
    let mut injected = Injected::test_agent("context-test-agent", &FILES_AND_RULES, &[]);
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "hello");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    // The test-agent echoes the text blocks it received, joined by spaces.
    let rules = rules_block(&["Always add tests", "Keep answers short"]);
    assert_eq!(
        exchange.chunk_texts(),
        [agent_script::update_text(&format!("hello {rules}"), 1, 1)]
    );
    assert_eq!(
        last_prompt_params(&injected.chain),
        json!({
            "sessionId": session,
            "prompt": [
                { "type": "text", "text": "hello" },
                { "type": "resource", "resource": {
                    "uri": injected.uri("AGENTS.md"), "mimeType": "text/markdown", "text": AGENTS_MD
                } },
                { "type": "resource", "resource": {
                    "uri": injected.uri("docs/style.md"), "mimeType": "text/markdown", "text": STYLE_MD
                } },
                { "type": "text", "text": rules },
            ]
        })
    );
}

#[test]
fn test_agent_without_embedded_context_records_the_prompt_then_one_delimited_text_block() {
    let mut injected = Injected::test_agent(
        "context-test-agent-text",
        &FILES_AND_RULES,
        &["--no-embedded-context"],
    );
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "hello");
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    let context = format!(
        "<context source=\"AGENTS.md\">\n{AGENTS_MD}</context>\n\n\
         <context source=\"docs/style.md\">\n{STYLE_MD}\n</context>\n\n{}",
        rules_block(&["Always add tests", "Keep answers short"])
    );
    assert_eq!(
        last_prompt_params(&injected.chain),
        json!({
            "sessionId": session,
            "prompt": [
                { "type": "text", "text": "hello" },
                { "type": "text", "text": context },
            ]
        })
    );
    assert_eq!(
        exchange.chunk_texts(),
        [agent_script::update_text(&format!("hello {context}"), 1, 1)]
    );
    injected
        .editor
        .wait_for_stderr("session sess-1: added 1 context block(s) as text (2 file(s), 2 rule(s))");
}

#[test]
fn placement_before_puts_the_context_in_front_of_the_users_blocks() {
    let mut args = FILES_AND_RULES.to_vec();
    args.extend(["--placement", "before"]);
    let mut injected = Injected::demo("context-before", &args);
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "hello");
    let mut shown = injected.all_context_shown();
    shown.push("> hello\n".to_string());
    assert_demo_turn(&exchange, &session, &shown);
}

/// The example chain's rule, "Always write tests", is context: a "Hello" asks the demo agent for
/// nothing (it used to ask permission to write a file on every first prompt), wherever the
/// context goes; a prompt that does ask to write still does.
#[test]
fn the_demo_agent_takes_an_injected_rule_about_writing_as_context_not_as_a_request() {
    let rules = quoted(&rules_block(&["Always write tests"]));
    // The default placement (after the user's blocks), then before them.
    for placement in [&[][..], &["--placement", "before"]] {
        let mut args = vec!["--rule", "Always write tests"];
        args.extend(placement);
        let mut injected = Injected::demo(&format!("context-rule-{}", placement.len()), &args);
        let session = injected.new_session();
        let exchange = injected.editor.prompt(&session, "Hello");
        let shown = if placement.is_empty() {
            vec!["> Hello\n".to_string(), rules.clone()]
        } else {
            vec![rules.clone(), "> Hello\n".to_string()]
        };
        assert_demo_turn(&exchange, &session, &shown);
    }
    let mut injected = Injected::demo("context-rule-write", &["--rule", "Always write tests"]);
    let session = injected.new_session();
    let exchange = injected.editor.prompt(&session, "Please write the notes");
    assert_eq!(exchange.requests.len(), 1, "{:?}", exchange.requests);
    assert_eq!(
        exchange.requests[0]["method"], "session/request_permission",
        "{:?}",
        exchange.requests
    );
}
