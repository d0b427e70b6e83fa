//! Real agents from npm, offline: codex-acp and claude-code-acp (installed at pinned versions
//! by `.ci/setup-interop`) answer `initialize`, `session/new` and a cancelled prompt with no
//! network and no real key, directly and through the conductor with two proxies (the tool guard
//! as a native process, the context proxy as a WASM component).
//!
//! Through the conductor, the `initialize` answer is the direct one byte for byte apart from
//! `mcpCapabilities.acp`, which the conductor sets to `true` (docs/mcp.md); the cancel is
//! answered with `cancelled`; and once the editor closes its input no process is left, also the
//! ones an agent started itself (codex-acp's launcher runs the agent's binary as its child).
//!
//! Offline means: HOME in a fresh directory, fake keys, and every model endpoint pointed at a
//! closed port on loopback (codex by its config file, claude by `ANTHROPIC_BASE_URL`), so a
//! prompt fails fast instead of waiting on the internet.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_conductor_tests::binaries::{TOOL_GUARD, workspace_root};
use acp_conductor_tests::editor::Editor;
use acp_conductor_tests::interop::{InteropTools, arg};
use acp_conductor_tests::marked_processes::{MARK_VARIABLE, MarkedProcesses, mark, marked};
use acp_conductor_tests::test_chain::{AgentEntry, TestChain};
use acp_conductor_tests::wasm::{self, CONTEXT, WasmChain, WasmTarget};
use acp_conductor_tests::{Binaries, binaries};
use serde_json::{Value, json};

/// A closed port on loopback: a model request is refused at once.
const NOWHERE: &str = "http://127.0.0.1:9";
const FAKE_KEY: &str = "offline-interop-test-key";
/// How long a real agent may take for one answer (claude-code-acp starts Claude Code for a
/// session, a large Node program, in a couple of seconds when the machine is idle).
const AGENT_PATIENCE: Duration = Duration::from_secs(60);
/// What the editor sends, the same bytes directly and through the conductor.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":false},"clientInfo":{"name":"interop","version":"1"}}}"#;

/// A real agent and what it needs to run offline.
struct RealAgent {
    name: &'static str,
    script: PathBuf,
    /// The `authenticate` method id to send before `session/new`, if the agent wants one.
    auth_method: Option<&'static str>,
}

fn codex(tools: &InteropTools) -> RealAgent {
    RealAgent {
        name: "codex-acp",
        script: tools.codex_acp(),
        auth_method: Some("codex-api-key"),
    }
}

fn claude(tools: &InteropTools) -> RealAgent {
    RealAgent {
        name: "claude-code-acp",
        script: tools.claude_code_acp(),
        auth_method: None,
    }
}

/// A fresh HOME for one run, with codex's model provider pointed at loopback.
fn offline_home(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    let codex = home.join(".codex");
    std::fs::create_dir_all(&codex).expect("create HOME");
    std::fs::write(
        codex.join("config.toml"),
        format!(
            "model_provider = \"loopback\"\n\n[model_providers.loopback]\nname = \"loopback\"\n\
             base_url = \"{NOWHERE}/v1\"\nenv_key = \"CODEX_API_KEY\"\nwire_api = \"responses\"\n"
        ),
    )
    .expect("write codex's config");
    home
}

/// The environment of an offline run (on the agent directly, or on the conductor, which hands
/// it down).
fn offline_env(home: &Path, mark: &str) -> Vec<(String, String)> {
    [
        ("HOME", arg(home)),
        ("XDG_CONFIG_HOME", arg(&home.join(".config"))),
        ("CODEX_API_KEY", FAKE_KEY.into()),
        ("OPENAI_API_KEY", FAKE_KEY.into()),
        ("ANTHROPIC_API_KEY", FAKE_KEY.into()),
        ("ANTHROPIC_BASE_URL", NOWHERE.into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        // Empty, so that claude-code-acp running as root (as CI does) does not offer
        // `bypassPermissions` and start Claude Code with --dangerously-skip-permissions, which
        // Claude Code refuses for root: then session/new fails.
        ("IS_SANDBOX", String::new()),
        (MARK_VARIABLE, mark.into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn env_refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// What one run showed.
struct Exchange {
    initialize: String,
    session_id: String,
    prompt_answer: Value,
}

/// initialize, (authenticate,) session/new, then a prompt cancelled at once.
fn play(editor: &mut Editor, agent: &RealAgent, cwd: &Path) -> Exchange {
    editor.send_line(INITIALIZE);
    let initialize = recv_response_line(editor, "1");
    if let Some(method) = agent.auth_method {
        editor.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"authenticate","params":{{"methodId":"{method}"}}}}"#
        ));
        let answer: Value = serde_json::from_str(&recv_response_line(editor, "2")).expect("JSON");
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    editor.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "session/new",
        "params": {"cwd": arg(cwd), "mcpServers": []}}));
    let created: Value = serde_json::from_str(&recv_response_line(editor, "3")).expect("JSON");
    let session_id = created["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {created}"))
        .to_owned();
    editor.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "Say hello"}]}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    editor.notify("session/cancel", json!({"sessionId": session_id}));
    let prompt_answer = serde_json::from_str(&recv_response_line(editor, "4")).expect("JSON");
    Exchange {
        initialize,
        session_id,
        prompt_answer,
    }
}

