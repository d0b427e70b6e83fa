//! The shipped proxies unchanged as WASM: `acp-context-proxy` and `acp-tool-guard`, built for
//! wasm32-wasip1 and wasm32-wasip2, give the editor exactly the transcript their native builds
//! give in the same scripted session (same directory, same agent, same answers). The native
//! builds come from the same cargo resolution as the WASM ones, so that both have the same
//! dependency features (see [`wasm::native_artifact`]).

use std::path::Path;

use acp_conductor_tests::binaries;
use acp_conductor_tests::editor::{Direction, Editor, Reply};
use acp_conductor_tests::test_chain::TestChain;
use acp_conductor_tests::wasm::{self, CONTEXT, GUARD, WasmChain, WasmTarget};
use serde_json::{Value, json};

/// How the proxy under test runs.
#[derive(Debug, Clone, Copy)]
enum Build {
    Native,
    Wasm(WasmTarget),
}

const BUILDS: [Build; 3] = [
    Build::Native,
    Build::Wasm(WasmTarget::P1),
    Build::Wasm(WasmTarget::P2),
];

/// Every line the editor sent and received, in order, tagged with its direction.
fn transcript(editor: &Editor) -> Vec<String> {
    editor
        .transcript
        .iter()
        .map(|(direction, line)| {
            let line = without_session_token(line);
            match direction {
                Direction::Sent => format!("> {line}"),
                Direction::Received => format!("< {line}"),
            }
        })
        .collect()
}

/// `line` with the demo agent's session ids (`demo-session-<8 hex digits>-<n>`, different in
/// every run) written `demo-session-<n>`, so that runs compare; every other byte kept.
fn without_session_token(line: &str) -> String {
    const PREFIX: &str = "demo-session-";
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(PREFIX) {
        let after = &rest[at + PREFIX.len()..];
        out.push_str(&rest[..at + PREFIX.len()]);
        let token = after
            .get(..9)
            .filter(|t| t.ends_with('-') && t[..8].bytes().all(|b| b.is_ascii_hexdigit()));
        rest = if token.is_some() { &after[9..] } else { after };
    }
    out.push_str(rest);
    out
}

