//! Agents by registry id: `[agent] registry = "<id>"` with a registry file each test writes,
//! `acp-conductor agents`, and the published registry fetched from a server on the loopback
//! interface standing in for the real one (no test needs the network).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use acp_conductor_tests::scenario::standard_session;
use acp_conductor_tests::test_chain::{fresh_dir, toml_array, toml_string};
use acp_conductor_tests::{Binaries, Editor, TestChain, binaries};

const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// A registry of the published shape: an npx agent, a uvx agent, a binary agent to unpack by
/// hand, and `test-agent`, a binary whose `cmd` is the test agent's absolute path.
fn registry_json(test_agent: &Path) -> String {
    let binary = |cmd: &str| {
        let target = format!(
            r#"{{ "archive": "https://example.invalid/agent.tar.gz", "cmd": {}, "args": ["--updates", "3"] }}"#,
            serde_json::to_string(cmd).unwrap()
        );
        format!(
            r#"{{ "linux-x86_64": {target}, "linux-aarch64": {target}, "darwin-x86_64": {target},
                 "darwin-aarch64": {target}, "windows-x86_64": {target} }}"#
        )
    };
    format!(
        r#"{{
  "version": "1.0.0",
  "agents": [
    {{ "id": "gemini", "name": "Gemini CLI", "version": "0.27.3", "description": "Google's CLI",
       "distribution": {{ "npx": {{ "package": "@google/gemini-cli@0.27.3", "args": ["--experimental-acp"] }} }} }},
    {{ "id": "pyagent", "name": "PyAgent", "version": "2.1.0", "description": "A Python agent",
       "distribution": {{ "uvx": {{ "package": "pyagent", "args": ["--mode", "acp"] }} }} }},
    {{ "id": "unpacked", "name": "Unpacked Agent", "version": "1.2.3", "description": "By hand",
       "distribution": {{ "binary": {} }} }},
    {{ "id": "test-agent", "name": "Test Agent", "version": "0.1.0", "description": "The fixture",
       "distribution": {{ "binary": {} }} }}
  ],
  "extensions": []
}}"#,
        binary("./unpacked-agent"),
        binary(&test_agent.display().to_string())
    )
}

/// One test's directory: the registry file, fake `npx` and `uvx`, a data directory.
struct Setup {
    dir: PathBuf,
    binaries: Binaries,
}

impl Setup {
    fn new(label: &str) -> Self {
        let binaries: Binaries = binaries!();
        let dir = fresh_dir(label);
        std::fs::write(dir.join("registry.json"), registry_json(&binaries.agent)).unwrap();
        for runner in ["npx", "uvx"] {
            let path = dir.join("runners").join(runner);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(dir.join("data")).unwrap();
        Setup { dir, binaries }
    }

    fn path_var(&self) -> String {
        format!("{}:{SYSTEM_PATH}", self.dir.join("runners").display())
    }

    fn config(&self, agent_table: &str) -> PathBuf {
        let path = self.dir.join("conductor.toml");
        std::fs::write(&path, agent_table).unwrap();
        path
    }

    /// `acp-conductor <args>` with this setup's PATH and data directory.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.binaries.conductor)
            .args(args)
            .env("PATH", self.path_var())
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env_remove("ACP_CONDUCTOR_CONFIG")
            .env_remove("ACP_CONDUCTOR_REGISTRY_URL")
            .output()
            .expect("run acp-conductor")
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn agent_table(id: &str) -> String {
    format!(
        "[agent]\nregistry = {}\nregistry_file = \"registry.json\"\n",
        toml_string(id)
    )
}

#[test]
fn agents_lists_a_registry_file_as_a_table() {
    let setup = Setup::new("registry-agents");
    let file = setup.dir.join("registry.json");
    let output = setup.run(&["agents", "--registry-file", &file.display().to_string()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        format!("4 agents in registry file {}", file.display())
    );
    assert_eq!(
        lines[2],
        "ID          NAME            VERSION  DISTRIBUTION"
    );
    assert_eq!(lines[3], "gemini      Gemini CLI      0.27.3   npx");
    assert_eq!(lines[4], "pyagent     PyAgent         2.1.0    uvx");
    // An absolute `cmd` is a program already on this machine: installed.
    assert_eq!(
        lines[5],
        "test-agent  Test Agent      0.1.0    binary (installed)"
    );
    assert_eq!(lines[6], "unpacked    Unpacked Agent  1.2.3    binary");
    assert!(stdout.contains("registry = \"<id>\""), "{stdout}");
}

#[test]
fn each_distribution_kind_resolves_to_its_command() {
    let setup = Setup::new("registry-kinds");
    let runners = setup.dir.join("runners");
    let path = setup.path_var();
    let doctor = |id: &str| {
        let config = setup.config(&agent_table(id));
        let output = setup.run(&[
            "doctor",
            "--config",
            &config.display().to_string(),
            "--path",
            &path,
        ]);
        (output.status.code(), text(&output.stdout))
    };

    let (code, report) = doctor("gemini");
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!(
            "  1. agent `gemini`: Gemini CLI 0.27.3 from the agent registry (`gemini`, npx; \
             registry file {})\n       runs {} -y @google/gemini-cli@0.27.3 --experimental-acp\n",
            setup.dir.join("registry.json").display(),
            runners.join("npx").display()
        )),
        "{report}"
    );

    let (code, report) = doctor("pyagent");
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!(
            "       runs {} pyagent@2.1.0 --mode acp\n",
            runners.join("uvx").display()
        )),
        "{report}"
    );

    // A binary is run once unpacked where the error said.
    let config = setup.config(&agent_table("unpacked"));
    let output = setup.run(&["check", "--config", &config.display().to_string()]);
    assert_eq!(output.status.code(), Some(78));
    let install_dir = setup.dir.join("data/acp-conductor/agents/unpacked/1.2.3");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("agent `unpacked` (Unpacked Agent 1.2.3) comes as a binary archive")
            && stderr.contains("does not download")
            && stderr.contains("https://example.invalid/agent.tar.gz")
            && stderr.contains(&format!(
                "{} is there",
                install_dir.join("unpacked-agent").display()
            )),
        "{stderr}"
    );
    std::fs::create_dir_all(&install_dir).unwrap();
    std::os::unix::fs::symlink(&setup.binaries.agent, install_dir.join("unpacked-agent")).unwrap();
    let (code, report) = doctor("unpacked");
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!(
            "(`unpacked`, binary; registry file {})\n       runs {} --updates 3\n",
            setup.dir.join("registry.json").display(),
            install_dir.join("unpacked-agent").display()
        )),
        "{report}"
    );
}