/// The raw line of the response with id `id`, skipping the notifications before it.
fn recv_response_line(editor: &mut Editor, id: &str) -> String {
    let wanted: Value = serde_json::from_str(id).expect("an id");
    for _ in 0..1000 {
        let line = editor.recv_line();
        let message: Value = serde_json::from_str(&line).expect("stdout is JSON lines");
        if message.get("method").is_none() && message["id"] == wanted {
            return line;
        }
    }
    panic!("no response {id}");
}

/// `line` with `mcpCapabilities.acp` set to `true` in place, or added as its last member: what
/// the conductor tells the editor (docs/mcp.md).
fn with_mcp_over_acp(line: &str) -> String {
    let start = line
        .find(r#""mcpCapabilities":{"#)
        .unwrap_or_else(|| panic!("no mcpCapabilities in {line}"))
        + r#""mcpCapabilities":{"#.len();
    let end = start + line[start..].find('}').expect("the object ends");
    let members = &line[start..end];
    let edited = if members.contains(r#""acp":false"#) {
        members.replace(r#""acp":false"#, r#""acp":true"#)
    } else if members.is_empty() {
        r#""acp":true"#.to_owned()
    } else {
        format!(r#"{members},"acp":true"#)
    };
    format!("{}{edited}{}", &line[..start], &line[end..])
}

/// The agent run directly, as an editor would; its processes are ended by the test.
fn run_directly(agent: &RealAgent, dir: &Path) -> Exchange {
    let mark = mark(&format!("{}-direct", agent.name));
    // Ends this run's processes if the exchange fails part way.
    let _watch = MarkedProcesses::watch(&mark);
    let env = offline_env(&offline_home(dir), &mark);
    let mut editor = Editor::launch(Path::new("node"), &[&agent.script], &env_refs(&env));
    editor.set_patience(AGENT_PATIENCE);
    let exchange = play(&mut editor, agent, dir);
    editor.close_stdin();
    // Neither agent ended within 10 s of the end of its input when tried (nor does codex-acp's
    // launcher end its binary): the processes this test started are ended here.
    std::thread::sleep(Duration::from_millis(200));
    for pid in marked(&mark).keys() {
        let pid = libc::pid_t::try_from(*pid).expect("pid fits pid_t");
        // SAFETY: kill(2) on a process this test started (it carries the test's mark).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let _ = editor.wait_exit();
    exchange
}

/// The agent behind the conductor, with the tool guard (native) and the context proxy (WASM).
fn through_two_proxies(binaries: &Binaries, agent: &RealAgent, dir_label: &str) {
    let mut chain = TestChain::new(binaries, dir_label);
    chain.agent = Some(AgentEntry {
        command: PathBuf::from("node"),
        args: vec![arg(&agent.script)],
        settings: Vec::new(),
    });
    let dir = chain.dir.clone();
    let direct = run_directly(agent, &dir.join("direct"));

    let mut chain = WasmChain::new(chain);
    let guard = binaries.workspace_program(&TOOL_GUARD);
    let policy = arg(&workspace_root().join("tests/interop/guard-policy.toml"));
    chain
        .add_native("guard", &guard)
        .args(&["--policy", &policy]);
    let context = wasm::artifact(binaries, CONTEXT, WasmTarget::P2);
    chain
        .add_wasm("context", &context)
        .args(&["--rule", "Always write tests"]);
    let mark = mark(&format!("{}-chain", agent.name));
    let watch = MarkedProcesses::watch(&mark);
    let project = dir.join("chain");
    let env = offline_env(&offline_home(&project), &mark);
    let mut editor = chain.launch_with_env(&env_refs(&env));
    editor.set_patience(AGENT_PATIENCE);
    let chained = play(&mut editor, agent, &project);

    assert_eq!(
        chained.initialize,
        with_mcp_over_acp(&direct.initialize),
        "initialize through the conductor differs from the direct answer (left: through it)"
    );
    for exchange in [&direct, &chained] {
        assert!(!exchange.session_id.is_empty());
        assert_eq!(
            exchange.prompt_answer["result"],
            json!({"stopReason": "cancelled"}),
            "{}",
            exchange.prompt_answer
        );
    }
    editor.close_stdin();
    let status = editor.wait_exit();
    assert!(status.success(), "{status}: {}", editor.stderr());
    let processes = watch.assert_all_gone(Duration::from_secs(10));
    assert!(
        processes.iter().any(|p| p.contains(&arg(&agent.script))),
        "the agent never ran: {processes:#?}"
    );
}

#[test]
fn codex_acp_offline_through_a_native_and_a_wasm_proxy() {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    through_two_proxies(&binaries, &codex(&tools), "interop-codex");
}

#[test]
fn claude_code_acp_offline_through_a_native_and_a_wasm_proxy() {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    through_two_proxies(&binaries, &claude(&tools), "interop-claude");
}

#[test]
fn the_documented_mcp_over_acp_edit() {
    assert_eq!(
        with_mcp_over_acp(r#"{"a":{"mcpCapabilities":{"http":true,"acp":false},"b":1}}"#),
        r#"{"a":{"mcpCapabilities":{"http":true,"acp":true},"b":1}}"#
    );
    assert_eq!(
        with_mcp_over_acp(r#"{"mcpCapabilities":{"http":true,"sse":true}}"#),
        r#"{"mcpCapabilities":{"http":true,"sse":true,"acp":true}}"#
    );
    assert_eq!(
        with_mcp_over_acp(r#"{"mcpCapabilities":{}}"#),
        r#"{"mcpCapabilities":{"acp":true}}"#
    );
}
