//! The registry read from JSON of the published shape, and each kind of launch.

use std::path::{Path, PathBuf};

use super::*;
use crate::config::test_support::TempDir;

/// Entries copied in shape from the published registry (versions and URLs as they were).
const REGISTRY: &str = r#"{
  "version": "1.0.0",
  "agents": [
    {
      "id": "gemini",
      "name": "Gemini CLI",
      "version": "0.27.3",
      "description": "Google's official CLI for Gemini",
      "repository": "https://github.com/google-gemini/gemini-cli",
      "authors": ["Google"],
      "license": "Apache-2.0",
      "distribution": {
        "npx": { "package": "@google/gemini-cli@0.27.3", "args": ["--experimental-acp"] }
      }
    },
    {
      "id": "claude-code-acp",
      "name": "Claude Code",
      "version": "0.16.0",
      "description": "ACP wrapper for Anthropic's Claude",
      "distribution": { "npx": { "package": "@zed-industries/claude-code-acp" } }
    },
    {
      "id": "pyagent",
      "name": "PyAgent",
      "version": "2.1.0",
      "description": "A Python-based ACP agent",
      "distribution": {
        "uvx": { "package": "pyagent", "args": ["--mode", "acp"], "env": { "PYAGENT_MODE": "acp" } }
      }
    },
    {
      "id": "codex-acp",
      "name": "Codex CLI",
      "version": "0.9.2",
      "description": "ACP adapter for OpenAI's coding assistant",
      "icon": "https://cdn.agentclientprotocol.com/registry/v1/latest/codex-acp.svg",
      "distribution": {
        "binary": {
          "linux-x86_64": {
            "archive": "https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-x86_64-unknown-linux-gnu.tar.gz",
            "cmd": "./codex-acp"
          },
          "darwin-aarch64": {
            "archive": "https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-aarch64-apple-darwin.tar.gz",
            "cmd": "./codex-acp"
          },
          "windows-x86_64": {
            "archive": "https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-x86_64-pc-windows-msvc.zip",
            "cmd": "./codex-acp.exe"
          }
        }
      }
    },
    { "id": "broken", "name": "No distribution", "version": "1.0.0", "description": "x" },
    { "id": "empty", "name": "Empty", "version": "1.0.0", "description": "x", "distribution": {} }
  ],
  "extensions": []
}"#;

fn registry() -> Registry {
    Registry::parse(REGISTRY, Origin::File(PathBuf::from("/r.json"))).unwrap()
}

#[test]
fn the_published_shape_is_read_and_bad_entries_are_left_out_by_name() {
    let registry = registry();
    assert_eq!(registry.version, "1.0.0");
    let ids: Vec<&str> = registry.agents.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["gemini", "claude-code-acp", "pyagent", "codex-acp"]);
    assert_eq!(registry.unreadable.len(), 2, "{:?}", registry.unreadable);
    assert!(
        registry.unreadable[0].starts_with("agents[4] (\"broken\"): missing field `distribution`"),
        "{:?}",
        registry.unreadable
    );
    assert_eq!(
        registry.unreadable[1],
        "agents[5] (\"empty\"): its `distribution` is empty"
    );
}

#[test]
fn documents_that_are_not_registries_are_refused() {
    let origin = || Origin::File(PathBuf::from("/r.json"));
    assert!(
        Registry::parse("[]", origin())
            .unwrap_err()
            .to_string()
            .contains("JSON object")
    );
    assert!(
        Registry::parse("{}", origin())
            .unwrap_err()
            .to_string()
            .contains("no `agents` array")
    );
    assert!(
        Registry::parse("{", origin())
            .unwrap_err()
            .to_string()
            .starts_with("not JSON")
    );
}

#[test]
fn npx_agents_run_with_npx_yes_and_keep_a_version_the_package_names() {
    let registry = registry();
    let gemini = registry.agent("gemini").unwrap();
    let launch = gemini.launch("linux-x86_64", None).unwrap();
    assert_eq!(
        launch,
        AgentLaunch {
            kind: Kind::Npx,
            program: "npx".to_owned(),
            args: vec![
                "-y".to_owned(),
                "@google/gemini-cli@0.27.3".to_owned(),
                "--experimental-acp".to_owned()
            ],
            env: Vec::new(),
            cwd: None,
        }
    );
    let claude = registry.agent("claude-code-acp").unwrap();
    assert_eq!(
        claude.launch("linux-x86_64", None).unwrap().args,
        ["-y", "@zed-industries/claude-code-acp@0.16.0"]
    );
}

#[test]
fn uvx_agents_are_pinned_to_the_registry_version_with_their_env() {
    let registry = registry();
    let launch = registry
        .agent("pyagent")
        .unwrap()
        .launch("darwin-aarch64", None)
        .unwrap();
    assert_eq!(launch.kind, Kind::Uvx);
    assert_eq!(launch.program, "uvx");
    assert_eq!(launch.args, ["pyagent@2.1.0", "--mode", "acp"]);
    assert_eq!(launch.env, [("PYAGENT_MODE".to_owned(), "acp".to_owned())]);
}

#[test]
fn a_binary_not_unpacked_yet_says_where_to_get_it_and_where_to_put_it() {
    let temp = TempDir::new("registry-binary-missing");
    let registry = registry();
    let codex = registry.agent("codex-acp").unwrap();
    let error = codex
        .launch("linux-x86_64", Some(temp.path()))
        .unwrap_err()
        .to_string();
    let dir = temp.path().join("codex-acp/0.9.2");
    assert!(error.contains("does not download"), "{error}");
    assert!(error.contains("no checksum"), "{error}");
    assert!(
        error.contains("https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-x86_64-unknown-linux-gnu.tar.gz"),
        "{error}"
    );
    assert!(
        error.contains(&format!("{} is there", dir.join("codex-acp").display())),
        "{error}"
    );
    assert!(
        error.contains(&format!("tar -xz -C {}", dir.display())),
        "{error}"
    );
    let zip = codex
        .launch("windows-x86_64", Some(temp.path()))
        .unwrap_err()
        .to_string();
    assert!(zip.contains("unzip"), "{zip}");
}

