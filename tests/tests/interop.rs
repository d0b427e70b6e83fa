//! Third-party ACP clients drive the real conductor: the official TypeScript SDK (its stable
//! and unstable entry points), the Python SDK (a scenario client on its API, and its own example
//! client) and acpx, each installed at a pinned version by `.ci/setup-interop`, against the demo
//! chain (context, notes and tool-guard proxies, demo agent) and against the demo agent alone.
//!
//! The TypeScript and Python scenario clients (tests/interop/clients) play the same steps and
//! print one JSON line per step; [`assert_scenario`] reads both. Every run ends with no process
//! left: the client, the conductor, its proxies, the agent and the MCP bridge shims. Which
//! components the conductor started is read from its trace (a run can be over before a look
//! at /proc sees a short-lived agent); that none is left, from the processes' mark.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use acp_conductor_tests::binaries::{CONTEXT_PROXY, NOTES_PROXY, TOOL_GUARD, workspace_root};
use acp_conductor_tests::client_run::ClientRun;
use acp_conductor_tests::interop::{InteropTools, arg, client_script};
use acp_conductor_tests::test_chain::toml_string;
use acp_conductor_tests::{Binaries, TestChain, binaries};
use serde_json::{Value, json};

/// How long one client may take for the whole scenario with a debug conductor.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The first line of the project file the scenario asks the agent to read.
const NOTES_LINE: &str = "Release notes draft: the release is on Friday.";

/// Which chain a client drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    /// `[agent] builtin = "demo"`, no proxy.
    DemoAgent,
    /// The chain of conductor.toml.example: context, notes and guard in front of the demo
    /// agent (the guard with tests/interop/guard-policy.toml, which lets the client decide on
    /// writes).
    DemoChain,
}

/// A chain's directory, its config and the project the sessions work in.
struct Prepared {
    chain: TestChain,
    project: PathBuf,
}

/// The trace file of a prepared chain's run, in its directory: what it started.
const TRACE: &str = "run.trace.jsonl";

fn prepare(binaries: &Binaries, label: &str, setup: Setup) -> Prepared {
    let mut chain = TestChain::with_demo_agent(binaries, label);
    let trace = chain.dir.join(TRACE);
    chain
        .conductor_setting("trace", &toml_string(&arg(&trace)))
        .conductor_setting("trace_payloads", "false");
    if setup == Setup::DemoChain {
        let root = workspace_root();
        let agents_md = arg(&root.join("docs/demo/AGENTS.md"));
        let policy = arg(&root.join("tests/interop/guard-policy.toml"));
        let context = binaries.workspace_program(&CONTEXT_PROXY);
        chain
            .add_proxy(
                "context",
                &context,
                &["--file", &agents_md, "--rule", "Always write tests"],
            )
            .setting("on_failure", "\"restart\"");
        let notes = binaries.workspace_program(&NOTES_PROXY);
        chain.add_proxy::<&str>("notes", &notes, &[]);
        let guard = binaries.workspace_program(&TOOL_GUARD);
        chain.add_proxy("guard", &guard, &["--policy", &policy]);
    }
    chain.write_config();
    let project = chain.dir.join("project");
    std::fs::create_dir_all(&project).expect("create the project directory");
    std::fs::write(project.join("notes.txt"), format!("{NOTES_LINE}\nmore\n"))
        .expect("write notes.txt");
    Prepared { chain, project }
}

impl Prepared {
    /// The conductor command a client starts, as `acp-conductor run --config FILE`.
    fn conductor_command(&self) -> Vec<String> {
        vec![
            arg(&self.chain.binaries.conductor),
            "run".into(),
            "--config".into(),
            arg(&self.chain.config_path()),
        ]
    }
}

/// Runs the TypeScript SDK scenario client with `entry` against `setup`.
fn run_ts_sdk(entry: &str, setup: Setup, scenario: &str) -> (Prepared, ClientRun) {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    let prepared = prepare(&binaries, &format!("interop-ts-{entry}-{setup:?}"), setup);
    let mut command = tools.node();
    command
        .arg(client_script("ts-sdk.mjs"))
        .args(["--sdk", &arg(&tools.node_modules()), "--entry", entry])
        .args(["--cwd", &arg(&prepared.project), "--scenario", scenario])
        .arg("--")
        .args(prepared.conductor_command());
    let run = ClientRun::run(&format!("ts-{entry}"), command, RUN_LIMIT);
    (prepared, run)
}