#[test]
fn check_names_the_registry_agent_and_doctor_flags_a_runner_missing_from_the_editors_path() {
    let setup = Setup::new("registry-check-doctor");
    let config = setup.config(&agent_table("gemini"));
    let config = config.display().to_string();
    let output = setup.run(&["check", "--config", &config]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains(&format!(
            "agent `gemini` ({}, Gemini CLI 0.27.3 from the agent registry (npx))",
            setup.dir.join("runners/npx").display()
        )),
        "{}",
        text(&output.stdout)
    );
    // The fake npx is on this shell's PATH only: an editor whose PATH has no npx would not
    // find it.
    let output = setup.run(&[
        "doctor",
        "--config",
        &config,
        "--path",
        "/acp-e2e-empty-dir",
    ]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(
        report.contains("problem: `gemini`: command `npx` (line 2) is found on this shell's PATH"),
        "{report}"
    );
    assert!(
        report.contains("  fix: the registry agent runs `npx`: give acp-conductor a PATH that has"),
        "{report}"
    );
}

#[test]
fn an_unknown_id_is_a_config_error_with_close_matches() {
    let setup = Setup::new("registry-unknown");
    let config = setup.config(&agent_table("gemni"));
    let output = setup.run(&["check", "--config", &config.display().to_string()]);
    assert_eq!(output.status.code(), Some(78));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}:2:12: agent `gemni` is not in registry file {}; did you mean `gemini`? \
             (`acp-conductor agents` lists them)\n",
            config.display(),
            setup.dir.join("registry.json").display()
        )
    );
}

#[test]
fn command_and_registry_together_is_a_config_error() {
    let setup = Setup::new("registry-and-command");
    let config = setup.config(&format!(
        "[agent]\ncommand = {}\nregistry = \"gemini\"\nregistry_file = \"registry.json\"\n",
        toml_string(&setup.binaries.agent.display().to_string())
    ));
    let output = setup.run(&["check", "--config", &config.display().to_string()]);
    assert_eq!(output.status.code(), Some(78));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}:3:1: [agent] sets both `command` and `registry`; keep one of them\n",
            config.display()
        )
    );
}

