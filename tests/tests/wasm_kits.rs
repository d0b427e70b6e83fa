//! The TypeScript and Python proxy kits through the real conductor: the two example proxies
//! (secret-redaction in Python, prompt-templates in TypeScript) built to WASM do their job, the
//! test suite's kit-probe proxies (each kit's template plus a probe) give the same transcript
//! natively and as WASM, and the sandbox still denies files outside grants, variables and the
//! network to both languages. The components come from `.ci/setup-wasm-kits`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use acp_conductor_tests::binaries;
use acp_conductor_tests::binaries::workspace_root;
use acp_conductor_tests::editor::{Editor, Reply, initialize_params};
use acp_conductor_tests::test_chain::{AGENT, TestChain};
use acp_conductor_tests::wasm::{self, ProxyEntry, WasmChain};
use serde_json::{Value, json};

/// A file `.ci/setup-wasm-kits` builds under `target/wasm-kits`.
fn built(relative: &str) -> PathBuf {
    let path = workspace_root().join("target/wasm-kits").join(relative);
    assert!(
        path.is_file(),
        "{} is missing: run .ci/setup-wasm-kits, which installs the kits' pinned tools and \
         builds their components",
        path.display()
    );
    path
}

/// The components of the kits, by name.
const COMPONENTS: [&str; 4] = [
    "secret-redaction",
    "prompt-templates",
    "kit-probe-py",
    "kit-probe-ts",
];

/// `target/wasm-kits/components/NAME.wasm`, compiled into the shared cache on first use.
fn component(name: &str) -> PathBuf {
    static WARM: OnceLock<()> = OnceLock::new();
    WARM.get_or_init(|| {
        let binaries = binaries!();
        let all: Vec<(&str, PathBuf)> = COMPONENTS
            .iter()
            .map(|name| (*name, built(&format!("components/{name}.wasm"))))
            .collect();
        wasm::warm_components(&binaries, &all);
    });
    built(&format!("components/{name}.wasm"))
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// A chain in a fresh directory with the test-agent at its end and no proxy yet.
fn chain(label: &str) -> WasmChain {
    let binaries = binaries!();
    WasmChain::new(TestChain::new(&binaries, label))
}

/// How long a test waits for any one message: loading a 14-18 MB component, even from the
/// compile cache, takes seconds under a debug conductor on a busy machine.
const PATIENCE: Duration = Duration::from_secs(120);

fn launch(chain: &WasmChain, envs: &[(&str, &str)]) -> Editor {
    let mut editor = chain.launch_with_env(envs);
    editor.set_patience(PATIENCE);
    editor
}

/// `dir/name` holding `text`, `dir` created.
fn write_in(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create a test directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a test file");
    path
}

/// Every line the agent received, as one text: what must never hold a secret.
fn everything_the_agent_received(chain: &WasmChain) -> String {
    chain.chain.recording(AGENT).join("\n")
}

/// The params of the `n`th (from 0) `session/prompt` the agent received.
fn received_prompt(chain: &WasmChain, n: usize) -> Value {
    chain
        .chain
        .received(AGENT)
        .into_iter()
        .filter(|m| m["method"] == "session/prompt")
        .nth(n)
        .unwrap_or_else(|| panic!("the agent received no prompt #{n}"))["params"]
        .clone()
}

/// The results of the answers the agent received to its own requests, in order: the agent
/// receives no other responses.
fn received_answers(chain: &WasmChain) -> Vec<Value> {
    chain
        .chain
        .received(AGENT)
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| m["result"].clone())
        .collect()
}

const KEY: &str = "sk-ABCDEFGHIJKLMNOPQRSTUVWX";
const PASSWORD: &str = "hunter2-password";
const KEY_PATTERN: &str = "sk-[A-Za-z0-9]{20,}";

/// editor → conductor → secret-redaction (WASM) → test-agent, the values file granted
/// read-only at `/secrets`, initialized with session `sess-1` open.
fn redaction_chain(label: &str) -> (WasmChain, Editor, String) {
    let mut chain = chain(label);
    let secrets = chain.chain.dir.join("secrets");
    write_in(&secrets, "values.txt", &format!("{PASSWORD}\n"));
    chain
        .add_wasm("redact", &component("secret-redaction"))
        .args(&[
            "--pattern",
            KEY_PATTERN,
            "--values-file",
            "/secrets/values.txt",
        ])
        .grant_dir(&secrets, "/secrets", "ro");
    let mut editor = launch(&chain, &[]);
    editor.initialize();
    let session = editor.new_session();
    (chain, editor, session)
}