fn run_python_sdk(setup: Setup) -> (Prepared, ClientRun) {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    let prepared = prepare(&binaries, &format!("interop-python-{setup:?}"), setup);
    let mut command = Command::new(tools.python());
    command
        .arg(client_script("python_sdk.py"))
        .args(["--cwd", &arg(&prepared.project), "--"])
        .args(prepared.conductor_command());
    let run = ClientRun::run("python-sdk", command, RUN_LIMIT);
    (prepared, run)
}

/// The step lines of a scenario run, by name; panics when a step is missing or failed.
struct Steps {
    lines: Vec<Value>,
    output: String,
}

impl Steps {
    fn of(run: &ClientRun) -> Self {
        let steps = Self {
            lines: run.json_lines(),
            output: run.output(),
        };
        assert!(run.status.success(), "the client failed:\n{}", steps.output);
        steps
    }

    fn get(&self, name: &str) -> &Value {
        let step = self
            .lines
            .iter()
            .find(|line| line["step"] == name)
            .unwrap_or_else(|| panic!("no step {name:?}:\n{}", self.output));
        assert!(
            step.get("error").is_none(),
            "step {name:?} failed:\n{}",
            self.output
        );
        step
    }

    fn text(&self, name: &str) -> &str {
        self.get(name)["text"].as_str().unwrap_or_default()
    }

    fn assert_text_contains(&self, name: &str, wanted: &str) {
        assert!(
            self.text(name).contains(wanted),
            "step {name:?} did not show {wanted:?}:\n{}",
            self.output
        );
    }

    fn assert_stop(&self, name: &str, reason: &str) {
        assert_eq!(
            self.get(name)["stopReason"],
            reason,
            "step {name:?}:\n{}",
            self.output
        );
    }

    /// The statuses the client saw for tool call `id`, in order.
    fn tool_statuses(&self, name: &str, id_prefix: &str) -> Vec<String> {
        self.get(name)["toolCalls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|call| {
                call["id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(id_prefix))
            })
            .filter_map(|call| call["status"].as_str().map(str::to_owned))
            .collect()
    }
}

/// What every scenario client must have seen, with the demo agent alone or the demo chain.
fn assert_scenario(prepared: &Prepared, run: &ClientRun, setup: Setup) {
    let steps = Steps::of(run);
    let output = &steps.output;

    // initialize: the demo agent's answer, with the conductor's mcpCapabilities.acp.
    let init = steps.get("initialize");
    assert_eq!(init["protocolVersion"], 1, "{output}");
    assert_eq!(init["agentName"], "acp-conductor-demo", "{output}");
    assert_eq!(init["mcpAcp"], true, "{output}");

    // session/new
    let first = steps.get("session/new")["sessionId"].clone();
    assert!(first.as_str().is_some_and(|id| !id.is_empty()), "{output}");

    // A prompt with streamed text.
    steps.assert_stop("hello", "end_turn");
    steps.assert_text_contains("hello", "Demo agent here.");
    steps.assert_text_contains("hello", "> Hello\n");

    // A permission round trip, allowed, then denied.
    for (name, status, said) in [
        (
            "write allowed",
            "completed",
            "Permission granted: I would write demo.txt",
        ),
        (
            "write denied",
            "failed",
            "Permission denied: demo.txt was not written.",
        ),
    ] {
        let step = steps.get(name);
        let permissions = step["permissions"].as_array().expect("permissions");
        assert_eq!(permissions.len(), 1, "{name}: {output}");
        assert_eq!(permissions[0]["title"], "Write demo.txt", "{output}");
        assert_eq!(permissions[0]["kind"], "edit", "{output}");
        steps.assert_text_contains(name, said);
        assert_eq!(
            steps
                .tool_statuses(name, "demo-write-")
                .last()
                .map(String::as_str),
            Some(status),
            "{name}: {output}"
        );
        steps.assert_stop(name, "end_turn");
    }

    // A file read through the client.
    let notes = prepared.project.join("notes.txt");
    assert_eq!(
        steps.get("read")["reads"],
        serde_json::json!([arg(&notes)]),
        "{output}"
    );
    steps.assert_text_contains(
        "read",
        &format!("First line of {}: {NOTES_LINE}", notes.display()),
    );

    // A plan: these clients advertise no plan operations, so they get the plain `plan`.
    let plans = steps.get("plan")["plans"]
        .as_array()
        .expect("plans")
        .clone();
    assert_eq!(
        plans.first(),
        Some(&serde_json::json!(["in_progress", "pending"])),
        "{output}"
    );

    // An MCP tool call through the notes proxy (bridged to the demo agent as a stdio server);
    // without the proxy, the agent says it has no such tool.
    match setup {
        Setup::DemoChain => {
            steps.assert_text_contains(
                "remember",
                "Remembered note 1 for this session: the release is on Friday",
            );
            assert_eq!(
                steps
                    .tool_statuses("remember", "demo-tool-")
                    .last()
                    .map(String::as_str),
                Some("completed"),
                "{output}"
            );
            steps.assert_text_contains("recall", "1. the release is on Friday");
        }
        Setup::DemoAgent => {
            steps.assert_text_contains("remember", "no MCP server offers a `remember` tool");
        }
    }

    // Cancel: the turn ends as cancelled after its first tick.
    steps.assert_text_contains("cancel", "tick 1");
    steps.assert_stop("cancel", "cancelled");

    // A second session: its own id, and (with the notes proxy) its own notes.
    let second = steps.get("second session")["sessionId"].clone();
    assert!(second.as_str().is_some_and(|id| !id.is_empty()), "{output}");
    assert_ne!(first, second, "{output}");
    steps.assert_stop("second session recall", "end_turn");
    assert!(
        !steps
            .text("second session recall")
            .contains("the release is on Friday"),
        "the second session saw the first one's note:\n{output}"
    );

    // The conductor ended when the client closed its stdin, and took its chain with it.
    assert_eq!(steps.get("agent exited")["code"], 0, "{output}");
    assert_chain_ran(run, prepared, setup);
    if setup == Setup::DemoChain {
        // The demo agent started the notes server the conductor bridged to it.
        run.assert_ran("acp-conductor mcp-bridge");
    }
}

