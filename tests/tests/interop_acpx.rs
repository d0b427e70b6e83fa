//! acpx (a headless ACP client, pinned by `.ci/setup-interop`, run by the Node 22 it needs)
//! drives the real conductor through its persistent sessions, as its users do: `sessions new`,
//! then `prompt` after `prompt` in the same session (acpx keeps the conductor running in a
//! background "queue owner" between commands) and `cancel` from another acpx process. With
//! the demo agent alone and with the demo chain.
//!
//! `--format json` prints the ACP messages acpx exchanged, one per line; the checks read
//! those. No process may be left once acpx's queue owner has timed out (`--ttl`).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use acp_conductor_tests::binaries::{CONTEXT_PROXY, NOTES_PROXY, TOOL_GUARD, workspace_root};
use acp_conductor_tests::client_run::ClientRun;
use acp_conductor_tests::interop::{InteropTools, arg};
use acp_conductor_tests::marked_processes::{MarkedProcesses, mark};
use acp_conductor_tests::{TestChain, binaries};
use serde_json::Value;

/// How long one acpx command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);
/// acpx's queue owner (and with it the conductor) ends this many seconds after its last
/// command. Long enough that it never ends between two commands of a test: a command that
/// reaches a queue owner as it ends fails ("Queue owner is shutting down").
const QUEUE_OWNER_TTL: &str = "10";
const NOTES_LINE: &str = "Release notes draft: the release is on Friday.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    DemoAgent,
    DemoChain,
}

/// acpx set up for one test: its agent command (the conductor), HOME and project.
struct Acpx {
    tools: InteropTools,
    /// Kept for its directory, which goes when the chain does.
    _chain: TestChain,
    agent: String,
    home: PathBuf,
    project: PathBuf,
    mark: String,
}

impl Acpx {
    fn new(setup: Setup) -> Self {
        let tools = InteropTools::locate();
        let binaries = binaries!();
        let mut chain = TestChain::with_demo_agent(&binaries, &format!("interop-acpx-{setup:?}"));
        if setup == Setup::DemoChain {
            let root = workspace_root();
            let agents_md = arg(&root.join("docs/demo/AGENTS.md"));
            let policy = arg(&root.join("tests/interop/guard-policy.toml"));
            let context = binaries.workspace_program(&CONTEXT_PROXY);
            chain.add_proxy(
                "context",
                &context,
                &["--file", &agents_md, "--rule", "Always write tests"],
            );
            let notes = binaries.workspace_program(&NOTES_PROXY);
            chain.add_proxy::<&str>("notes", &notes, &[]);
            let guard = binaries.workspace_program(&TOOL_GUARD);
            chain.add_proxy("guard", &guard, &["--policy", &policy]);
        }
        let config = chain.write_config();
        let home = chain.dir.join("home");
        let project = chain.dir.join("project");
        for dir in [&home, &project] {
            std::fs::create_dir_all(dir).expect("create a directory");
        }
        std::fs::write(project.join("notes.txt"), format!("{NOTES_LINE}\nmore\n"))
            .expect("write notes.txt");
        // acpx splits the agent command on spaces; none of these paths has one.
        let agent = format!("{} run --config {}", arg(&binaries.conductor), arg(&config));
        Self {
            tools,
            _chain: chain,
            agent,
            home,
            project,
            mark: mark(&format!("acpx-{setup:?}")),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(self.tools.node_22());
        command
            .arg(self.tools.acpx())
            .args(["--agent", &self.agent, "--cwd", &arg(&self.project)])
            .args(["--ttl", QUEUE_OWNER_TTL, "--format", "json"])
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home);
        command
    }

