//! `[agent] registry = "<id>"` and `registry_file`, through `inspect` (which `load_with` is
//! plus observations), and the observations themselves. No test reaches the network: each
//! registry is a file the test writes.

use std::path::{Path, PathBuf};

use super::test_support::TempDir;
use super::*;

const REGISTRY: &str = r#"{
  "version": "1.0.0",
  "agents": [
    { "id": "gemini", "name": "Gemini CLI", "version": "0.27.3", "description": "x",
      "distribution": { "npx": { "package": "@google/gemini-cli@0.27.3",
                                 "args": ["--experimental-acp"], "env": { "FROM_REGISTRY": "1" } } } },
    { "id": "pyagent", "name": "PyAgent", "version": "2.1.0", "description": "x",
      "distribution": { "uvx": { "package": "pyagent" } } },
    { "id": "local", "name": "Local", "version": "1.0.0", "description": "x",
      "distribution": { "binary": {
        "linux-x86_64": { "archive": "https://example.invalid/l.tar.gz", "cmd": "./local-agent", "args": ["acp"] },
        "linux-aarch64": { "archive": "https://example.invalid/l.tar.gz", "cmd": "./local-agent", "args": ["acp"] },
        "darwin-x86_64": { "archive": "https://example.invalid/l.tar.gz", "cmd": "./local-agent", "args": ["acp"] },
        "darwin-aarch64": { "archive": "https://example.invalid/l.tar.gz", "cmd": "./local-agent", "args": ["acp"] }
      } } }
  ],
  "extensions": []
}"#;

/// A machine with `npx` on `PATH` (no `uvx`), a registry file next to the config, and a data
/// directory for unpacked binaries.
struct Machine {
    temp: TempDir,
}

impl Machine {
    fn new(label: &str) -> Self {
        let temp = TempDir::new(label);
        temp.file("bin/npx", 0o755);
        temp.write("conf/registry.json", REGISTRY);
        temp.dir("data");
        Self { temp }
    }

    fn var(&self, name: &str) -> Option<String> {
        match name {
            "PATH" => Some(self.temp.path().join("bin").display().to_string()),
            "XDG_DATA_HOME" => Some(self.temp.path().join("data").display().to_string()),
            _ => None,
        }
    }

    fn inspect(&self, text: &str) -> (Result<Config, ConfigErrors>, Observations) {
        let file = self.temp.write("conf/conductor.toml", text);
        inspect(&file, &|name| self.var(name), None)
    }

    fn agent(&self, text: &str) -> CommandSpec {
        match self.inspect(text).0 {
            Ok(Config {
                agent: Some(AgentSpec::Command(spec)),
                ..
            }) => spec,
            other => panic!("expected a command agent, got {other:?}"),
        }
    }

