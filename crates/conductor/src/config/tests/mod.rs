//! Whole-file tests of `conductor.toml` validation: values, defaults and error locations.
//! Must not know the validator's internals: everything goes through `parse_str`/`load_with`.

use std::collections::HashMap;
use std::path::PathBuf;

use super::test_support::TempDir;
use super::*;

mod chain;
mod errors;
mod failure;
mod interpolation;
mod paths;
mod trace;
mod values;

/// A config directory, a directory standing for the conductor's own, and one on `PATH`.
struct Machine {
    temp: TempDir,
    vars: HashMap<String, String>,
}

impl Machine {
    fn new(label: &str) -> Self {
        let temp = TempDir::new(label);
        temp.dir("conf");
        temp.file("exe/context-proxy", 0o755);
        temp.demo_agent("exe");
        temp.file("bin/npx", 0o755);
        temp.file("bin/guard", 0o755);
        let mut vars = HashMap::new();
        vars.insert(
            "PATH".to_owned(),
            temp.path().join("bin").display().to_string(),
        );
        vars.insert("API_KEY".to_owned(), "secret".to_owned());
        vars.insert("EMPTY".to_owned(), String::new());
        Self { temp, vars }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.temp.path().join(relative)
    }

    fn config_file(&self) -> PathBuf {
        self.path("conf/conductor.toml")
    }

    fn exe_dir(&self) -> PathBuf {
        self.path("exe")
    }

    fn parse(&self, text: &str) -> Result<Config, ConfigErrors> {
        let lookup = |name: &str| self.vars.get(name).cloned();
        parse_str(text, &self.config_file(), &lookup, Some(&self.exe_dir()))
    }

    fn valid(&self, text: &str) -> Config {
        match self.parse(text) {
            Ok(config) => config,
            Err(errors) => panic!("expected a valid config, got:\n{errors}"),
        }
    }

    /// The errors as `line:column: message`, without the file name.
    fn errors(&self, text: &str) -> Vec<String> {
        match self.parse(text) {
            Ok(config) => panic!("expected errors, got {config:#?}"),
            Err(ConfigErrors(errors)) => errors
                .iter()
                .map(|error| {
                    assert_eq!(error.file, self.config_file());
                    format!("{}:{}: {}", error.line, error.column, error.message)
                })
                .collect(),
        }
    }
}

const DEMO_AGENT: &str = "[agent]\nbuiltin = \"demo\"\n";

/// The child process of a `command` proxy.
fn native(proxy: &ProxySpec) -> &CommandSpec {
    match &proxy.launch {
        ProxyLaunch::Native(command) => command,
        other => panic!("expected a command proxy, got {other:?}"),
    }
}
