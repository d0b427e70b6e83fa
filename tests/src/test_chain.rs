//! One test's chain: a fresh directory, the `conductor.toml` written into it, the fixtures'
//! recordings and pid files kept there. Knows the config format and the fixtures' options;
//! knows nothing of the messages exchanged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::binaries::Binaries;
use crate::editor::Editor;

/// A `[[proxy]]` entry.
#[derive(Debug, Clone)]
pub struct ProxyEntry {
    pub name: String,
    pub command: PathBuf,
    /// `url = ...` instead of `command` and `args`: a proxy served elsewhere.
    pub url: Option<String>,
    pub args: Vec<String>,
    pub protocol: Option<String>,
    pub enabled: Option<bool>,
    /// Other keys with their values as TOML text, in order.
    pub settings: Vec<(String, String)>,
}

impl ProxyEntry {
    /// Pins `protocol = "..."` in the config.
    pub fn protocol(&mut self, protocol: &str) -> &mut Self {
        self.protocol = Some(protocol.to_string());
        self
    }

    /// Adds arguments to the proxy's command line.
    pub fn args(&mut self, args: &[&str]) -> &mut Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn enabled(&mut self, enabled: bool) -> &mut Self {
        self.enabled = Some(enabled);
        self
    }

    /// Sets another key, its value given as TOML text (`"\"bypass\""`, `"true"`).
    pub fn setting(&mut self, key: &str, value: &str) -> &mut Self {
        self.settings.push((key.to_string(), value.to_string()));
        self
    }
}

/// The `[agent]` table.
#[derive(Debug, Clone)]
pub struct AgentEntry {
    pub command: PathBuf,
    pub args: Vec<String>,
    /// Other keys with their values as TOML text, in order.
    pub settings: Vec<(String, String)>,
}

/// A test's chain configuration and the directory it lives in.
pub struct TestChain {
    pub dir: PathBuf,
    pub binaries: Binaries,
    pub proxies: Vec<ProxyEntry>,
    pub agent: Option<AgentEntry>,
    /// `[agent] builtin = "..."` instead of an agent command (`agent` is then `None`).
    pub builtin_agent: Option<String>,
    /// An `[agent]` reached at a URL instead of started (`agent` is then `None`): its keys
    /// with their values as TOML text, in order.
    pub remote_agent: Option<Vec<(String, String)>>,
    /// `[conductor]` keys with their values as TOML text.
    pub conductor: Vec<(String, String)>,
}

/// The name under which the test-agent's files are kept.
pub const AGENT: &str = "agent";

impl TestChain {
    /// A chain with the test-agent (recording, pid file) and no proxy yet, in a fresh
    /// directory named after `label`.
    pub fn new(binaries: &Binaries, label: &str) -> Self {
        let dir = fresh_dir(label);
        let agent = AgentEntry {
            command: binaries.agent.clone(),
            args: fixture_args(&dir, AGENT),
            settings: Vec::new(),
        };
        Self {
            dir,
            binaries: binaries.clone(),
            proxies: Vec::new(),
            agent: Some(agent),
            builtin_agent: None,
            remote_agent: None,
            conductor: Vec::new(),
        }
    }

    /// Sets another `[agent]` key, its value given as TOML text.
    pub fn agent_setting(&mut self, key: &str, value: &str) -> &mut Self {
        let agent = self.agent.as_mut().expect("a chain with a command agent");
        agent.settings.push((key.to_string(), value.to_string()));
        self
    }

    /// A chain with the conductor's built-in demo agent (`[agent] builtin = "demo"`) and no
    /// proxy yet, in a fresh directory named after `label`.
    pub fn with_demo_agent(binaries: &Binaries, label: &str) -> Self {
        let mut chain = Self::new(binaries, label);
        chain.agent = None;
        chain.builtin_agent = Some("demo".to_string());
        chain
    }

