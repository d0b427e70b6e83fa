//! The built `acp-context-proxy` driven over stdio the way a conductor drives it: the test writes
//! the conductor's lines (including the successor's answers) and checks every line written back.

use std::path::{Path, PathBuf};
use std::process::Command;

use proxy_kit::testing::{StdioRun as Run, run_over_stdio};

fn run(args: &[&str], input: &[String]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-context-proxy"));
    command.args(args);
    run_over_stdio(command, input)
}

/// A project directory with context files, removed when dropped.
struct Project(PathBuf);

impl Project {
    fn new(name: &str) -> Project {
        let dir = std::env::temp_dir().join(format!("context-proxy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("docs")).unwrap();
        std::fs::write(dir.join("AGENTS.md"), "Be kind.\n").unwrap();
        std::fs::write(dir.join("docs/style.md"), "Use tabs").unwrap();
        Project(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn json_path(&self) -> String {
        serde_json::to_string(&self.0.to_string_lossy()).unwrap()
    }

    fn uri(&self, file: &str) -> String {
        format!("file://{}/{file}", self.0.display())
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn initialize(embedded: bool) -> [String; 2] {
    [
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#.into(),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":1,"agentCapabilities":{{"promptCapabilities":{{"embeddedContext":{embedded}}},"mcpCapabilities":{{"acp":true}}}}}}}}"#
        ),
    ]
}

fn initialize_out(embedded: bool) -> [String; 2] {
    [
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}}"#.into(),
        format!(
            r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":1,"agentCapabilities":{{"promptCapabilities":{{"embeddedContext":{embedded}}},"mcpCapabilities":{{"acp":true}}}}}}}}"#
        ),
    ]
}

#[test]
fn text_context_goes_after_the_first_prompt_only() {
    let project = Project::new("once");
    let cwd = project.json_path();
    let mut input = initialize(false).to_vec();
    input.extend([
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":{cwd},"mcpServers":[]}}}}"#),
        r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-1"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"Hi"}]}}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"Again"}]}}"#.into(),
        r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#.into(),
    ]);
    let out = run(
        &[
            "--file",
            "AGENTS.md",
            "--file",
            "missing.md",
            "--file",
            "./AGENTS.md",
            "--file",
            "docs/style.md",
            "--rule",
            "Always write tests",
            "--rule",
            "Always write tests",
        ],
        &input,
    );
    let mut expected = initialize_out(false).to_vec();
    expected.extend([
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{{"method":"session/new","params":{{"cwd":{cwd},"mcpServers":[]}}}}}}"#),
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"Hi"},{"type":"text","text":"<context source=\"AGENTS.md\">\nBe kind.\n</context>\n\n<context source=\"docs/style.md\">\nUse tabs\n</context>\n\n<context source=\"rules\">\n- Always write tests\n</context>"}]}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"Again"}]}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#.into(),
    ]);
    assert_eq!(out.stdout, expected, "stderr:\n{}", out.stderr);
    assert_eq!(out.code, Some(0));
    let missing = project.path().join("missing.md");
    assert!(
        out.stderr
            .contains(&format!("WARN context file {} skipped", missing.display())),
        "{}",
        out.stderr
    );
}

#[test]
fn embedded_resources_before_every_prompt_without_duplicating_what_is_there() {
    let project = Project::new("every");
    let cwd = project.json_path();
    let agents_uri = project.uri("AGENTS.md");
    let mut input = initialize(true).to_vec();
    input.extend([
        format!(r#"{{"jsonrpc":"2.0","id":"n","method":"session/new","params":{{"cwd":{cwd},"mcpServers":[]}}}}"#),
        r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":"p1","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#.into(),
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#.into(),
        format!(
            r#"{{"jsonrpc":"2.0","id":"p2","method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"resource_link","uri":"{agents_uri}","name":"AGENTS.md"}}]}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}"#.into(),
    ]);
    let out = run(
        &[
            "--mode",
            "every",
            "--placement",
            "before",
            "--file",
            "AGENTS.md",
            "--rule",
            "Be brief",
        ],
        &input,
    );
    let mut expected = initialize_out(true).to_vec();
    expected.extend([
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{{"method":"session/new","params":{{"cwd":{cwd},"mcpServers":[]}}}}}}"#),
        r#"{"jsonrpc":"2.0","id":"n","result":{"sessionId":"s"}}"#.into(),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{{"method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"resource","resource":{{"uri":"{agents_uri}","mimeType":"text/markdown","text":"Be kind.\n"}}}},{{"type":"text","text":"<context source=\"rules\">\n- Be brief\n</context>"}}]}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":"p1","result":{"stopReason":"end_turn"}}"#.into(),
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{{"method":"session/prompt","params":{{"sessionId":"s","prompt":[{{"type":"text","text":"<context source=\"rules\">\n- Be brief\n</context>"}},{{"type":"resource_link","uri":"{agents_uri}","name":"AGENTS.md"}}]}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","id":"p2","result":{"stopReason":"end_turn"}}"#.into(),
    ]);
    assert_eq!(out.stdout, expected, "stderr:\n{}", out.stderr);
}

#[test]
fn session_of_unknown_cwd_still_gets_rules_and_absolute_files() {
    let project = Project::new("unknown");
    let absolute = project.path().join("docs/style.md");
    let mut input = initialize(false).to_vec();
    input.push(
        r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"elsewhere","prompt":[{"type":"text","text":"x"}]}}"#.into(),
    );
    let out = run(
        &[
            "--file",
            "AGENTS.md",
            "--file",
            absolute.to_str().unwrap(),
            "--rule",
            "R",
        ],
        &input,
    );
    let source = serde_json::to_string(&format!(
        "<context source=\"{}\">\nUse tabs\n</context>\n\n<context source=\"rules\">\n- R\n</context>",
        absolute.display()
    ))
    .unwrap();
    assert_eq!(
        out.stdout[2],
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{{"method":"session/prompt","params":{{"sessionId":"elsewhere","prompt":[{{"type":"text","text":"x"}},{{"type":"text","text":{source}}}]}}}}}}"#
        )
    );
    assert!(
        out.stderr
            .contains("cwd unknown, so relative context file AGENTS.md is skipped"),
        "{}",
        out.stderr
    );
}

#[test]
fn other_traffic_passes_through_untouched() {
    let mut input = initialize(false).to_vec();
    input.extend([
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}}"#.into(),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":"data"}}"#.into(),
    ]);
    let out = run(&["--rule", "R"], &input);
    assert_eq!(
        out.stdout[2..],
        [
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":"data"}}"#,
        ]
    );
}

#[test]
fn refuses_to_start_with_nothing_to_inject() {
    let out = run(&[], &[]);
    assert_eq!(out.code, Some(2));
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("nothing to inject"), "{}", out.stderr);
}
