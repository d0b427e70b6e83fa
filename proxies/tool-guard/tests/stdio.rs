//! The built `acp-tool-guard` driven over stdio the way a conductor drives it: the test writes
//! the conductor's lines (agent requests arrive wrapped in `proxy/successor`, editor answers
//! plain) and checks every line the guard writes back, and the decisions in its log.

use std::path::PathBuf;
use std::process::Command;

use proxy_kit::testing::{StdioRun as Run, run_over_stdio};

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

[fs]
read = ["${cwd}/**"]
write = ["${cwd}/**", "!${cwd}/.git/**"]

[terminal]
deny = ["rm -rf *", "*git push*"]

[redact]
patterns = ["sk-[A-Za-z0-9]{20,}", "AKIA[0-9A-Z]{16}"]
"#;

/// A policy file in a fresh directory, removed when dropped.
struct PolicyFile(PathBuf);

impl PolicyFile {
    fn new(name: &str, text: &str) -> PolicyFile {
        let dir = std::env::temp_dir().join(format!("tool-guard-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("guard.toml");
        std::fs::write(&path, text).unwrap();
        PolicyFile(path)
    }
}

impl Drop for PolicyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

fn run(policy: &str, name: &str, input: &[&str]) -> Run {
    let file = PolicyFile::new(name, policy);
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-tool-guard"));
    command.arg("--policy").arg(&file.0);
    run_over_stdio(command, input)
}

/// Initialization and one session in /work/proj: the guard's ids 1 and 2 are used up.
const PREAMBLE: [&str; 4] = [
    r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/work/proj","mcpServers":[]}}"#,
    r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#,
];

const PREAMBLE_OUT: [&str; 4] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
    r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/work/proj","mcpServers":[]}}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
];

fn with_preamble<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    PREAMBLE
        .iter()
        .copied()
        .chain(lines.iter().copied())
        .collect()
}

fn after_preamble(run: &Run) -> Vec<&str> {
    assert_eq!(run.stdout[..4], PREAMBLE_OUT, "stderr:\n{}", run.stderr);
    run.stdout[4..].iter().map(String::as_str).collect()
}

