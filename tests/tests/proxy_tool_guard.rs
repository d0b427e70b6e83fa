//! `acp-tool-guard` in a real chain (conductor, guard and agent as child processes): what the
//! policy answers itself never reaches the editor, what it refuses reaches the agent as the exact
//! JSON-RPC error, what it lets through the editor answers; and the README's demo chain.

use std::path::{Path, PathBuf};

use acp_conductor_tests::agent_script;
use acp_conductor_tests::binaries::{TOOL_GUARD, workspace_root};
use acp_conductor_tests::editor::{Exchange, Reply, prompt_params};
use acp_conductor_tests::jsonrpc::RawMessage;
use acp_conductor_tests::scenario::{check_example_proxies, prompt_example_config};
use acp_conductor_tests::test_chain::AGENT;
use acp_conductor_tests::{Editor, TestChain, binaries};
use serde_json::{Value, json};

/// The policy of most tests here: the one in docs/proxies.md, minus `title`, plus an edit rule.
const POLICY: &str = r#"
[[permission]]
name = "git internals"
paths = ["${cwd}/.git/**"]
decision = "deny"

[[permission]]
name = "read in project"
kind = ["read", "search"]
paths = ["${cwd}/**"]
decision = "allow"

[[permission]]
name = "no edits"
kind = ["edit"]
decision = "deny"

[fs]
read = ["${cwd}/**"]
write = ["${cwd}/**", "!${cwd}/.git/**", "!**/.env"]

[terminal]
deny = ["rm -rf *", "*git push*"]

[redact]
patterns = ["sk-[A-Za-z0-9]{20,}", "AKIA[0-9A-Z]{16}"]
"#;

/// The guard's JSON-RPC error code for a refused request.
const DENIED: i64 = -32000;

/// editor → conductor → guard → test-agent, initialized, with session `sess-1` open in `project`.
/// The editor is declared first so that the conductor stops before the directory goes.
struct Guarded {
    editor: Editor,
    chain: TestChain,
    project: PathBuf,
    session: String,
}

impl Guarded {
    fn start(label: &str, policy: &str) -> Self {
        Self::start_with(label, policy, &["--updates", "0"])
    }

    fn start_with(label: &str, policy: &str, agent_args: &[&str]) -> Self {
        let binaries = binaries!();
        let mut chain = TestChain::new(&binaries, label);
        chain.agent_args(agent_args);
        let policy_path = chain.dir.join("guard.toml");
        std::fs::write(&policy_path, policy).expect("write the policy");
        let guard = binaries.workspace_program(&TOOL_GUARD);
        chain.add_proxy("guard", &guard, &["--policy", &display(&policy_path)]);
        Self::open(chain)
    }

    /// Launches `chain` and opens a session in its `project` directory.
    fn open(chain: TestChain) -> Self {
        let project = chain.dir.join("project");
        std::fs::create_dir_all(&project).expect("create the project directory");
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session_in(&project);
        assert_eq!(session, "sess-1");
        Guarded {
            editor,
            chain,
            project,
            session,
        }
    }

    /// An absolute path inside the session's project directory.
    fn path(&self, relative: &str) -> String {
        display(&self.project.join(relative))
    }

    /// A prompt whose agent-side requests the editor refuses (the tests that use it expect none).
    fn prompt(&mut self, text: &str) -> Exchange {
        self.editor.prompt(&self.session, text)
    }

    fn prompt_answering(&mut self, text: &str, answer: impl FnMut(&Value) -> Reply) -> Exchange {
        let params = prompt_params(&self.session, text);
        self.editor
            .request_answering("session/prompt", params, answer)
    }

    /// Asserts that the turn ended normally with exactly one chunk, the agent's report
    /// that `method` was answered with `answer`, and that no request reached the editor.
    fn assert_answered_without_the_editor(
        &self,
        exchange: &Exchange,
        method: &str,
        answer: &Value,
    ) {
        assert!(
            exchange.requests.is_empty(),
            "the editor must not see the request: {:?}",
            exchange.requests
        );
        self.assert_reported(exchange, method, answer);
    }