    fn errors(&self, text: &str) -> Vec<String> {
        match self.inspect(text).0 {
            Ok(config) => panic!("expected errors, got {config:#?}"),
            Err(ConfigErrors(errors)) => errors
                .iter()
                .map(|error| format!("{}:{}: {}", error.line, error.column, error.message))
                .collect(),
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.temp.path().join(relative)
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

#[test]
fn an_npx_agent_runs_npx_from_path_with_the_registry_and_file_arguments() {
    let machine = Machine::new("registry-npx");
    let spec = machine.agent(
        "[agent]\nregistry = \"gemini\"\nregistry_file = \"registry.json\"\nargs = [\"--debug\"]\n\
         env = { KEY = \"v\" }\n",
    );
    assert_eq!(
        spec,
        CommandSpec {
            name: "gemini".to_owned(),
            program: machine.path("bin/npx"),
            args: strings(&[
                "-y",
                "@google/gemini-cli@0.27.3",
                "--experimental-acp",
                "--debug"
            ]),
            env: vec![
                ("FROM_REGISTRY".to_owned(), "1".to_owned()),
                ("KEY".to_owned(), "v".to_owned())
            ],
            cwd: None,
        }
    );
}

#[test]
fn the_agent_keeps_a_name_the_file_gives_it() {
    let machine = Machine::new("registry-name");
    let spec = machine
        .agent("[agent]\nname = \"g\"\nregistry = \"gemini\"\nregistry_file = \"registry.json\"\n");
    assert_eq!(spec.name, "g");
}

#[test]
fn a_uvx_agent_without_uvx_on_path_says_what_provides_it() {
    let machine = Machine::new("registry-uvx");
    let errors =
        machine.errors("[agent]\nregistry = \"pyagent\"\nregistry_file = \"registry.json\"\n");
    assert_eq!(
        errors,
        [
            "2:12: command `uvx` not found on PATH: registry agent `pyagent` runs with `uvx` (uvx \
          comes with uv, the Python package manager)"
        ]
    );
    machine.temp.file("bin/uvx", 0o755);
    let spec =
        machine.agent("[agent]\nregistry = \"pyagent\"\nregistry_file = \"registry.json\"\n");
    assert_eq!(spec.program, machine.path("bin/uvx"));
    assert_eq!(spec.args, ["pyagent@2.1.0"]);
}

#[test]
fn a_binary_agent_runs_once_unpacked_in_the_data_directory() {
    let machine = Machine::new("registry-binary");
    let text = "[agent]\nregistry = \"local\"\nregistry_file = \"registry.json\"\n";
    let errors = machine.errors(text);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("2:12: agent `local` (Local 1.0.0) comes as a binary archive"),
        "{errors:?}"
    );
    let program = machine
        .temp
        .file("data/acp-conductor/agents/local/1.0.0/local-agent", 0o755);
    let spec = machine.agent(text);
    assert_eq!(spec.program, program);
    assert_eq!(spec.args, ["acp"]);
    assert_eq!(spec.name, "local");
}

#[test]
fn unknown_ids_are_reported_at_the_value_with_close_matches() {
    let machine = Machine::new("registry-unknown");
    let errors =
        machine.errors("[agent]\nregistry = \"gemni\"\nregistry_file = \"registry.json\"\n");
    assert_eq!(
        errors,
        [format!(
            "2:12: agent `gemni` is not in registry file {}; did you mean `gemini`? \
             (`acp-conductor agents` lists them)",
            machine.path("conf/registry.json").display()
        )]
    );
}

#[test]
fn command_and_registry_together_is_an_error() {
    let machine = Machine::new("registry-and-command");
    let errors = machine.errors(
        "[agent]\ncommand = \"npx\"\nregistry = \"gemini\"\nregistry_file = \"registry.json\"\n",
    );
    assert_eq!(
        errors,
        ["3:1: [agent] sets both `command` and `registry`; keep one of them"]
    );
    let errors = machine.errors("[agent]\nbuiltin = \"demo\"\nregistry = \"gemini\"\n");
    assert_eq!(
        errors,
        ["3:1: [agent] sets both `builtin` and `registry`; keep one of them"]
    );
}

#[test]
fn registry_file_alone_and_missing_registry_files_are_errors() {
    let machine = Machine::new("registry-file-errors");
    let errors = machine.errors("[agent]\ncommand = \"npx\"\nregistry_file = \"registry.json\"\n");
    assert_eq!(
        errors,
        [
            "3:1: `registry_file` only says where `registry = \"<id>\"` looks the agent up; set \
          `registry` too, or remove it"
        ]
    );
    let errors = machine.errors("[agent]\nregistry = \"gemini\"\nregistry_file = \"nope.json\"\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(&format!(
            "3:17: cannot read registry file {}",
            machine.path("conf/nope.json").display()
        )),
        "{errors:?}"
    );
    machine.temp.write("conf/bad.json", "{\"agents\": 3}");
    let errors = machine.errors("[agent]\nregistry = \"gemini\"\nregistry_file = \"bad.json\"\n");
    assert_eq!(
        errors,
        [format!(
            "3:17: registry file {}: not a registry: it has no `agents` array",
            machine.path("conf/bad.json").display()
        )]
    );
}

#[test]
fn observations_record_lookups_variables_and_the_registry_agent() {
    let machine = Machine::new("registry-observed");
    let (loaded, notes) = machine.inspect(
        "[agent]\nregistry = \"gemini\"\nregistry_file = \"registry.json\"\n\
         env = { A = \"${UNSET_ONE}\", B = \"${UNSET_TWO:-x}\" }\n\
         [[proxy]]\nname = \"p\"\ncommand = \"nowhere\"\n",
    );
    assert!(loaded.is_err());
    assert_eq!(
        notes.programs,
        [
            ProgramLookup {
                component: Some("gemini".to_owned()),
                command: "npx".to_owned(),
                line: 2,
                column: 12,
                found: Some(machine.path("bin/npx")),
            },
            ProgramLookup {
                component: Some("p".to_owned()),
                command: "nowhere".to_owned(),
                line: 7,
                column: 11,
                found: None,
            }
        ]
    );
    let variables: Vec<(&str, bool, bool, usize)> = notes
        .variables
        .iter()
        .map(|v| (v.name.as_str(), v.has_default, v.set, v.line))
        .collect();
    assert_eq!(
        variables,
        [
            ("UNSET_ONE", false, false, 4),
            ("UNSET_TWO", true, false, 4)
        ]
    );
    // The agent itself is valid (the errors are elsewhere), so its registry entry is known.
    let registry = notes.registry.expect("the registry agent");
    assert_eq!(
        (
            registry.id.as_str(),
            registry.kind,
            registry.version.as_str()
        ),
        ("gemini", "npx", "0.27.3")
    );
    assert!(
        registry.source.starts_with("registry file "),
        "{}",
        registry.source
    );
}

#[test]
fn disabled_proxies_record_nothing() {
    let machine = Machine::new("registry-disabled");
    let (_, notes) = machine.inspect(
        "[agent]\ncommand = \"npx\"\n[[proxy]]\nname = \"p\"\ncommand = \"${NOPE}\"\nenabled = false\n",
    );
    assert_eq!(notes.programs.len(), 1);
    assert!(notes.variables.is_empty(), "{:?}", notes.variables);
    assert!(notes.registry.is_none());
    let _: &Path = machine.temp.path();
}