fn answering(method: &'static str, result: Value) -> impl FnMut(&Value) -> Reply {
    move |request| {
        assert_eq!(request["method"], method, "unexpected request {request}");
        Ok(result.clone())
    }
}

#[test]
fn secret_redaction_removes_secrets_from_prompts_resources_files_and_terminal_output() {
    let (chain, mut editor, session) = redaction_chain("kits-redact");

    let prompt = json!({
        "sessionId": session,
        "prompt": [
            { "type": "text", "text": format!("deploy with {KEY} and {PASSWORD}") },
            { "type": "resource", "resource": { "uri": "file:///p/.env", "text": format!("TOKEN={PASSWORD}") } },
        ],
    });
    let turn = editor.request("session/prompt", prompt);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let read = editor.request_answering(
        "session/prompt",
        agent_script_prompt(&session, "fs-read /p/.env"),
        answering(
            "fs/read_text_file",
            json!({ "content": format!("API={KEY}") }),
        ),
    );
    assert_eq!(read.result()["stopReason"], "end_turn");
    let output = editor.request_answering(
        "session/prompt",
        agent_script_prompt(&session, "terminal-output term-1"),
        answering(
            "terminal/output",
            json!({ "output": format!("$ echo {PASSWORD}\n{PASSWORD}\n"), "truncated": false }),
        ),
    );
    assert_eq!(output.result()["stopReason"], "end_turn");
    drop(editor);

    let received = everything_the_agent_received(&chain);
    for secret in [KEY, PASSWORD] {
        assert!(
            !received.contains(secret),
            "a secret reached the agent: {received}"
        );
    }
    let pattern = format!("pattern {KEY_PATTERN}");
    let prompt = received_prompt(&chain, 0);
    assert_eq!(
        prompt["prompt"],
        json!([
            { "type": "text", "text": "deploy with [REDACTED] and [REDACTED]" },
            { "type": "resource", "resource": { "uri": "file:///p/.env", "text": "TOKEN=[REDACTED]" } },
        ])
    );
    assert_eq!(
        prompt["_meta"]["secretRedaction"]["redacted"],
        json!([
            { "where": "prompt[0].text", "rule": pattern, "count": 1 },
            { "where": "prompt[0].text", "rule": "value 1", "count": 1 },
            { "where": "prompt[1].resource.text", "rule": "value 1", "count": 1 },
        ]),
        "the note says what was removed where, never the value"
    );
    let answers = received_answers(&chain);
    assert_eq!(answers.len(), 2, "one answer per request: {answers:?}");
    let (file, terminal) = (&answers[0], &answers[1]);
    assert_eq!(file["content"], "API=[REDACTED]");
    assert_eq!(
        file["_meta"]["secretRedaction"]["redacted"],
        json!([{ "where": "fs/read_text_file.content", "rule": pattern, "count": 1 }])
    );
    assert_eq!(terminal["output"], "$ echo [REDACTED]\n[REDACTED]\n");
    assert_eq!(terminal["truncated"], false);
    assert_eq!(
        terminal["_meta"]["secretRedaction"]["redacted"],
        json!([{ "where": "terminal/output.output", "rule": "value 1", "count": 2 }])
    );
}

fn agent_script_prompt(session: &str, text: &str) -> Value {
    json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] })
}

/// Starts a chain whose only proxy cannot start, and returns the editor's `initialize` outcome.
fn initialize_outcome(chain: &WasmChain) -> Value {
    let mut editor = launch(chain, &[]);
    editor.request("initialize", initialize_params()).response
}

#[test]
fn secret_redaction_cannot_read_a_values_file_outside_its_grant() {
    let mut chain = chain("kits-redact-ungranted");
    let secrets = chain.chain.dir.join("secrets");
    let values = write_in(&secrets, "values.txt", PASSWORD);
    chain
        .add_wasm("redact", &component("secret-redaction"))
        .args(&["--values-file", &display(&values)]);
    let outcome = initialize_outcome(&chain);
    assert!(
        outcome.get("error").is_some(),
        "the proxy read a file it was not granted: {outcome}"
    );
}