    /// Asserts that the turn ended normally with exactly one chunk: the agent's report that
    /// `method` was answered with `answer`.
    fn assert_reported(&self, exchange: &Exchange, method: &str, answer: &Value) {
        let texts = exchange.chunk_texts();
        assert_eq!(
            exchange.notifications,
            texts
                .iter()
                .map(|text| chunk_message(&self.session, text))
                .collect::<Vec<_>>(),
            "only agent message chunks"
        );
        assert_eq!(texts.len(), 1, "one report: {texts:?}");
        assert_eq!(
            agent_script::reported_answer(method, &texts[0]),
            Some(answer.clone()),
            "the agent's report: {}",
            texts[0]
        );
        assert_eq!(
            *exchange.result(),
            json!({ "stopReason": "end_turn", "_meta": { "agent": "test-agent", "echo": null } })
        );
    }

    /// The responses the agent read, as the exact lines it received, in order.
    fn agent_answers(&self) -> Vec<String> {
        self.chain
            .recording(AGENT)
            .into_iter()
            .filter(|line| RawMessage::parse(line).is_ok_and(|m| m.is_response()))
            .collect()
    }

    /// [`Guarded::agent_answers`], parsed.
    fn agent_answer_values(&self) -> Vec<Value> {
        self.agent_answers()
            .iter()
            .map(|line| serde_json::from_str(line).expect("the agent records JSON lines"))
            .collect()
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The `session/update` notification the editor receives for one agent message chunk.
fn chunk_message(session: &str, text: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": agent_script::chunk(session, text),
    })
}

/// The guard's refusal as the agent must read it: request `id`, refused because of `rule`,
/// with `subject` (`("path", ...)` or `("command", ...)`) in the error's data.
///
/// A value, not a line: the guard builds `data` with `json!`, whose member order follows
/// serde_json's `preserve_order` feature, which feature unification turns on in a workspace
/// build (`rule` first) and leaves off in a build of the guard alone (`path` first).
fn refusal(id: u64, what: &str, rule: &str, subject: (&str, &str)) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": DENIED,
            "message": format!("tool-guard: {what} denied by {rule}"),
            "data": { subject.0: subject.1, "rule": rule },
        },
    })
}

/// The `error` member of a refusal, as the agent reports it.
fn refusal_answer(refusal: &Value) -> Value {
    json!({ "error": refusal["error"] })
}

/// A `permission-for` prompt: the agent asks permission for a tool call with these fields.
fn permission_for(fields: &Value) -> String {
    format!("{} {fields}", agent_script::PERMISSION_FOR)
}

fn selected(option: &str) -> Value {
    json!({ "result": { "outcome": { "outcome": "selected", "optionId": option } } })
}

#[test]
fn permission_an_allow_rule_matches_is_granted_by_the_guard_and_never_shown_to_the_editor() {
    let mut guarded = Guarded::start("guard-allow", POLICY);
    let main_rs = guarded.path("src/main.rs");
    let exchange = guarded.prompt(&permission_for(&json!({
        "title": "Read main.rs",
        "kind": "read",
        "locations": [{ "path": main_rs }],
    })));
    guarded.assert_answered_without_the_editor(
        &exchange,
        "session/request_permission",
        &selected("allow-once"),
    );
    assert_eq!(
        guarded.agent_answers(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}"#
        ]
    );
    guarded.editor.wait_for_stderr(
        r#"allow: permission for "Read main.rs" (kind read, 1 location(s)) in session sess-1 by permission #2 (read in project) (option "allow-once")"#,
    );
}

#[test]
fn permission_a_deny_rule_matches_is_rejected_by_the_guard_and_never_shown_to_the_editor() {
    let mut guarded = Guarded::start("guard-deny", POLICY);
    let lib_rs = guarded.path("src/lib.rs");
    let edit = guarded.prompt(&permission_for(&json!({
        "title": "Edit lib.rs",
        "kind": "edit",
        "locations": [{ "path": lib_rs }],
    })));
    guarded.assert_answered_without_the_editor(
        &edit,
        "session/request_permission",
        &selected("reject-once"),
    );
    // The first matching rule decides: a read, but inside .git.
    let git_config = guarded.path(".git/config");
    let git_read = guarded.prompt(&permission_for(&json!({
        "title": "Read the git config",
        "kind": "read",
        "locations": [{ "path": git_config }],
    })));
    guarded.assert_answered_without_the_editor(
        &git_read,
        "session/request_permission",
        &selected("reject-once"),
    );
    assert_eq!(
        guarded.agent_answers(),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"reject-once"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"selected","optionId":"reject-once"}}}"#,
        ]
    );
    guarded.editor.wait_for_stderr(
        r#"deny: permission for "Edit lib.rs" (kind edit, 1 location(s)) in session sess-1 by permission #3 (no edits) (option "reject-once")"#,
    );
    guarded.editor.wait_for_stderr(
        r#"deny: permission for "Read the git config" (kind read, 1 location(s)) in session sess-1 by permission #1 (git internals) (option "reject-once")"#,
    );
}

