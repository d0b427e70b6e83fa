//! The programs the conductor runs itself: the demo agent (`acp-demo-agent`, for
//! `builtin = "demo"`) and the prompt client (`acp-prompt`, for `acp-conductor prompt`). They
//! are found next to the conductor, then on PATH; a missing one is reported with how to build it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use acp_conductor_tests::test_chain::{fresh_dir, toml_string};
use acp_conductor_tests::{TestChain, binaries};

/// A conductor in a directory of its own (a hard link to the one under test, so it finds
/// nothing next to itself), run with an empty PATH.
struct LoneConductor {
    dir: PathBuf,
    program: PathBuf,
}

impl LoneConductor {
    fn new(label: &str, conductor: &Path) -> Self {
        let dir = fresh_dir(label);
        let program = dir.join("acp-conductor");
        link_or_copy(conductor, &program);
        std::fs::create_dir_all(dir.join("empty-path")).unwrap();
        LoneConductor { dir, program }
    }

    /// Puts `program` next to the conductor.
    fn ship(&self, program: &Path) {
        link_or_copy(program, &self.dir.join(program.file_name().unwrap()));
    }

    fn config(&self, text: &str) -> PathBuf {
        let path = self.dir.join("conductor.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn run(&self, args: &[&str], config: &Path) -> Output {
        Command::new(&self.program)
            .args(args)
            .arg("--config")
            .arg(config)
            .env("PATH", self.dir.join("empty-path"))
            .env_remove("ACP_CONDUCTOR_CONFIG")
            .output()
            .expect("run the conductor")
    }
}

impl Drop for LoneConductor {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).expect("copy a program");
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_reports_a_missing_demo_agent_at_the_builtin_value() {
    let binaries = binaries!();
    let lone = LoneConductor::new("no-demo-agent", &binaries.conductor);
    let config = lone.config("[agent]\nbuiltin = \"demo\"\n");
    let output = lone.run(&["check"], &config);
    assert_eq!(output.status.code(), Some(78), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}:2:11: command `acp-demo-agent` not found next to acp-conductor or on PATH: \
             `builtin = \"demo\"` runs it as the agent (build it with `cargo build -p acp-demo`, \
             or install it next to acp-conductor)\n",
            config.display()
        )
    );

    // Shipped next to the conductor, it is the agent the summary names.
    let demo_agent = binaries.workspace_program(&acp_conductor_tests::binaries::DEMO_AGENT);
    lone.ship(&demo_agent);
    let output = lone.run(&["check"], &config);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains(&format!(
            "messages go to the built-in demo agent ({}).",
            lone.dir.join("acp-demo-agent").display()
        )),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn prompt_without_acp_prompt_says_what_is_missing_and_how_to_build_it() {
    let binaries = binaries!();
    let lone = LoneConductor::new("no-prompt-client", &binaries.conductor);
    let config = lone.config(&format!(
        "[agent]\ncommand = {}\n",
        toml_string(&binaries.agent.display().to_string())
    ));
    let output = lone.run(&["prompt", "hello"], &config);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "");
    assert_eq!(
        text(&output.stderr),
        "acp-conductor: `prompt` needs the program `acp-prompt`: command `acp-prompt` not found \
         next to acp-conductor or on PATH (build it with `cargo build -p acp-demo`, or install \
         it next to acp-conductor)\n"
    );
}

/// Clients keep sessions by id across every agent they run (acpx does): the demo agents of two
/// conductors must not both call their first session `demo-session-1`, or a prompt meant for one
/// project's chain goes to the other's.
#[test]
fn the_demo_agents_of_two_conductors_give_their_sessions_different_ids() {
    let binaries = binaries!();
    let first_session = |label: &str| {
        let chain = TestChain::with_demo_agent(&binaries, label);
        let mut editor = chain.launch();
        editor.initialize();
        let session = editor.new_session();
        editor.close_stdin();
        assert!(editor.wait_exit().success(), "{}", editor.stderr());
        session
    };
    let (one, other) = (
        first_session("session-ids-1"),
        first_session("session-ids-2"),
    );
    for session in [&one, &other] {
        // Still readable: `demo-session-<8 hex digits>-<n>`.
        let token = session
            .strip_prefix("demo-session-")
            .and_then(|rest| rest.strip_suffix("-1"))
            .unwrap_or_else(|| panic!("{session}"));
        assert!(
            token.len() == 8
                && token
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{session}"
        );
    }
    assert_ne!(one, other);
}