    /// Runs one acpx command to its end; panics when it fails. acpx ends a prompt whose
    /// permission requests were all denied with exit status 5 (its PERMISSION_DENIED; it
    /// counts over the queue owner's life, so an earlier approval hides it): accepted then.
    fn run(&self, args: &[&str]) -> Output {
        let command = self.command(args);
        let run = ClientRun::run_marked("acpx", command, Stdio::null(), COMMAND_LIMIT, &self.mark);
        let status = run.status;
        let output = Output::of(run);
        let choices = output.permission_choices();
        let all_denied =
            !choices.is_empty() && choices.iter().all(|choice| choice["optionId"] == "reject");
        let accepted = status.success() || (all_denied && status.code() == Some(5));
        assert!(accepted, "acpx {args:?}: {}", output.text);
        output
    }
}

/// What one acpx command printed: the ACP messages, one per line.
struct Output {
    messages: Vec<Value>,
    text: String,
}

impl Output {
    fn of(run: ClientRun) -> Self {
        Self {
            messages: run.json_lines(),
            text: run.output(),
        }
    }

    /// The agent's streamed text.
    fn said(&self) -> String {
        self.updates("agent_message_chunk")
            .filter_map(|update| update["content"]["text"].as_str())
            .collect()
    }

    fn updates<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.messages
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| &m["params"]["update"])
            .filter(move |update| update["sessionUpdate"] == kind)
    }

    fn requests(&self, method: &str) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .collect()
    }

    /// The answer to `request`: the first response with its id after it (both sides number
    /// their requests, so an id alone is ambiguous).
    fn answer_to(&self, request: &Value) -> &Value {
        let at = self
            .messages
            .iter()
            .position(|m| m == request)
            .expect("a request of this output");
        self.messages[at..]
            .iter()
            .find(|m| m.get("method").is_none() && m["id"] == request["id"])
            .unwrap_or_else(|| panic!("no answer to {request}:\n{}", self.text))
    }

    fn stop_reason(&self) -> &Value {
        let prompt = self.requests("session/prompt");
        let prompt = prompt
            .last()
            .unwrap_or_else(|| panic!("no prompt:\n{}", self.text));
        &self.answer_to(prompt)["result"]["stopReason"]
    }

    fn assert_said(&self, wanted: &str) {
        assert!(
            self.said().contains(wanted),
            "the agent did not say {wanted:?}:\n{}",
            self.text
        );
    }

    /// The option this client chose for each permission request.
    fn permission_choices(&self) -> Vec<Value> {
        self.requests("session/request_permission")
            .into_iter()
            .map(|request| self.answer_to(request)["result"]["outcome"].clone())
            .collect()
    }
}