/// The run started the conductor and every component of `setup` (all gone by now): the
/// conductor is the client's own child, seen on /proc; the components are read from the
/// conductor's trace, which records each start with its program.
fn assert_chain_ran(run: &ClientRun, prepared: &Prepared, setup: Setup) {
    run.assert_ran("acp-conductor run --config");
    let trace = std::fs::read_to_string(prepared.chain.dir.join(TRACE))
        .unwrap_or_else(|e| panic!("no trace of the run: {e}"));
    let records: Vec<Value> = trace
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let started = |program: &str| {
        records.iter().any(|r| {
            r["type"] == "component"
                && r["event"] == "started"
                && r["detail"].as_str().is_some_and(|d| d.contains(program))
        })
    };
    let mut programs = vec!["acp-demo-agent"];
    if setup == Setup::DemoChain {
        programs.extend(["acp-context-proxy", "acp-notes-proxy", "acp-tool-guard"]);
    }
    for program in programs {
        assert!(
            started(program),
            "the trace shows no start of {program}:\n{trace}"
        );
    }
}

#[test]
fn ts_sdk_stable_client_with_the_demo_agent() {
    let (prepared, run) = run_ts_sdk("stable", Setup::DemoAgent, "full");
    assert_scenario(&prepared, &run, Setup::DemoAgent);
}

#[test]
fn ts_sdk_stable_client_with_the_demo_chain() {
    let (prepared, run) = run_ts_sdk("stable", Setup::DemoChain, "full");
    assert_scenario(&prepared, &run, Setup::DemoChain);
}

#[test]
fn ts_sdk_unstable_client_with_the_demo_agent() {
    let (prepared, run) = run_ts_sdk("unstable", Setup::DemoAgent, "full");
    assert_scenario(&prepared, &run, Setup::DemoAgent);
}

#[test]
fn ts_sdk_unstable_client_with_the_demo_chain() {
    let (prepared, run) = run_ts_sdk("unstable", Setup::DemoChain, "full");
    assert_scenario(&prepared, &run, Setup::DemoChain);
}

#[test]
fn python_sdk_client_with_the_demo_agent() {
    let (prepared, run) = run_python_sdk(Setup::DemoAgent);
    assert_scenario(&prepared, &run, Setup::DemoAgent);
}

#[test]
fn python_sdk_client_with_the_demo_chain() {
    let (prepared, run) = run_python_sdk(Setup::DemoChain);
    assert_scenario(&prepared, &run, Setup::DemoChain);
}