#[test]
fn a_chain_whose_agent_comes_from_the_registry_carries_a_session() {
    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, "registry-chain", 1);
    chain.without_agent();
    std::fs::write(
        chain.dir.join("registry.json"),
        registry_json(&binaries.agent),
    )
    .unwrap();
    // The fixture's own options after the registry's `--updates 3`.
    let fixture_args = [
        "--record".to_string(),
        chain.file("agent", "record").display().to_string(),
        "--pid-file".to_string(),
        chain.file("agent", "pid").display().to_string(),
    ];
    let text = format!(
        "{}[agent]\nname = \"agent\"\nregistry = \"test-agent\"\nregistry_file = \"registry.json\"\nargs = {}\n",
        chain.config_text(),
        toml_array(&fixture_args)
    );
    let config = chain.config_path();
    std::fs::write(&config, text).unwrap();
    let mut editor = Editor::launch(
        &binaries.conductor,
        &["run", "--config", &config.display().to_string()],
        &[("ACP_CONDUCTOR_LOG", "debug")],
    );
    standard_session(&mut editor);
    let received = chain.received("agent");
    assert_eq!(received[0]["method"], "initialize");
    assert!(
        received.iter().any(|m| m["method"] == "session/prompt"),
        "{received:?}"
    );
    editor.close_stdin();
    assert!(editor.wait_exit().success());
}

/// A server on the loopback interface that answers every GET with `body` while up, and
/// with 503 while down, counting requests.
struct RegistryServer {
    url: String,
    requests: Arc<AtomicUsize>,
    up: Arc<AtomicBool>,
}

impl RegistryServer {
    fn start(body: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/registry/v1/latest/registry.json",
            listener.local_addr().unwrap()
        );
        let requests = Arc::new(AtomicUsize::new(0));
        let up = Arc::new(AtomicBool::new(true));
        let (counted, serving) = (requests.clone(), up.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                // The request line and headers, up to the blank line.
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line == "\r\n" || line == "\n" {
                        break;
                    }
                    line.clear();
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let (status, body) = if serving.load(Ordering::SeqCst) {
                    ("200 OK", body.as_str())
                } else {
                    ("503 Service Unavailable", "down")
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        RegistryServer { url, requests, up }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

#[test]
fn the_published_registry_is_fetched_cached_and_used_stale_when_offline() {
    let setup = Setup::new("registry-published");
    let server = RegistryServer::start(registry_json(&setup.binaries.agent));
    let agents = |cache: &str| {
        let output = Command::new(&setup.binaries.conductor)
            .arg("agents")
            .env("ACP_CONDUCTOR_REGISTRY_URL", &server.url)
            .env("XDG_CACHE_HOME", setup.dir.join(cache))
            .env("XDG_DATA_HOME", setup.dir.join("data"))
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .output()
            .unwrap();
        (
            output.status.code(),
            text(&output.stdout),
            text(&output.stderr),
        )
    };
    let (code, stdout, stderr) = agents("cache");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with(&format!(
            "4 agents in the registry at {}, fetched now",
            server.url
        )),
        "{stdout}"
    );
    assert_eq!(server.requests(), 1);

    // Fresh in the cache: not fetched again.
    let (code, stdout, _) = agents("cache");
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains(&format!("the registry at {}, as cached", server.url)),
        "{stdout}"
    );
    assert_eq!(server.requests(), 1);

    // Stale, and the server failing: the old copy, with a warning.
    let cache_dir = setup.dir.join("cache/acp-conductor/registry");
    let cached: Vec<PathBuf> = std::fs::read_dir(&cache_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    let two_days_ago = SystemTime::now() - Duration::from_secs(2 * 24 * 60 * 60);
    let age = |file: &Path| {
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(two_days_ago)
            .unwrap()
    };
    age(&cached[0]);
    server.up.store(false, Ordering::SeqCst);
    let (code, stdout, stderr) = agents("cache");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.starts_with("4 agents in the registry at "),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning: using the registry cached 2 days ago")
            && stdout.contains("because it could not be fetched again"),
        "{stdout}"
    );
    assert_eq!(server.requests(), 2);

    // Nothing cached and no registry to be had: an error that says what to do.
    let (code, _, stderr) = agents("empty-cache");
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("cannot get the agent registry: fetching ")
            && stderr.contains("registry_file"),
        "{stderr}"
    );

    // Back up: the stale copy is replaced.
    server.up.store(true, Ordering::SeqCst);
    let (code, stdout, _) = agents("cache");
    assert_eq!(code, Some(0));
    assert!(stdout.contains("fetched now"), "{stdout}");
    let (_, stdout, _) = agents("cache");
    assert!(stdout.contains("as cached"), "{stdout}");
}