    /// Replaces the agent with one reached at `url` (`[agent] url = ...`), named `remote`,
    /// with more `[agent]` keys (values as TOML text).
    pub fn use_remote_agent(&mut self, url: &str, settings: &[(&str, &str)]) -> &mut Self {
        self.agent = None;
        let mut keys = vec![
            ("name".to_string(), toml_string("remote")),
            ("url".to_string(), toml_string(url)),
        ];
        keys.extend(settings.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self.remote_agent = Some(keys);
        self
    }

    /// A chain of `count` test-proxies named `p1`..`pN` in front of the test-agent.
    pub fn with_test_proxies(binaries: &Binaries, label: &str, count: usize) -> Self {
        let mut chain = Self::new(binaries, label);
        for i in 1..=count {
            chain.add_test_proxy(&format!("p{i}"));
        }
        chain
    }

    /// Appends a test-proxy that records what it receives and its initialize response.
    pub fn add_test_proxy(&mut self, name: &str) -> &mut ProxyEntry {
        let mut args = fixture_args(&self.dir, name);
        args.extend([
            "--init-response".to_string(),
            self.file(name, "init").display().to_string(),
            "--tag".to_string(),
            name.to_string(),
        ]);
        let proxy = self.binaries.proxy.clone();
        self.add_proxy(name, &proxy, &args)
    }

    /// Appends any program as a proxy.
    pub fn add_proxy<S: AsRef<str>>(
        &mut self,
        name: &str,
        command: &Path,
        args: &[S],
    ) -> &mut ProxyEntry {
        self.proxies.push(ProxyEntry {
            name: name.to_string(),
            command: command.to_path_buf(),
            url: None,
            args: args.iter().map(|a| a.as_ref().to_string()).collect(),
            protocol: None,
            enabled: None,
            settings: Vec::new(),
        });
        self.proxies.last_mut().expect("just pushed")
    }

    /// Appends a proxy served elsewhere, reached at `url`.
    pub fn add_remote_proxy(&mut self, name: &str, url: &str) -> &mut ProxyEntry {
        let entry = self.add_proxy::<&str>(name, Path::new(""), &[]);
        entry.url = Some(url.to_string());
        entry
    }

    /// Adds arguments to the test-agent's command line.
    pub fn agent_args(&mut self, args: &[&str]) -> &mut Self {
        let agent = self.agent.as_mut().expect("the chain has an agent");
        agent.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Leaves out the `[agent]` table (a conductor in proxy mode has no agent).
    pub fn without_agent(&mut self) -> &mut Self {
        self.agent = None;
        self
    }

    /// Sets a `[conductor]` key; `value` is TOML text (`"\"proxy\""`, `"5"`).
    pub fn conductor_setting(&mut self, key: &str, value: &str) -> &mut Self {
        self.conductor.push((key.to_string(), value.to_string()));
        self
    }

    /// A file of this chain's directory for component `name`: `<dir>/<name>.<kind>`.
    pub fn file(&self, name: &str, kind: &str) -> PathBuf {
        self.dir.join(format!("{name}.{kind}"))
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.join("conductor.toml")
    }

    /// The configuration as TOML.
    pub fn config_text(&self) -> String {
        let mut text = String::new();
        if !self.conductor.is_empty() {
            text.push_str("[conductor]\n");
            for (key, value) in &self.conductor {
                text.push_str(&format!("{key} = {value}\n"));
            }
            text.push('\n');
        }
        if let Some(agent) = &self.agent {
            text.push_str("[agent]\n");
            text.push_str(&format!(
                "command = {}\n",
                toml_string(&agent.command.display().to_string())
            ));
            text.push_str(&format!("args = {}\n", toml_array(&agent.args)));
            for (key, value) in &agent.settings {
                text.push_str(&format!("{key} = {value}\n"));
            }
            text.push('\n');
        }
        if let Some(keys) = &self.remote_agent {
            text.push_str("[agent]\n");
            for (key, value) in keys {
                text.push_str(&format!("{key} = {value}\n"));
            }
            text.push('\n');
        }
        if let Some(builtin) = &self.builtin_agent {
            text.push_str(&format!("[agent]\nbuiltin = {}\n\n", toml_string(builtin)));
        }
        for proxy in &self.proxies {
            text.push_str("[[proxy]]\n");
            text.push_str(&format!("name = {}\n", toml_string(&proxy.name)));
            if let Some(url) = &proxy.url {
                text.push_str(&format!("url = {}\n", toml_string(url)));
            } else {
                text.push_str(&format!(
                    "command = {}\n",
                    toml_string(&proxy.command.display().to_string())
                ));
                text.push_str(&format!("args = {}\n", toml_array(&proxy.args)));
            }
            if let Some(protocol) = &proxy.protocol {
                text.push_str(&format!("protocol = {}\n", toml_string(protocol)));
            }
            if let Some(enabled) = proxy.enabled {
                text.push_str(&format!("enabled = {enabled}\n"));
            }
            for (key, value) in &proxy.settings {
                text.push_str(&format!("{key} = {value}\n"));
            }
            text.push('\n');
        }
        text
    }

    /// Writes `conductor.toml` and returns its path.
    pub fn write_config(&self) -> PathBuf {
        let path = self.config_path();
        std::fs::write(&path, self.config_text()).expect("write conductor.toml");
        path
    }

    /// Writes the config and starts `acp-conductor run --config <it>` as the editor would.
    pub fn launch(&self) -> Editor {
        self.launch_with(&[])
    }

    /// Like [`TestChain::launch`] with more arguments after `run` (e.g. `--proxy`).
    pub fn launch_with(&self, extra: &[&str]) -> Editor {
        let config = self.write_config();
        let mut args = vec![
            "run".to_string(),
            "--config".to_string(),
            config.display().to_string(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        Editor::launch(
            &self.binaries.conductor,
            &args,
            &[("ACP_CONDUCTOR_LOG", "debug")],
        )
    }

    /// The lines component `name` recorded, in the order it received them. A last line
    /// without its newline is still being written, and is left for a later read.
    pub fn recording(&self, name: &str) -> Vec<String> {
        let path = self.file(name, "record");
        match std::fs::read_to_string(&path) {
            Ok(text) => text
                .split_inclusive('\n')
                .filter_map(|line| line.strip_suffix('\n'))
                .map(|line| line.strip_suffix('\r').unwrap_or(line).to_string())
                .collect(),
            Err(e) => panic!("no recording {}: {e}", path.display()),
        }
    }

    /// The recorded lines parsed.
    pub fn received(&self, name: &str) -> Vec<Value> {
        self.recording(name)
            .iter()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!("{name} received a line that is not JSON ({e}): {line}")
                })
            })
            .collect()
    }

