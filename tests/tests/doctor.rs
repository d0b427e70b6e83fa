//! `acp-conductor doctor`: the real binary against configs each test writes. Exit 0 when
//! healthy, 1 with a problem, 78 when the file cannot be read; the report on stdout names
//! each problem and the effective chain.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use acp_conductor_tests::processes::{is_running, wait_until_gone};
use acp_conductor_tests::test_chain::{fresh_dir, toml_string};
use acp_conductor_tests::{Binaries, TestChain, binaries};

const UNSET_VARIABLE: &str = "ACP_E2E_DOCTOR_UNSET_VARIABLE";
/// The PATH doctor runs with in these tests: the system's, and nothing of the build's.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

struct Doctor {
    output: Output,
}

impl Doctor {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// Asserts the exit code, showing the whole report when it is not the one expected.
    fn assert_exit(&self, code: i32) {
        assert_eq!(
            self.code(),
            Some(code),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout(),
            String::from_utf8_lossy(&self.output.stderr)
        );
    }

    fn assert_says(&self, text: &str) {
        assert!(
            self.stdout().contains(text),
            "the report should say {text:?}:\n{}",
            self.stdout()
        );
    }

    /// The report's `problem:` lines.
    fn problems(&self) -> Vec<String> {
        self.stdout()
            .lines()
            .filter(|line| line.starts_with("problem: "))
            .map(str::to_owned)
            .collect()
    }
}

/// Runs `doctor --config <config> <extra>` with `PATH` set to `path`.
fn doctor(config: &Path, path: &str, extra: &[&str]) -> Doctor {
    let binaries: Binaries = binaries!();
    let output = Command::new(&binaries.conductor)
        .arg("doctor")
        .arg("--config")
        .arg(config)
        .args(extra)
        .env("PATH", path)
        .env_remove(UNSET_VARIABLE)
        .env_remove("ACP_CONDUCTOR_CONFIG")
        .env_remove("ACP_CONDUCTOR_LOG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run acp-conductor doctor");
    Doctor { output }
}

/// A directory for one test's files, removed unless the test fails.
struct Dir(PathBuf);

impl Dir {
    fn new(label: &str) -> Self {
        Dir(fresh_dir(label))
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// An executable script.
    fn script(&self, name: &str, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(name, text);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn quoted(path: &Path) -> String {
    toml_string(&path.display().to_string())
}

#[test]
fn a_healthy_chain_of_fixtures_exits_zero_and_shows_the_effective_chain() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "doctor-healthy", 1);
    chain.proxies[0].protocol("rfd");
    chain.agent_setting("startup_timeout", "\"5s\"");
    let config = chain.write_config();
    let report = doctor(&config, SYSTEM_PATH, &[]);
    report.assert_exit(0);
    assert_eq!(report.problems(), Vec::<String>::new());
    report.assert_says("The chain, from the editor:\n  1. proxy `p1`: a process; protocol rfd");
    report.assert_says(&format!(
        "       runs {} --record ",
        binaries.proxy.display()
    ));
    report.assert_says("  2. agent `agent`: a process\n");
    report.assert_says(&format!(
        "       runs {} --record ",
        binaries.agent.display()
    ));
    report
        .assert_says("on failure: fail (the chain stops); startup timeout 5s; no request timeout");
    report.assert_says(
        "MCP servers offered over ACP: as HTTP servers on a loopback port if its initialize \
         answer offers mcpCapabilities.http, else as stdio shims (mcp_bridge = \"auto\")",
    );
    report.assert_says("on PATH=/usr/bin:/bin:/usr/sbin:/sbin");
    report.assert_says("No problems found.");
}

#[test]
fn doctor_says_which_form_mcp_servers_take() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "doctor-mcp-bridge", 1);
    chain.conductor_setting("mcp_bridge", "\"stdio\"");
    let report = doctor(&chain.write_config(), SYSTEM_PATH, &[]);
    report.assert_exit(0);
    report.assert_says(
        "MCP servers offered over ACP: as stdio shims, a process per server (mcp_bridge = \"stdio\")",
    );
}

#[test]
fn a_command_not_found_anywhere_is_a_problem() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-missing-command");
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"gone\"\ncommand = \"acp-e2e-no-such-program\"\n",
            quoted(&binaries.agent)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &[]);
    report.assert_exit(1);
    let problems = report.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("conductor.toml:6:11: command `acp-e2e-no-such-program` not found"),
        "{problems:?}"
    );
    report.assert_says("The chain cannot be shown until the errors below are fixed.");
    report.assert_says("1 problem found.");
}