#[test]
fn permission_no_rule_matches_goes_to_the_editor_whose_answer_reaches_the_agent() {
    let mut guarded = Guarded::start("guard-ask", POLICY);
    let cases = [
        // A kind no rule names.
        (
            json!({ "title": "Fetch the docs", "kind": "fetch" }),
            "allow-once",
        ),
        // A read rule's kind, but outside its paths.
        (
            json!({ "title": "Read hosts", "kind": "read", "locations": [{ "path": "/etc/hosts" }] }),
            "reject-once",
        ),
    ];
    for (i, (fields, choice)) in cases.iter().enumerate() {
        let request_id = i as u64 + 1;
        let exchange = guarded.prompt_answering(&permission_for(fields), |request| {
            assert_eq!(request["method"], "session/request_permission");
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": choice } }))
        });
        assert_eq!(exchange.requests.len(), 1, "{:?}", exchange.requests);
        let request = &exchange.requests[0];
        let mut tool_call = json!({ "toolCallId": format!("call-{request_id}") });
        tool_call
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        assert_eq!(
            request["params"],
            json!({
                "sessionId": "sess-1",
                "toolCall": tool_call,
                "options": agent_script::permission_options(),
            })
        );
        guarded.assert_reported(&exchange, "session/request_permission", &selected(choice));
    }
    guarded.editor.wait_for_stderr(
        r#"ask: permission for "Fetch the docs" (kind fetch, 0 location(s)) in session sess-1: no permission rule matches; the editor asks the user"#,
    );
    guarded.editor.wait_for_stderr(
        r#"ask: permission for "Read hosts" (kind read, 1 location(s)) in session sess-1: no permission rule matches; the editor asks the user"#,
    );
}