/// Runs `script` once per build of the proxy `name` (native `native`, WASM `wasm_binary`,
/// started with `args` and, as WASM, with `dir` granted read-only at its own path) and
/// asserts the three transcripts are equal; returns the lines the editor received.
fn same_transcripts(
    mut chain: WasmChain,
    name: &str,
    native: &Path,
    wasm_binary: &str,
    args: &[String],
    dir: &Path,
    script: impl Fn(&mut Editor),
) -> String {
    let mut transcripts = Vec::new();
    for build in BUILDS {
        chain.proxies.clear();
        let proxy = match build {
            Build::Native => chain.add_native(name, native),
            Build::Wasm(target) => {
                let wasm = wasm::artifact(&chain.chain.binaries, wasm_binary, target);
                let proxy = chain.add_wasm(name, &wasm);
                proxy.grant_dir(dir, &dir.display().to_string(), "ro");
                proxy
            }
        };
        proxy.args.extend(args.iter().cloned());
        let mut editor = chain.launch();
        script(&mut editor);
        editor.close_stdin();
        assert_eq!(
            editor.wait_exit().code(),
            Some(0),
            "{build:?}: {}",
            editor.stderr()
        );
        transcripts.push((build, transcript(&editor)));
    }
    let (_, native_lines) = &transcripts[0];
    assert!(
        native_lines.len() > 8,
        "the script exchanged too little: {native_lines:#?}"
    );
    for (build, lines) in &transcripts[1..] {
        let first_difference =
            (0..lines.len().max(native_lines.len())).find(|&i| lines.get(i) != native_lines.get(i));
        if let Some(i) = first_difference {
            panic!(
                "{build:?} differs from the native build at line {i}:\n  native: {:?}\n  {build:?}: {:?}",
                native_lines.get(i),
                lines.get(i)
            );
        }
    }
    native_lines
        .iter()
        .filter(|line| line.starts_with('<'))
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn the_context_proxy_gives_the_same_transcript_native_and_as_wasip1_and_wasip2() {
    let binaries = binaries!();
    let chain = WasmChain::new(TestChain::with_demo_agent(&binaries, "transcript-context"));
    let project = chain.chain.dir.join("project");
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::write(
        project.join("AGENTS.md"),
        "# Team rules\n\n- Be kind to reviewers.\n",
    )
    .unwrap();
    std::fs::write(project.join("docs/style.md"), "Use British spelling.").unwrap();
    let args: Vec<String> = [
        "--file",
        "AGENTS.md",
        "--file",
        "docs/style.md",
        "--file",
        "missing.md",
        "--rule",
        "Always add tests",
        "--mode",
        "every",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let native = wasm::native_artifact(&binaries, CONTEXT);
    let received = same_transcripts(
        chain,
        "context",
        &native,
        CONTEXT,
        &args,
        &project.clone(),
        |editor| {
            editor.initialize();
            let session = editor.new_session_in(&project);
            editor.prompt(&session, "What are the rules?");
            editor.prompt(&session, "And again?");
        },
    );
    // The demo agent shows what reached it: the files and rules, on both prompts.
    assert_eq!(
        received.matches("Be kind to reviewers.").count(),
        2,
        "{received}"
    );
    assert_eq!(
        received.matches("Always add tests").count(),
        2,
        "{received}"
    );
}

const POLICY: &str = r#"
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
write = ["${cwd}/**", "!${cwd}/.git/**"]

[terminal]
deny = ["rm -rf *"]

[redact]
patterns = ["sk-[A-Za-z0-9]{20,}"]
"#;

/// The editor's answer to whatever the agent side asks.
fn answer(request: &Value) -> Reply {
    match request["method"].as_str() {
        Some("fs/read_text_file") => Ok(json!({ "content": "notes from the editor" })),
        Some("session/request_permission") => {
            Ok(json!({ "outcome": { "outcome": "selected", "optionId": "allow-once" } }))
        }
        Some("terminal/create") => Ok(json!({ "terminalId": "term-1" })),
        _ => Ok(json!({})),
    }
}

#[test]
fn the_tool_guard_gives_the_same_transcript_native_and_as_wasip1_and_wasip2() {
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, "transcript-guard");
    chain.agent_args(&["--updates", "2"]);
    let chain = WasmChain::new(chain);
    let dir = chain.chain.dir.join("guarded");
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let policy = dir.join("guard.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let args = vec!["--policy".to_string(), display(&policy)];
    let native = wasm::native_artifact(&binaries, GUARD);
    let p = display(&project);
    let received = same_transcripts(chain, "guard", &native, GUARD, &args, &dir, |editor| {
        editor.initialize();
        let session = editor.new_session_in(&project);
        for text in [
            "hello, my key is sk-ABCDEFGHIJKLMNOPQRSTUVWX".to_string(),
            format!("fs-read {p}/notes.txt"),
            "fs-read /etc/passwd".to_string(),
            format!("fs-write {p}/.git/config broken"),
            format!("fs-write {p}/src/lib.rs fn main() {{}}"),
            "terminal rm -rf /".to_string(),
            format!(r#"permission-for {{"kind": "read", "locations": [{{"path": "{p}/a.rs"}}]}}"#),
            r#"permission-for {"kind": "edit"}"#.to_string(),
            r#"permission-for {"kind": "execute"}"#.to_string(),
        ] {
            let params = acp_conductor_tests::editor::prompt_params(&session, &text);
            editor.request_answering("session/prompt", params, answer);
        }
    });
    // The policy acted: the secret never came back, and some requests never reached us.
    assert!(
        !received.contains("sk-ABCDEFGHIJKLMNOPQRSTUVWX"),
        "{received}"
    );
    assert!(!received.contains("\"path\":\"/etc/passwd\""), "{received}");
}