#[test]
fn a_command_found_only_on_the_shells_path_is_a_problem_with_its_full_path() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-shell-path");
    let bin = dir.0.join("shell-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let program = bin.join("acp-e2e-shell-only-proxy");
    std::os::unix::fs::symlink(&binaries.proxy, &program).unwrap();
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"p\"\ncommand = \"acp-e2e-shell-only-proxy\"\n",
            quoted(&binaries.agent)
        ),
    );
    let shell_path = format!("{}:{SYSTEM_PATH}", bin.display());
    let report = doctor(&config, &shell_path, &[]);
    report.assert_exit(1);
    assert_eq!(
        report.problems(),
        [format!(
            "problem: `p`: command `acp-e2e-shell-only-proxy` (line 6) is found on this shell's \
             PATH, at {}, but not on the PATH an editor started from the desktop gets \
             (/usr/bin:/bin:/usr/sbin:/sbin)",
            program.display()
        )]
    );
    report.assert_says(&format!(
        "  fix: write the full path: `command = \"{}\"`",
        program.display()
    ));
    // The chain itself is valid here, and shown.
    report.assert_says("  1. proxy `p`: a process");

    // An editor whose PATH has that directory is fine.
    let report = doctor(&config, &shell_path, &["--path", &shell_path]);
    report.assert_exit(0);
    report.assert_says(&format!("on PATH={shell_path} (--path)"));
}

#[test]
fn a_missing_wasm_file_and_a_file_that_is_not_webassembly_are_problems() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-wasm");
    dir.write("not-wasm.wasm", "#!/bin/sh\n");
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"w1\"\nwasm = \"absent.wasm\"\n\n\
             [[proxy]]\nname = \"w2\"\nwasm = \"not-wasm.wasm\"\n",
            quoted(&binaries.agent)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &[]);
    report.assert_exit(1);
    let problems = report.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains(":6:8: `wasm`: cannot read ") && problems[0].contains("absent.wasm"),
        "{problems:?}"
    );
    assert!(
        problems[1].contains(":10:8: `wasm`: ")
            && problems[1].contains("is not a WebAssembly module or component"),
        "{problems:?}"
    );
}

#[test]
fn a_sandbox_grant_to_a_missing_directory_is_a_problem() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-grant");
    // A core module's header is all the check reads.
    std::fs::write(dir.0.join("proxy.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"w\"\nwasm = \"proxy.wasm\"\n\
             [proxy.sandbox]\ndirs = [{{ host = \"no-such-dir\", guest = \"/data\" }}]\n",
            quoted(&binaries.agent)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &[]);
    report.assert_exit(1);
    assert_eq!(
        report.problems(),
        [format!(
            "problem: {}:8:18: `host` {} does not exist",
            config.display(),
            dir.0.join("no-such-dir").display()
        )]
    );
}

#[test]
fn an_unset_variable_is_a_problem_with_a_hint_about_the_editors_environment() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-unset");
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = {}\nenv = {{ KEY = \"${{{UNSET_VARIABLE}}}\", OTHER = \"${{{UNSET_VARIABLE}:-fine}}\" }}\n",
            quoted(&binaries.agent)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &[]);
    report.assert_exit(1);
    let problems = report.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains(&format!(
            ":3:15: environment variable `{UNSET_VARIABLE}` is not set"
        )),
        "{problems:?}"
    );
    report.assert_says(&format!(
        "  fix: acp-conductor gets the environment the editor starts it with, not your shell's: \
         set {UNSET_VARIABLE} in the editor's settings"
    ));
}

#[test]
fn a_script_whose_interpreter_the_editors_path_lacks_is_a_problem() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-interpreter");
    let script = dir.script(
        "agent-script",
        "#!/usr/bin/env acp-e2e-no-such-interpreter\nprint('hello')\n",
    );
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"p\"\ncommand = {}\n",
            quoted(&script),
            quoted(&binaries.proxy)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &[]);
    report.assert_exit(1);
    assert_eq!(
        report.problems(),
        [format!(
            "problem: agent `agent`: {} is a script run by `acp-e2e-no-such-interpreter` \
             (`#!/usr/bin/env acp-e2e-no-such-interpreter`), and `acp-e2e-no-such-interpreter` \
             is not on the editor's PATH (/usr/bin:/bin:/usr/sbin:/sbin)",
            script.display()
        )]
    );
}

#[test]
fn an_unreadable_config_exits_78_as_check_does() {
    let dir = Dir::new("doctor-unreadable");
    let report = doctor(&dir.0.join("absent.toml"), SYSTEM_PATH, &[]);
    report.assert_exit(78);
    assert_eq!(report.stdout(), "");
    assert!(
        String::from_utf8_lossy(&report.output.stderr).contains("cannot read the configuration"),
        "{:?}",
        report.output
    );
}