    /// Whether component `name` received a prompt whose text contains `text` (plain, or
    /// wrapped in `proxy/successor` for a proxy's successor); none did when no instance of
    /// it has started yet.
    pub fn saw_prompt(&self, name: &str, text: &str) -> bool {
        if !self.file(name, "record").exists() {
            return false;
        }
        self.received(name).iter().any(|m| {
            let params = if m["method"] == "proxy/successor" {
                &m["params"]["params"]
            } else {
                &m["params"]
            };
            params["prompt"].to_string().contains(text)
        })
    }

    /// The response test-proxy `name` got from its successor for `initialize`.
    pub fn init_response(&self, name: &str) -> Value {
        let path = self.file(name, "init");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("no initialize response recorded at {}: {e}", path.display())
        });
        serde_json::from_str(&text).expect("the recorded response is JSON")
    }

    /// The pid of fixture `name`, from its pid file (waiting a little for the file, which
    /// the fixture writes as soon as it starts).
    pub fn pid(&self, name: &str) -> u32 {
        let path = self.file(name, "pid");
        let deadline = Instant::now() + crate::editor::patience();
        loop {
            if let Some(pid) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                return pid;
            }
            assert!(
                Instant::now() < deadline,
                "{name} never wrote {}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether fixture `name` saw EOF on its stdin (rather than being killed first).
    pub fn saw_stdin_eof(&self, name: &str) -> bool {
        self.file(name, "eof").exists()
    }

    /// The pids of the test-agent and every test-proxy of this chain.
    pub fn fixture_pids(&self) -> Vec<u32> {
        self.fixture_names()
            .into_iter()
            .map(|name| self.pid(name))
            .collect()
    }

    /// The names of the test-agent and every test-proxy of this chain.
    pub fn fixture_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .proxies
            .iter()
            .filter(|p| p.command == self.binaries.proxy)
            .map(|p| p.name.as_str())
            .collect();
        if self
            .agent
            .as_ref()
            .is_some_and(|a| a.command == self.binaries.agent)
        {
            names.push(AGENT);
        }
        names
    }
}

impl Drop for TestChain {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept the failed test's files in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A new, empty directory unique to this process and call.
pub fn fresh_dir(label: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("acp-e2e-{label}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test directory");
    dir
}

/// `--record`, `--pid-file`, `--eof-file` for fixture `name` in `dir`.
fn fixture_args(dir: &Path, name: &str) -> Vec<String> {
    vec![
        "--record".to_string(),
        dir.join(format!("{name}.record")).display().to_string(),
        "--pid-file".to_string(),
        dir.join(format!("{name}.pid")).display().to_string(),
        "--eof-file".to_string(),
        dir.join(format!("{name}.eof")).display().to_string(),
    ]
}

/// A TOML basic string.
pub fn toml_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

pub fn toml_array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| toml_string(item)).collect();
    format!("[{}]", items.join(", "))
}