/// The Python SDK's own `examples/client.py`, driven headless: it reads prompts from its
/// stdin and prints the agent's text as `| Agent: ...`; it refuses permission requests and
/// file reads (method not found), which the demo agent takes as a denial.
fn run_python_example(setup: Setup) -> (Prepared, ClientRun) {
    let tools = InteropTools::locate();
    let binaries = binaries!();
    let prepared = prepare(
        &binaries,
        &format!("interop-python-example-{setup:?}"),
        setup,
    );
    let input = prepared.chain.dir.join("prompts.txt");
    std::fs::write(
        &input,
        "Hello\nPlease write the release notes to a file\nPlease read notes.txt\n",
    )
    .expect("write the prompts");
    let mut command = Command::new(tools.python());
    command
        .arg(tools.python_example())
        .args(prepared.conductor_command())
        .current_dir(&prepared.project);
    let stdin = std::fs::File::open(&input).expect("open the prompts");
    let run = ClientRun::run_with_stdin("python-example", command, stdin.into(), RUN_LIMIT);
    assert!(run.status.success(), "{}", run.output());
    assert_chain_ran(&run, &prepared, setup);
    (prepared, run)
}

fn assert_python_example(prepared: &Prepared, run: &ClientRun) {
    let output = run.output();
    let notes = prepared.project.join("notes.txt");
    for wanted in [
        "| Agent: Demo agent here. I received".to_owned(),
        "| Agent: > Hello".to_owned(),
        "| Agent: Permission denied: demo.txt was not written.".to_owned(),
        format!("| Agent: I cannot read {}: ", notes.display()),
    ] {
        assert!(output.contains(&wanted), "no {wanted:?} in\n{output}");
    }
}

#[test]
fn python_sdk_example_client_with_the_demo_agent() {
    let (prepared, run) = run_python_example(Setup::DemoAgent);
    assert_python_example(&prepared, &run);
}

#[test]
fn python_sdk_example_client_with_the_demo_chain() {
    let (prepared, run) = run_python_example(Setup::DemoChain);
    assert_python_example(&prepared, &run);
}

// Checks that wait for issue 23's fixes (branch i23-fixes).

/// Issue 23, item 2: the context proxy's injected rule ("Always write tests") is not the
/// user's request, so "Hello" asks for nothing.
#[test]
fn a_plain_prompt_asks_no_permission_through_the_context_proxy() {
    for (_, run) in [
        run_ts_sdk("stable", Setup::DemoChain, "full"),
        run_python_sdk(Setup::DemoChain),
    ] {
        let steps = Steps::of(&run);
        assert_eq!(
            steps.get("hello")["permissions"],
            json!([]),
            "{}",
            steps.output
        );
        assert!(
            !steps.text("hello").contains("Permission"),
            "{}",
            steps.output
        );
    }
}

/// Issue 23, item 3: a client without plan operations sees the checklist done as the turn
/// ends, not only its state at the start.
#[test]
fn the_plans_final_state_reaches_a_client_without_plan_operations() {
    for (_, run) in [
        run_ts_sdk("stable", Setup::DemoAgent, "full"),
        run_python_sdk(Setup::DemoAgent),
    ] {
        let steps = Steps::of(&run);
        let plans = steps.get("plan")["plans"]
            .as_array()
            .expect("plans")
            .clone();
        assert_eq!(
            plans.last(),
            Some(&json!(["completed", "completed"])),
            "{}",
            steps.output
        );
    }
}

/// Issue 23, item 4: the TypeScript SDK's v2 client hears the protocol version it was answered
/// with, with the demo agent alone and behind the demo chain: the demo agent speaks version 1,
/// so the client either goes on with it or refuses it by its version, never with a validation
/// error about the answer's shape (which it gave before: version 2's schema requires `info`).
#[test]
fn v2_client_gets_a_version_answer() {
    for setup in [Setup::DemoAgent, Setup::DemoChain] {
        let (_, run) = run_ts_sdk("v2", setup, "initialize");
        let output = run.output();
        let lines = run.json_lines();
        let initialize = lines
            .iter()
            .find(|line| line["step"] == "initialize")
            .unwrap_or_else(|| panic!("no initialize step:\n{output}"));
        let version = match initialize.get("error") {
            None => initialize["protocolVersion"].as_u64(),
            // SDK 2.4.0's v2 API refuses any version but 2, naming the one it received.
            Some(_) => initialize["data"]["receivedProtocolVersion"].as_u64(),
        };
        assert_eq!(version, Some(1), "{setup:?}: {output}");
    }
}