#[test]
fn a_binary_for_another_platform_only_names_the_platforms_there_are() {
    let registry = registry();
    let error = registry
        .agent("codex-acp")
        .unwrap()
        .launch("linux-aarch64", Some(Path::new("/nowhere")))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no build for this machine (linux-aarch64)")
            && error.contains("darwin-aarch64, linux-x86_64, windows-x86_64"),
        "{error}"
    );
}

#[test]
fn an_unpacked_binary_runs_from_its_install_directory() {
    let temp = TempDir::new("registry-binary-installed");
    let program = temp.file("codex-acp/0.9.2/codex-acp", 0o755);
    let registry = registry();
    let launch = registry
        .agent("codex-acp")
        .unwrap()
        .launch("linux-x86_64", Some(temp.path()))
        .unwrap();
    assert_eq!(launch.kind, Kind::Binary);
    assert_eq!(launch.program, program.display().to_string());
    assert_eq!(launch.cwd, None);
}

#[test]
fn a_binary_whose_cmd_is_a_program_on_path_runs_in_its_install_directory() {
    let temp = TempDir::new("registry-binary-node");
    let dir = temp.dir("jsagent/1.0.0");
    let text = r#"{"version":"1.0.0","agents":[{"id":"jsagent","name":"JS","version":"1.0.0",
        "description":"x","distribution":{"binary":{"linux-x86_64":{
        "archive":"https://example.invalid/a.tar.gz","cmd":"node","args":["dist/index.js"]}}}}]}"#;
    let registry = Registry::parse(text, Origin::File(PathBuf::from("/r.json"))).unwrap();
    let launch = registry.agents[0]
        .launch("linux-x86_64", Some(temp.path()))
        .unwrap();
    assert_eq!(launch.program, "node");
    assert_eq!(launch.args, ["dist/index.js"]);
    assert_eq!(launch.cwd, Some(dir));
}

#[test]
fn an_installed_binary_wins_over_a_package_runner() {
    let temp = TempDir::new("registry-binary-first");
    let text = r#"{"version":"1.0.0","agents":[{"id":"both","name":"Both","version":"3.0.0",
        "description":"x","distribution":{
        "npx":{"package":"both-agent"},
        "binary":{"linux-x86_64":{"archive":"https://example.invalid/b.tar.gz","cmd":"./both"}}}}]}"#;
    let registry = Registry::parse(text, Origin::File(PathBuf::from("/r.json"))).unwrap();
    let agent = &registry.agents[0];
    assert_eq!(
        agent
            .launch("linux-x86_64", Some(temp.path()))
            .unwrap()
            .kind,
        Kind::Npx
    );
    temp.file("both/3.0.0/both", 0o755);
    assert_eq!(
        agent
            .launch("linux-x86_64", Some(temp.path()))
            .unwrap()
            .kind,
        Kind::Binary
    );
}

#[test]
fn unknown_ids_suggest_close_and_containing_ids() {
    let registry = registry();
    let message = registry.unknown_id_message("gemni");
    assert_eq!(
        message,
        "agent `gemni` is not in registry file /r.json; did you mean `gemini`? \
         (`acp-conductor agents` lists them)"
    );
    assert!(
        registry
            .unknown_id_message("codex")
            .contains("did you mean `codex-acp`?"),
        "{}",
        registry.unknown_id_message("codex")
    );
    assert!(
        !registry
            .unknown_id_message("zzzzzz")
            .contains("did you mean"),
        "{}",
        registry.unknown_id_message("zzzzzz")
    );
}

#[test]
fn the_table_lists_every_agent_with_its_distributions() {
    let temp = TempDir::new("registry-table");
    let text = table(&registry(), "linux-x86_64", Some(temp.path()));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "4 agents in registry file /r.json");
    assert_eq!(
        lines[2],
        "ID               NAME         VERSION  DISTRIBUTION"
    );
    assert_eq!(lines[3], "claude-code-acp  Claude Code  0.16.0   npx");
    assert_eq!(lines[4], "codex-acp        Codex CLI    0.9.2    binary");
    assert_eq!(lines[5], "gemini           Gemini CLI   0.27.3   npx");
    assert_eq!(lines[6], "pyagent          PyAgent      2.1.0    uvx");
    assert!(
        text.contains("left out, unreadable: agents[4] (\"broken\")"),
        "{text}"
    );
    assert!(text.contains("registry = \"<id>\""), "{text}");
    temp.file("codex-acp/0.9.2/codex-acp", 0o755);
    let installed = table(&registry(), "linux-x86_64", Some(temp.path()));
    assert!(
        installed.contains("codex-acp        Codex CLI    0.9.2    binary (installed)"),
        "{installed}"
    );
    let elsewhere = table(&registry(), "linux-aarch64", None);
    assert!(
        elsewhere.contains("binary (not for linux-aarch64)"),
        "{elsewhere}"
    );
}

#[test]
fn ages_are_said_in_a_unit_people_use() {
    use std::time::Duration;
    assert_eq!(super::age_text(Duration::from_secs(59)), "59 s");
    assert_eq!(super::age_text(Duration::from_secs(150)), "2 min");
    assert_eq!(super::age_text(Duration::from_secs(5 * 3600 + 7)), "5 h");
    assert_eq!(
        super::age_text(Duration::from_secs(2 * 86_400 + 5)),
        "2 days"
    );
}