fn scenario(setup: Setup) {
    let acpx = Acpx::new(setup);
    let watch = MarkedProcesses::watch(&acpx.mark);

    // initialize and session/new, through acpx's queue owner.
    let created = acpx.run(&["sessions", "new"]);
    assert!(created.text.contains("created session"), "{}", created.text);

    // A prompt with streamed text; initialize's answer is the demo agent's.
    // `--deny-all`: without a terminal, acpx fails a command when a permission request comes
    // that no flag decides.
    let hello = acpx.run(&["--deny-all", "prompt", "Hello"]);
    hello.assert_said("Demo agent here.");
    hello.assert_said("> Hello\n");
    assert_eq!(hello.stop_reason(), "end_turn", "{}", hello.text);

    // A permission round trip, allowed, then denied.
    let write = "Please write the release notes to a file";
    let allowed = acpx.run(&["--approve-all", "prompt", write]);
    let choices = allowed.permission_choices();
    assert_eq!(choices.len(), 1, "{}", allowed.text);
    assert_eq!(choices[0]["optionId"], "allow", "{}", allowed.text);
    allowed.assert_said("Permission granted: I would write demo.txt");
    let denied = acpx.run(&["--deny-all", "prompt", write]);
    let choices = denied.permission_choices();
    assert_eq!(choices.len(), 1, "{}", denied.text);
    assert_eq!(choices[0]["optionId"], "reject", "{}", denied.text);
    denied.assert_said("Permission denied: demo.txt was not written.");

    // A file read through the client.
    let read = acpx.run(&[
        "--approve-reads",
        "--non-interactive-permissions",
        "deny",
        "prompt",
        "Please read notes.txt",
    ]);
    let notes = acpx.project.join("notes.txt");
    let reads = read.requests("fs/read_text_file");
    assert_eq!(reads.len(), 1, "{}", read.text);
    assert_eq!(reads[0]["params"]["path"], arg(&notes), "{}", read.text);
    read.assert_said(&format!("First line of {}: {NOTES_LINE}", notes.display()));

    // A plan (acpx advertises no plan operations: the plain `plan` update).
    let plan = acpx.run(&["--deny-all", "prompt", "Plan the release notes"]);
    let first_plan = plan
        .updates("plan")
        .next()
        .unwrap_or_else(|| panic!("no plan:\n{}", plan.text));
    assert_eq!(first_plan["entries"][0]["status"], "in_progress");

    // An MCP tool call through the notes proxy, remembered across prompts of the session.
    let remember = acpx.run(&["prompt", "Remember that the release is on Friday"]);
    let recall = acpx.run(&["prompt", "What do you recall?"]);
    match setup {
        Setup::DemoChain => {
            remember.assert_said("Remembered note 1 for this session: the release is on Friday");
            recall.assert_said("1. the release is on Friday");
        }
        Setup::DemoAgent => {
            remember.assert_said("no MCP server offers a `remember` tool");
        }
    }

    // Cancel, from another acpx process while the prompt runs.
    let slow = {
        let command = acpx.command(&["--deny-all", "prompt", "Go slow"]);
        let mark = acpx.mark.clone();
        std::thread::spawn(move || {
            ClientRun::run_marked("acpx", command, Stdio::null(), COMMAND_LIMIT, &mark)
        })
    };
    std::thread::sleep(Duration::from_millis(1500));
    acpx.run(&["cancel"]);
    let slow = Output::of(slow.join().expect("the slow prompt"));
    slow.assert_said("tick 1");
    assert_eq!(slow.stop_reason(), "cancelled", "{}", slow.text);

    // Every queue owner ends `--ttl` after its last command, and takes its conductor along.
    let processes = watch.assert_all_gone(Duration::from_secs(30));
    for program in ["acp-conductor run --config", "acp-demo-agent"] {
        assert!(
            processes.iter().any(|p| p.contains(program)),
            "{program} never ran: {processes:#?}"
        );
    }
}

#[test]
fn acpx_with_the_demo_agent() {
    scenario(Setup::DemoAgent);
}

#[test]
fn acpx_with_the_demo_chain() {
    scenario(Setup::DemoChain);
}

/// Issue 23, item 1: two acpx sessions are two conductors; their session ids differ, so a
/// prompt to the second session reaches the second conductor (and not the first one's notes).
#[test]
fn session_ids_are_unique_across_two_conductors() {
    let acpx = Acpx::new(Setup::DemoChain);
    let watch = MarkedProcesses::watch(&acpx.mark);
    acpx.run(&["sessions", "new"]);
    acpx.run(&["prompt", "Remember that the release is on Friday"]);
    acpx.run(&["sessions", "new", "--name", "second"]);
    let second = acpx.run(&["prompt", "-s", "second", "What do you recall?"]);
    let first = acpx.run(&["prompt", "What do you recall?"]);
    first.assert_said("1. the release is on Friday");
    assert!(
        !second.said().contains("the release is on Friday"),
        "the second session reached the first one's conductor:\n{}",
        second.text
    );
    assert_ne!(session_of(&first), session_of(&second), "{}", second.text);
    let processes = watch.assert_all_gone(Duration::from_secs(30));
    let conductors = processes
        .iter()
        .filter(|p| p.contains("acp-conductor run --config"))
        .count();
    assert!(conductors >= 2, "{processes:#?}");
}

/// The session a prompt went to.
fn session_of(output: &Output) -> Value {
    output.requests("session/prompt")[0]["params"]["sessionId"].clone()
}