#[test]
fn probe_times_each_component_of_a_healthy_chain_and_leaves_nothing_running() {
    let binaries = binaries!();
    let chain = TestChain::with_test_proxies(&binaries, "doctor-probe-ok", 2);
    let config = chain.write_config();
    let report = doctor(&config, SYSTEM_PATH, &["--probe"]);
    report.assert_exit(0);
    let stdout = report.stdout();
    for label in ["proxy `p1`", "proxy `p2`", "agent `agent`"] {
        let line = stdout
            .lines()
            .find(|line| line.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no probe line for {label}:\n{stdout}"));
        assert!(
            line.contains("ok       answered initialize in ")
                && line.contains(" ms (startup timeout 1m)"),
            "{line}"
        );
    }
    // Each component really was initialized: the agent recorded the editor's initialize.
    let initialize = &chain.received("agent")[0];
    assert_eq!(initialize["method"], "initialize");
    assert_eq!(
        initialize["params"]["clientInfo"]["name"],
        "acp-conductor doctor"
    );
    assert!(wait_until_gone(&chain.fixture_pids(), Duration::from_secs(5)).is_empty());
    report.assert_says("No problems found.");
}

#[test]
fn probe_reports_an_agent_that_never_answers_initialize_and_stops_it() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-probe-silent");
    let pid_file = dir.0.join("silent.pid");
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\nname = \"silent\"\ncommand = \"/bin/sh\"\n\
             args = [\"-c\", \"echo $$ > '{}'; echo starting >&2; exec sleep 600\"]\n\
             startup_timeout = \"1s\"\n\n[[proxy]]\nname = \"p1\"\ncommand = {}\n",
            pid_file.display(),
            quoted(&binaries.proxy)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &["--probe"]);
    report.assert_exit(1);
    let stdout = report.stdout();
    let agent_line = stdout
        .lines()
        .find(|line| line.trim_start().starts_with("agent `silent`"))
        .unwrap_or_else(|| panic!("no probe line for the agent:\n{stdout}"));
    assert!(
        agent_line.contains("problem  did not answer `initialize` within 1 s"),
        "{agent_line}"
    );
    report.assert_says("             | starting\n");
    let proxy_line = stdout
        .lines()
        .find(|line| line.trim_start().starts_with("proxy `p1`"))
        .unwrap();
    assert!(
        proxy_line.contains("passed on the failure of a component after it"),
        "{proxy_line}"
    );
    report.assert_says("1 problem found.");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the agent started")
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_until_gone(&[pid], Duration::from_secs(5)).is_empty(),
        "the silent agent (pid {pid}) is still running: {}",
        is_running(pid)
    );
}

#[test]
fn probe_reports_an_agent_that_exits_at_once_with_its_stderr() {
    let binaries = binaries!();
    let dir = Dir::new("doctor-probe-exit");
    let config = dir.write(
        "conductor.toml",
        &format!(
            "[agent]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"echo 'no API key' >&2; exit 3\"]\n\n\
             [[proxy]]\nname = \"p1\"\ncommand = {}\n",
            quoted(&binaries.proxy)
        ),
    );
    let report = doctor(&config, SYSTEM_PATH, &["--probe"]);
    report.assert_exit(1);
    let stdout = report.stdout();
    let agent_line = stdout
        .lines()
        .find(|line| line.trim_start().starts_with("agent `agent`"))
        .unwrap_or_else(|| panic!("no probe line for the agent:\n{stdout}"));
    assert!(
        agent_line.contains("problem  ") && agent_line.contains("exit"),
        "{agent_line}"
    );
    report.assert_says("             | no API key\n");
}

#[test]
fn probe_of_a_proxy_mode_config_stands_in_for_the_successor() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "doctor-probe-proxy-mode", 1);
    chain.without_agent().conductor_setting("mode", "\"proxy\"");
    let config = chain.write_config();
    let report = doctor(&config, SYSTEM_PATH, &["--probe"]);
    report.assert_exit(0);
    report.assert_says("The chain, from a parent conductor");
    report.assert_says("  2. the parent conductor's successor");
    let stdout = report.stdout();
    let line = stdout
        .lines()
        .find(|line| line.trim_start().starts_with("proxy `p1`"))
        .unwrap_or_else(|| panic!("no probe line for p1:\n{stdout}"));
    assert!(line.contains("ok       answered initialize in "), "{line}");
    // The proxy got the stand-in's answer from its successor.
    assert_eq!(
        chain.init_response("p1")["result"]["agentInfo"]["name"],
        "acp-conductor doctor (stand-in successor)"
    );
}