/// The templates file of the prompt-templates tests.
const TEMPLATES: &str = r#"{"commands": [
  {"name": "review", "description": "Review a file", "hint": "path", "template": "Review {{args}} for bugs."},
  {"name": "explain", "description": "Explain code", "template": "Explain {{args}} briefly."}
]}"#;

fn commands_update(session: &str) -> Value {
    json!({
        "sessionId": session,
        "update": {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                { "name": "review", "description": "Review a file", "input": { "hint": "path" } },
                { "name": "explain", "description": "Explain code" },
            ],
        },
    })
}

#[test]
fn prompt_templates_advertise_their_commands_and_expand_them() {
    let mut chain = chain("kits-templates");
    let granted = chain.chain.dir.join("templates");
    write_in(&granted, "templates.json", TEMPLATES);
    chain
        .add_wasm("templates", &component("prompt-templates"))
        .args(&["--templates", "/templates/templates.json"])
        .grant_dir(&granted, "/templates", "ro");
    let mut editor = launch(&chain, &[]);
    editor.initialize();
    let session = editor.new_session();
    let advertised = editor.wait_for(|m| m["method"] == "session/update");
    assert_eq!(advertised["params"], commands_update(&session));

    let turn = editor.prompt(&session, "/review src/lib.rs");
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let turn = editor.prompt(&session, "/unknown stays as written");
    assert_eq!(turn.result()["stopReason"], "end_turn");
    drop(editor);

    assert_eq!(
        received_prompt(&chain, 0)["prompt"],
        json!([{ "type": "text", "text": "Review src/lib.rs for bugs." }])
    );
    assert_eq!(
        received_prompt(&chain, 1)["prompt"],
        json!([{ "type": "text", "text": "/unknown stays as written" }])
    );
}

#[test]
fn prompt_templates_cannot_read_a_templates_file_outside_its_grant() {
    let mut chain = chain("kits-templates-ungranted");
    let templates = write_in(&chain.chain.dir.join("templates"), "t.json", TEMPLATES);
    chain
        .add_wasm("templates", &component("prompt-templates"))
        .args(&["--templates", &display(&templates)]);
    let outcome = initialize_outcome(&chain);
    assert!(
        outcome.get("error").is_some(),
        "the proxy read a file it was not granted: {outcome}"
    );
}

/// The language of a kit-probe proxy.
#[derive(Clone, Copy)]
enum Kit {
    Python,
    TypeScript,
}

impl Kit {
    fn component(self) -> PathBuf {
        match self {
            Kit::Python => component("kit-probe-py"),
            Kit::TypeScript => component("kit-probe-ts"),
        }
    }

    /// Adds the kit-probe as the same source run natively (`python3` / `node`).
    fn add_native(self, chain: &mut WasmChain) -> &mut ProxyEntry {
        match self {
            Kit::Python => {
                let script = workspace_root().join("tests/kit-proxies/kit_probe.py");
                let kit = workspace_root().join("kits/python");
                let entry = chain.add_native("probe", Path::new("python3"));
                entry.args(&[&display(&script)]);
                entry.env.push(("PYTHONPATH".into(), display(&kit)));
                entry
            }
            Kit::TypeScript => {
                let script = built("native/kit-probe-ts.mjs");
                let entry = chain.add_native("probe", Path::new("node"));
                entry.args(&[&display(&script)]);
                entry
            }
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kit::Python => "py",
            Kit::TypeScript => "ts",
        }
    }
}

/// The size of the large answer: above a WASI stdout write (65,536 bytes in Python's case,
/// 4,096 in JavaScript's), so a kit that did not loop or chunk would lose it.
const BIG: usize = 70_000;

