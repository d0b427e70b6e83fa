//! The TypeScript and Python proxy kits' MCP servers through the real conductor: a kit proxy
//! offering one tool (tests/kit-proxies/kit-echo), run natively, called by the official MCP
//! Python SDK (`.ci/setup-interop`) through the HTTP bridge in the stateless 2026-07-28 revision
//! (`server/discover`, `_meta` on every request, `ttlMs` and `cacheScope` on `tools/list`) and
//! in the classic `initialize` handshake. The TypeScript build comes from `.ci/setup-wasm-kits`.

use std::path::{Path, PathBuf};

use acp_conductor_tests::binaries::workspace_root;
use acp_conductor_tests::interop::{InteropTools, arg, client_script};
use acp_conductor_tests::mcp_chain::{agent_servers, run_script, use_rmcp_agent};
use acp_conductor_tests::{TestChain, binaries};

/// The language of the kit-echo proxy.
#[derive(Clone, Copy)]
enum Kit {
    Python,
    TypeScript,
}

impl Kit {
    /// Adds kit-echo to `chain` as its source run natively (`python3` / `node`).
    fn add_native(self, chain: &mut TestChain) {
        match self {
            Kit::Python => {
                let script = workspace_root().join("tests/kit-proxies/kit_echo.py");
                let kit = workspace_root().join("kits/python");
                chain
                    .add_proxy("kit-echo", Path::new("python3"), &[display(&script)])
                    .setting("env", &format!("{{ PYTHONPATH = {:?} }}", display(&kit)));
            }
            Kit::TypeScript => {
                let script = built_for_node("kit-echo-ts.mjs");
                chain.add_proxy("kit-echo", Path::new("node"), &[display(&script)]);
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

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// `target/wasm-kits/native/NAME`, which `.ci/setup-wasm-kits` builds.
fn built_for_node(name: &str) -> PathBuf {
    let path = workspace_root().join("target/wasm-kits/native").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run .ci/setup-wasm-kits, which builds the kits' test proxies",
        path.display()
    );
    path
}

/// kit-echo in `kit` and the rmcp agent with the HTTP bridge, whose `python` command runs the
/// Python SDK client.
fn kit_chain(kit: Kit) -> TestChain {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    let mut chain = TestChain::new(&binaries, &format!("kit-mcp-{}", kit.label()));
    kit.add_native(&mut chain);
    let python = format!(
        "{},{}",
        arg(&tools.mcp_python()),
        arg(&client_script("mcp_python_client.py"))
    );
    use_rmcp_agent(&mut chain, &["--http", "--python", python.as_str()]);
    chain
}

/// The Python SDK calls kit-echo's tool in the stateless revision (with text, then without, an
/// `isError` result), then in the classic handshake, all in one session.
fn the_python_sdk_calls_the_kits_tool_in_either_revision(kit: Kit) {
    let chain = kit_chain(kit);
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let lines = run_script(
        &mut editor,
        &session,
        &[
            r#"python kit-echo auto echo {"text":"hello"}"#,
            "python kit-echo auto echo {}",
            r#"python kit-echo legacy echo {"text":"again"}"#,
        ],
    );
    let expected_stateless = [
        "python version 2026-07-28".to_string(),
        "python tools echo".to_string(),
        format!("python result echo: {session}: hello"),
        "python version 2026-07-28".to_string(),
        "python tools echo".to_string(),
        "python result echo: `text` is required [isError]".to_string(),
    ];
    assert_eq!(lines.len(), 9, "{lines:#?}");
    assert_eq!(lines[..6], expected_stateless, "{lines:#?}");
    let classic = lines[6]
        .strip_prefix("python version ")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(classic.starts_with("2025-"), "{lines:#?}");
    assert_eq!(lines[7], "python tools echo", "{lines:#?}");
    assert_eq!(
        lines[8],
        format!("python result echo: {session}: again"),
        "{lines:#?}"
    );
    // The agent reached the kit's `acp` server through the HTTP bridge.
    let servers = agent_servers(&chain, 0);
    assert_eq!(servers.len(), 1, "{servers:#?}");
    assert_eq!(servers[0]["type"], "http", "{servers:#?}");
    assert_eq!(servers[0]["name"], "kit-echo", "{servers:#?}");
    editor.close_stdin();
    assert!(editor.wait_exit().success(), "{}", editor.stderr());
}

#[test]
fn the_python_sdk_calls_a_python_kit_proxys_tool_in_either_revision() {
    the_python_sdk_calls_the_kits_tool_in_either_revision(Kit::Python);
}

#[test]
fn the_python_sdk_calls_a_typescript_kit_proxys_tool_in_either_revision() {
    the_python_sdk_calls_the_kits_tool_in_either_revision(Kit::TypeScript);
}