#[test]
fn fs_writes_outside_the_allowed_globs_are_refused_with_the_exact_error_and_never_reach_the_editor()
{
    let mut guarded = Guarded::start("guard-fs-write", POLICY);
    let git_config = guarded.path(".git/config");
    let env_file = guarded.path("app/.env");
    let outside = display(&guarded.chain.dir.join("outside.txt"));
    let sneaky = guarded.path("sub/../../outside.txt");
    let cases = [
        (
            "/etc/passwd".to_string(),
            "/etc/passwd".to_string(),
            "fs.write (matches no allowed pattern)",
        ),
        (
            git_config.clone(),
            git_config,
            r#"fs.write "!${cwd}/.git/**""#,
        ),
        (env_file.clone(), env_file, r#"fs.write "!**/.env""#),
        // Judged on the normalized path, and the error names it.
        (sneaky, outside, "fs.write (matches no allowed pattern)"),
    ];
    let mut expected_answers = Vec::new();
    for (i, (asked, judged, rule)) in cases.iter().enumerate() {
        let id = i as u64 + 1;
        let exchange = guarded.prompt(&format!("fs-write {asked} root::0:0"));
        let line = refusal(id, &format!("write to {judged}"), rule, ("path", judged));
        guarded.assert_answered_without_the_editor(
            &exchange,
            "fs/write_text_file",
            &refusal_answer(&line),
        );
        guarded
            .editor
            .wait_for_stderr(&format!("deny: fs/write_text_file {judged} by {rule}"));
        expected_answers.push(line);
    }
    assert_eq!(guarded.agent_answer_values(), expected_answers);
}

#[test]
fn fs_write_inside_the_allowed_globs_goes_to_the_editor_whose_answer_reaches_the_agent() {
    let mut guarded = Guarded::start("guard-fs-write-ok", POLICY);
    let notes = guarded.path("docs/notes.md");
    let exchange =
        guarded.prompt_answering(&format!("fs-write {notes} hello there"), |_| Ok(json!({})));
    assert_eq!(exchange.requests.len(), 1, "{:?}", exchange.requests);
    assert_eq!(exchange.requests[0]["method"], "fs/write_text_file");
    assert_eq!(
        exchange.requests[0]["params"],
        json!({ "sessionId": "sess-1", "path": notes, "content": "hello there" })
    );
    guarded.assert_reported(&exchange, "fs/write_text_file", &json!({ "result": {} }));
    assert_eq!(
        guarded.agent_answers(),
        [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]
    );
    guarded.editor.wait_for_stderr(&format!(
        r#"allow: fs/write_text_file {notes} by fs.write "${{cwd}}/**""#
    ));
}

#[test]
fn fs_read_inside_the_allowed_globs_goes_to_the_editor_and_outside_is_refused() {
    let mut guarded = Guarded::start("guard-fs-read", POLICY);
    let readme = guarded.path("README.md");
    let allowed = guarded.prompt_answering(&format!("fs-read {readme}"), |request| {
        assert_eq!(request["method"], "fs/read_text_file");
        Ok(json!({ "content": "# Project\n" }))
    });
    assert_eq!(allowed.requests.len(), 1, "{:?}", allowed.requests);
    assert_eq!(
        allowed.requests[0]["params"],
        json!({ "sessionId": "sess-1", "path": readme })
    );
    guarded.assert_reported(
        &allowed,
        "fs/read_text_file",
        &json!({ "result": { "content": "# Project\n" } }),
    );

    let outside = guarded.prompt("fs-read /etc/hosts");
    let outside_line = refusal(
        2,
        "read of /etc/hosts",
        "fs.read (matches no allowed pattern)",
        ("path", "/etc/hosts"),
    );
    guarded.assert_answered_without_the_editor(
        &outside,
        "fs/read_text_file",
        &refusal_answer(&outside_line),
    );

    let relative = guarded.prompt("fs-read README.md");
    let relative_line = refusal(
        3,
        "read of README.md",
        "ACP (paths must be absolute)",
        ("path", "README.md"),
    );
    guarded.assert_answered_without_the_editor(
        &relative,
        "fs/read_text_file",
        &refusal_answer(&relative_line),
    );

    assert_eq!(
        guarded.agent_answers()[0],
        r##"{"jsonrpc":"2.0","id":1,"result":{"content":"# Project\n"}}"##
    );
    assert_eq!(
        guarded.agent_answer_values()[1..],
        [outside_line, relative_line]
    );
    guarded.editor.wait_for_stderr(&format!(
        r#"allow: fs/read_text_file {readme} by fs.read "${{cwd}}/**""#
    ));
    guarded.editor.wait_for_stderr(
        "deny: fs/read_text_file /etc/hosts by fs.read (matches no allowed pattern)",
    );
}

#[test]
fn terminal_commands_matching_a_deny_pattern_are_refused_and_others_reach_the_editor() {
    let mut guarded = Guarded::start("guard-terminal", POLICY);
    let denied = [
        ("rm -rf /", r#"terminal.deny "rm -rf *""#),
        (
            "git push --force origin main",
            r#"terminal.deny "*git push*""#,
        ),
    ];
    let mut expected_answers = Vec::new();
    for (i, (command, rule)) in denied.iter().enumerate() {
        let exchange = guarded.prompt(&format!("terminal {command}"));
        let line = refusal(
            i as u64 + 1,
            &format!("command {}", Value::from(*command)),
            rule,
            ("command", command),
        );
        guarded.assert_answered_without_the_editor(
            &exchange,
            "terminal/create",
            &refusal_answer(&line),
        );
        guarded
            .editor
            .wait_for_stderr(&format!("deny: terminal/create {:?} by {rule}", command));
        expected_answers.push(line);
    }

    let allowed = guarded.prompt_answering("terminal cargo test --workspace", |request| {
        assert_eq!(request["method"], "terminal/create");
        Ok(json!({ "terminalId": "term-1" }))
    });
    assert_eq!(allowed.requests.len(), 1, "{:?}", allowed.requests);
    assert_eq!(
        allowed.requests[0]["params"],
        json!({ "sessionId": "sess-1", "command": "cargo", "args": ["test", "--workspace"] })
    );
    guarded.assert_reported(
        &allowed,
        "terminal/create",
        &json!({ "result": { "terminalId": "term-1" } }),
    );
    expected_answers
        .push(json!({ "jsonrpc": "2.0", "id": 3, "result": { "terminalId": "term-1" } }));
    assert_eq!(guarded.agent_answer_values(), expected_answers);
}

/// The `session/prompt` the agent received last, parsed.
fn last_prompt_received(chain: &TestChain) -> Value {
    chain
        .received(AGENT)
        .into_iter()
        .rfind(|message| message["method"] == "session/prompt")
        .expect("the agent received a prompt")
}

fn redaction_through(label: &str, policy: &str, replacement: &str) {
    let mut guarded = Guarded::start_with(label, policy, &["--updates", "1"]);
    let prompt = json!([
        { "type": "text", "text": "deploy with sk-abcdefghijklmnopqrstuvwx0123 and sk-short" },
        { "type": "image", "mimeType": "image/png", "data": "c2stYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4MDEyMw==" },
        { "type": "resource", "resource": {
            "uri": "file:///srv/app/.env",
            "mimeType": "text/plain",
            "text": "AWS_KEY=AKIAABCDEFGHIJKLMNOP\nOPENAI=sk-ZYXWVUTSRQPONMLKJIHGFEDCBA\n"
        } }
    ]);
    let exchange = guarded.editor.request(
        "session/prompt",
        json!({ "sessionId": guarded.session, "prompt": prompt }),
    );
    let image = prompt[1].clone();
    let clean_text = format!("deploy with {replacement} and sk-short");
    assert_eq!(
        exchange.notifications,
        [chunk_message(
            &guarded.session,
            &agent_script::update_text(&clean_text, 1, 1)
        )]
    );
    assert_eq!(exchange.result()["stopReason"], "end_turn");

    let received = last_prompt_received(&guarded.chain);
    assert_eq!(
        received["params"],
        json!({
            "sessionId": "sess-1",
            "prompt": [
                { "type": "text", "text": clean_text },
                // Only text is redacted: other blocks are passed on as sent.
                image,
                { "type": "resource", "resource": {
                    "uri": "file:///srv/app/.env",
                    "mimeType": "text/plain",
                    "text": format!("AWS_KEY={replacement}\nOPENAI={replacement}\n")
                } }
            ]
        })
    );
    let recorded = guarded.chain.recording(AGENT).join("\n");
    for secret in [
        "sk-abcdefghijklmnopqrstuvwx0123",
        "AKIAABCDEFGHIJKLMNOP",
        "sk-ZYXWVUTSRQPONMLKJIHGFEDCBA",
    ] {
        assert!(!recorded.contains(secret), "the agent saw {secret}");
        assert!(
            !guarded.editor.stderr().contains(secret),
            "the log shows {secret}"
        );
    }
    guarded.editor.wait_for_stderr(
        "redact: session/prompt of session sess-1: 2 block(s) by redact.patterns[0], redact.patterns[1]",
    );
}

#[test]
fn secrets_in_prompt_text_reach_the_agent_as_redacted() {
    redaction_through("guard-redact", POLICY, "[REDACTED]");
}

#[test]
fn secrets_in_prompt_text_are_replaced_with_the_configured_replacement() {
    let policy = format!("{POLICY}replacement = \"<secret>\"\n");
    redaction_through("guard-redact-custom", &policy, "<secret>");
}

#[test]
fn without_the_guard_the_same_requests_reach_the_editor() {
    // The counterpart of the refusals above: what the guard stops, the fixture does send.
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "guard-absent");
    chain.agent_args(&["--updates", "0"]);
    let mut guarded = Guarded::open(chain);
    for (text, method) in [
        ("fs-write /etc/passwd root::0:0", "fs/write_text_file"),
        ("fs-read /etc/hosts", "fs/read_text_file"),
        ("terminal rm -rf /", "terminal/create"),
    ] {
        let exchange = guarded.prompt(text);
        assert_eq!(
            exchange.requests.len(),
            1,
            "{text}: {:?}",
            exchange.requests
        );
        assert_eq!(exchange.requests[0]["method"], method);
        let editor_error = json!({ "error": {
            "code": -32601,
            "message": "the test editor does not handle this"
        } });
        guarded.assert_reported(&exchange, method, &editor_error);
    }
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

fn demo_chunk(session: &str, text: &str) -> Value {
    update_message(
        session,
        json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": text } }),
    )
}

/// What the README's demo shows: `conductor.toml.example` (the demo agent behind the context
/// proxy and the tool guard), a session in the repository, the README's prompt.
#[test]
fn readme_demo_chain_injects_the_team_context_and_the_guard_denies_the_write() {
    let binaries = binaries!();
    check_example_proxies(&binaries);
    let root = workspace_root();
    let config = root.join("conductor.toml.example");
    let mut editor = Editor::launch(
        &binaries.conductor,
        &["run", "--config", &display(&config)],
        &[("ACP_CONDUCTOR_LOG", "debug")],
    );
    editor.initialize();
    let session = editor.new_session_in(root);
    let prompt = "Please write the release notes to a file";
    let exchange = editor.prompt(&session, prompt);

    let agents_md = root.join("docs/demo/AGENTS.md");
    let team_rules = std::fs::read_to_string(&agents_md).expect("docs/demo/AGENTS.md");
    let demo_file = display(&root.join("demo.txt"));
    let tool_call = json!({
        "toolCallId": "demo-write-1",
        "title": "Write demo.txt",
        "kind": "edit",
        "status": "pending",
        "locations": [{ "path": demo_file }],
        "rawInput": { "path": demo_file, "content": "Hello from the acp-conductor demo agent.\n" },
    });
    let mut announcement = json!({ "sessionUpdate": "tool_call" });
    announcement
        .as_object_mut()
        .unwrap()
        .extend(tool_call.as_object().unwrap().clone());
    let expected = [
        update_message(
            &session,
            json!({ "sessionUpdate": "plan", "entries": [
                { "content": "Show what the prompt contained", "priority": "high", "status": "in_progress" },
                { "content": "Carry out a requested write or read", "priority": "medium", "status": "pending" },
            ] }),
        ),
        demo_chunk(
            &session,
            "Demo agent here. I received 3 content block(s):\n",
        ),
        // The user's prompt first, then the context the proxy added after it.
        demo_chunk(&session, &quoted(prompt)),
        demo_chunk(
            &session,
            &format!(
                "[resource file://{}]\n{}",
                display(&agents_md),
                quoted(&team_rules)
            ),
        ),
        demo_chunk(
            &session,
            &quoted("<context source=\"rules\">\n- Always write tests\n</context>"),
        ),
        update_message(&session, announcement),
        update_message(
            &session,
            json!({ "sessionUpdate": "tool_call_update", "toolCallId": "demo-write-1", "status": "failed" }),
        ),
        demo_chunk(&session, "Permission denied: demo.txt was not written.\n"),
        update_message(
            &session,
            json!({ "sessionUpdate": "plan", "entries": [
                { "content": "Show what the prompt contained", "priority": "high", "status": "completed" },
                { "content": "Carry out a requested write or read", "priority": "medium", "status": "completed" },
            ] }),
        ),
    ];
    assert!(
        exchange.requests.is_empty(),
        "the guard answers the permission request: {:?}",
        exchange.requests
    );
    assert_eq!(exchange.notifications, expected);
    assert_eq!(exchange.result()["stopReason"], "end_turn");
    editor.wait_for_stderr(&format!(
        r#"deny: permission for "Write demo.txt" (kind edit, 1 location(s)) in session {session} by permission #1 (no edits in the demo) (option "reject")"#
    ));
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

/// The README's first command, as written there (run from the repository's root).
#[test]
fn readme_demo_command_prints_the_injected_context_and_the_denial() {
    let binaries = binaries!();
    let (stdout, stderr) =
        prompt_example_config(&binaries, &["Please write the release notes to a file"]);
    for text in [
        "Demo agent here. I received 3 content block(s):",
        "> - Never write outside the project directory.",
        "> - Always write tests",
        "> Please write the release notes to a file",
        "Permission denied: demo.txt was not written.",
    ] {
        assert!(
            stdout.contains(text),
            "stdout should contain `{text}`:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}