/// What the editor sees of one scripted session through the kit-probe: every message, in order.
fn probe_transcript(chain: &WasmChain) -> Vec<Value> {
    let mut editor = launch(chain, &[]);
    let mut transcript = vec![editor.request("initialize", initialize_params()).response];
    let setup = editor.request(
        "session/new",
        json!({ "cwd": chain.chain.dir, "mcpServers": [] }),
    );
    transcript.push(setup.response.clone());
    let session = setup.result()["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    let turn = editor.prompt(&session, "hello");
    transcript.extend(turn.notifications.iter().cloned());
    transcript.push(turn.response.clone());
    let big = editor.request("kitprobe/big", json!({ "size": BIG }));
    assert_eq!(
        big.result()["text"].as_str().map(str::len),
        Some(BIG),
        "the {BIG}-byte answer arrived whole"
    );
    transcript.push(big.response);
    transcript
}

fn native_and_wasm_transcripts_match(kit: Kit) {
    let mut native = chain(&format!("kits-native-{}", kit.label()));
    kit.add_native(&mut native).args(&["Be brief."]);
    let mut wasm = chain(&format!("kits-wasm-{}", kit.label()));
    wasm.add_wasm("probe", &kit.component())
        .args(&["Be brief."]);

    let native_transcript = probe_transcript(&native);
    let wasm_transcript = probe_transcript(&wasm);
    assert_eq!(native_transcript, wasm_transcript);
    let chunk = &native_transcript[2]["params"]["update"]["content"]["text"];
    assert!(
        chunk.as_str().is_some_and(|t| t.ends_with(" [kit-probe]")),
        "the probe tagged the agent's chunk: {native_transcript:?}"
    );
    assert_eq!(
        received_prompt(&wasm, 0)["prompt"],
        json!([{ "type": "text", "text": "Be brief." }, { "type": "text", "text": "hello" }])
    );
    assert_eq!(
        received_prompt(&native, 0)["prompt"],
        received_prompt(&wasm, 0)["prompt"]
    );
}

#[test]
fn a_python_proxy_from_the_template_runs_natively_and_as_wasm_with_identical_transcripts() {
    native_and_wasm_transcripts_match(Kit::Python);
}

#[test]
fn a_typescript_proxy_from_the_template_runs_natively_and_as_wasm_with_identical_transcripts() {
    native_and_wasm_transcripts_match(Kit::TypeScript);
}

fn probe(editor: &mut Editor, what: &str, params: Value) -> Value {
    editor
        .request(&format!("kitprobe/{what}"), params)
        .result()
        .clone()
}

fn sandbox_denies(kit: Kit) {
    let mut chain = chain(&format!("kits-sandbox-{}", kit.label()));
    let granted = chain.chain.dir.join("granted");
    write_in(&granted, "inside.txt", "inside");
    let outside = write_in(&chain.chain.dir, "outside.txt", "outside");
    chain
        .add_wasm("probe", &kit.component())
        .grant_dir(&granted, "/granted", "ro");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("the port").port();
    let mut editor = launch(&chain, &[("ACP_SANDBOX_SECRET", "hunter2")]);
    editor.initialize();

    assert_eq!(
        probe(
            &mut editor,
            "read",
            json!({ "path": "/granted/inside.txt" })
        ),
        json!({ "ok": true, "value": "inside" })
    );
    for path in [display(&outside), "/etc/passwd".to_string()] {
        let outcome = probe(&mut editor, "read", json!({ "path": path }));
        assert_eq!(outcome["ok"], false, "reading {path} must fail: {outcome}");
    }
    assert_eq!(
        probe(&mut editor, "environment", json!({})),
        json!({ "names": [] }),
        "no variable reaches the guest, not even the conductor's own"
    );
    // Last: in JavaScript the attempt ends the proxy.
    let net = editor
        .request("kitprobe/net", json!({ "host": "127.0.0.1", "port": port }))
        .response;
    match kit {
        // Python's connect fails, and the proxy goes on.
        Kit::Python => assert_eq!(
            net["result"]["ok"], false,
            "the network must be denied: {net}"
        ),
        // With wasi:http left out of the component, SpiderMonkey's `fetch` traps: the
        // conductor answers for the proxy and applies its failure policy.
        Kit::TypeScript => assert!(
            net["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("trapped")),
            "fetch must not reach the network: {net}"
        ),
    }
    listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        assert!(
            listener.accept().is_err(),
            "the guest reached the loopback listener"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_python_proxy_under_the_sandbox_reaches_no_file_variable_or_network() {
    sandbox_denies(Kit::Python);
}

#[test]
fn a_typescript_proxy_under_the_sandbox_reaches_no_file_variable_or_network() {
    sandbox_denies(Kit::TypeScript);
}