#[test]
fn permission_requests_are_settled_by_the_first_matching_rule_or_go_to_the_editor() {
    let out = run(
        POLICY,
        "permission",
        &with_preamble(&[
            // The title, kind and location come from the earlier tool_call update.
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read main.rs","kind":"read","status":"pending","locations":[{"path":"/work/proj/src/main.rs"}]}}}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"proxy/successor","params":{"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"a1","name":"Always","kind":"allow_always"},{"optionId":"a2","name":"Once","kind":"allow_once"},{"optionId":"r1","name":"No","kind":"reject_once"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"proxy/successor","params":{"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c2","kind":"edit","title":"Edit config","locations":[{"path":"/work/proj/.git/config"}]},"options":[{"optionId":"a2","name":"Once","kind":"allow_once"},{"optionId":"r1","name":"No","kind":"reject_once"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"proxy/successor","params":{"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c3","kind":"edit","title":"Edit lib.rs","locations":[{"path":"/work/proj/src/lib.rs"}]},"options":[{"optionId":"a2","name":"Once","kind":"allow_once"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"proxy/successor","params":{"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c4","kind":"read","locations":[{"path":"/work/proj/.git/HEAD"}]},"options":[{"optionId":"a2","name":"Once","kind":"allow_once"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"selected","optionId":"a2"}}}"#,
        ]),
    );
    assert_eq!(
        after_preamble(&out),
        [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read main.rs","kind":"read","status":"pending","locations":[{"path":"/work/proj/src/main.rs"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":10,"result":{"outcome":{"outcome":"selected","optionId":"a2"}}}"#,
            r#"{"jsonrpc":"2.0","id":11,"result":{"outcome":{"outcome":"selected","optionId":"r1"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c3","kind":"edit","title":"Edit lib.rs","locations":[{"path":"/work/proj/src/lib.rs"}]},"options":[{"optionId":"a2","name":"Once","kind":"allow_once"}]}}"#,
            r#"{"jsonrpc":"2.0","id":13,"result":{"outcome":{"outcome":"cancelled"}}}"#,
            r#"{"jsonrpc":"2.0","id":12,"result":{"outcome":{"outcome":"selected","optionId":"a2"}}}"#,
        ]
    );
    for decision in [
        r#"allow: permission for "Read main.rs" (kind read, 1 location(s)) in session s1 by permission #2 (read in project) (option "a2")"#,
        r#"deny: permission for "Edit config" (kind edit, 1 location(s)) in session s1 by permission #1 (git internals) (option "r1")"#,
        r#"ask: permission for "Edit lib.rs" (kind edit, 1 location(s)) in session s1: no permission rule matches"#,
        r#"deny: permission for "" (kind read, 1 location(s)) in session s1 by permission #1 (git internals) (no reject option offered; answered `cancelled`)"#,
    ] {
        assert!(
            out.stderr.contains(decision),
            "missing {decision:?} in\n{}",
            out.stderr
        );
    }
}

#[test]
fn file_requests_outside_the_allowed_paths_never_reach_the_editor() {
    let out = run(
        POLICY,
        "fs",
        &with_preamble(&[
            r#"{"jsonrpc":"2.0","id":14,"method":"proxy/successor","params":{"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/etc/passwd","content":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":15,"method":"proxy/successor","params":{"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/work/proj/.git/config","content":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":16,"method":"proxy/successor","params":{"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/work/proj/src/../README.md","content":"ok"}}}"#,
            r#"{"jsonrpc":"2.0","id":17,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"sessionId":"s1","path":"README.md"}}}"#,
            r#"{"jsonrpc":"2.0","id":18,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"sessionId":"s1"}}}"#,
            r#"{"jsonrpc":"2.0","id":19,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/work/proj/../../etc/shadow"}}}"#,
            r#"{"jsonrpc":"2.0","id":20,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{"sessionId":"other","path":"/work/proj/a"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":null}"#,
        ]),
    );
    assert_eq!(
        after_preamble(&out),
        [
            r#"{"jsonrpc":"2.0","id":14,"error":{"code":-32000,"message":"tool-guard: write to /etc/passwd denied by fs.write (matches no allowed pattern)","data":{"path":"/etc/passwd","rule":"fs.write (matches no allowed pattern)"}}}"#,
            r#"{"jsonrpc":"2.0","id":15,"error":{"code":-32000,"message":"tool-guard: write to /work/proj/.git/config denied by fs.write \"!${cwd}/.git/**\"","data":{"path":"/work/proj/.git/config","rule":"fs.write \"!${cwd}/.git/**\""}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/work/proj/src/../README.md","content":"ok"}}"#,
            r#"{"jsonrpc":"2.0","id":17,"error":{"code":-32000,"message":"tool-guard: read of README.md denied by ACP (paths must be absolute)","data":{"path":"README.md","rule":"ACP (paths must be absolute)"}}}"#,
            r#"{"jsonrpc":"2.0","id":18,"error":{"code":-32602,"message":"tool-guard: cannot check fs/read_text_file: missing field `path` at line 1 column 18"}}"#,
            r#"{"jsonrpc":"2.0","id":19,"error":{"code":-32000,"message":"tool-guard: read of /etc/shadow denied by fs.read (matches no allowed pattern)","data":{"path":"/etc/shadow","rule":"fs.read (matches no allowed pattern)"}}}"#,
            r#"{"jsonrpc":"2.0","id":20,"error":{"code":-32000,"message":"tool-guard: read of /work/proj/a denied by fs.read (matches no allowed pattern)","data":{"path":"/work/proj/a","rule":"fs.read (matches no allowed pattern)"}}}"#,
            r#"{"jsonrpc":"2.0","id":16,"result":null}"#,
        ]
    );
    assert!(
        out.stderr
            .contains(r#"allow: fs/write_text_file /work/proj/README.md by fs.write "${cwd}/**""#),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            r#"deny: fs/write_text_file /work/proj/.git/config by fs.write "!${cwd}/.git/**""#
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn denied_commands_never_reach_the_editor() {
    let out = run(
        POLICY,
        "terminal",
        &with_preamble(&[
            r#"{"jsonrpc":"2.0","id":21,"method":"proxy/successor","params":{"method":"terminal/create","params":{"sessionId":"s1","command":"rm","args":["-rf","/"]}}}"#,
            r#"{"jsonrpc":"2.0","id":22,"method":"proxy/successor","params":{"method":"terminal/create","params":{"sessionId":"s1","command":"sh","args":["-c","git push --force"]}}}"#,
            r#"{"jsonrpc":"2.0","id":23,"method":"proxy/successor","params":{"method":"terminal/create","params":{"sessionId":"s1","command":"cargo","args":["test"],"cwd":"/work/proj"}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"terminalId":"t1"}}"#,
        ]),
    );
    assert_eq!(
        after_preamble(&out),
        [
            r#"{"jsonrpc":"2.0","id":21,"error":{"code":-32000,"message":"tool-guard: command \"rm -rf /\" denied by terminal.deny \"rm -rf *\"","data":{"command":"rm -rf /","rule":"terminal.deny \"rm -rf *\""}}}"#,
            r#"{"jsonrpc":"2.0","id":22,"error":{"code":-32000,"message":"tool-guard: command \"sh -c git push --force\" denied by terminal.deny \"*git push*\"","data":{"command":"sh -c git push --force","rule":"terminal.deny \"*git push*\""}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"terminal/create","params":{"sessionId":"s1","command":"cargo","args":["test"],"cwd":"/work/proj"}}"#,
            r#"{"jsonrpc":"2.0","id":23,"result":{"terminalId":"t1"}}"#,
        ]
    );
    assert!(
        out.stderr
            .contains(r#"allow: terminal/create "cargo test" by no terminal.deny pattern matches"#),
        "{}",
        out.stderr
    );
}

#[test]
fn secrets_in_prompt_text_are_redacted_before_the_agent_sees_them() {
    let out = run(
        POLICY,
        "redact",
        &with_preamble(&[
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"use sk-abcdefghijklmnopqrstuvwx please"},{"type":"image","data":"sk-abcdefghijklmnopqrstuvwx","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///work/proj/.env","text":"AWS=AKIAABCDEFGHIJKLMNOP\n"}},{"type":"text","text":"nothing here"}]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"clean"}]}}"#,
        ]),
    );
    assert_eq!(
        after_preamble(&out),
        [
            r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"use [REDACTED] please"},{"type":"image","data":"sk-abcdefghijklmnopqrstuvwx","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///work/proj/.env","text":"AWS=[REDACTED]\n"}},{"type":"text","text":"nothing here"}]}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"proxy/successor","params":{"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"clean"}]}}}"#,
        ]
    );
    assert!(
        out.stderr.contains(
            "redact: session/prompt of session s1: 2 block(s) by redact.patterns[0], redact.patterns[1]"
        ),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("abcdefghijklmnopqrstuvwx"),
        "secrets must not be logged"
    );
}

#[test]
fn demo_policy_refuses_the_demo_agents_write() {
    let policy = include_str!("../demo-policy.toml");
    let out = run(
        policy,
        "demo",
        &with_preamble(&[
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"demo-write-1","title":"Write demo.txt","kind":"edit","status":"pending","locations":[{"path":"/work/proj/demo.txt"}]},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}}"#,
        ]),
    );
    assert_eq!(
        after_preamble(&out),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}"#
        ]
    );
    assert!(
        out.stderr.contains(r#"deny: permission for "Write demo.txt" (kind edit, 1 location(s)) in session s1 by permission #1 (no edits in the demo) (option "reject")"#),
        "{}",
        out.stderr
    );
}

#[test]
fn a_broken_policy_stops_the_guard_before_it_reads_anything() {
    let out = run(
        "[fs]\nwrite = [\"src/**\"]\n",
        "broken",
        &[r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{}}"#],
    );
    assert_eq!(out.code, Some(2));
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("must be absolute"), "{}", out.stderr);
}
