//! WASM builds of the proxies for the e2e tests, and chains that run them: the builds come from
//! a nested cargo into `target/wasm-fixtures`, compiled once per test run. Knows cargo and the
//! config's `wasm` keys; knows nothing of the messages exchanged.
//!
//! The nested cargo uses its own target directory so it never waits on the lock of the
//! `cargo test` that runs us; a file lock makes parallel test binaries build once. Compiled
//! machine code is cached for every test in one shared `cache_dir`, warmed before the first
//! test runs, because a debug conductor compiles a large module for tens of seconds.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::binaries::{Binaries, workspace_root};
use crate::editor::Editor;
use crate::test_chain::{TestChain, toml_array, toml_string};

/// The two WASI targets a proxy builds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmTarget {
    /// `wasm32-wasip1`: a core module.
    P1,
    /// `wasm32-wasip2`: a component.
    P2,
}

impl WasmTarget {
    pub const ALL: [WasmTarget; 2] = [WasmTarget::P1, WasmTarget::P2];

    pub fn triple(self) -> &'static str {
        match self {
            WasmTarget::P1 => "wasm32-wasip1",
            WasmTarget::P2 => "wasm32-wasip2",
        }
    }
}

/// The packages built for both targets, and their binaries.
const PACKAGES: [&str; 4] = [
    "wasm-fixtures",
    "context-proxy",
    "tool-guard",
    "notes-proxy",
];
pub const PROBE: &str = "wasm-probe";
pub const SOCKET: &str = "wasm-socket";
pub const NET: &str = "wasm-net";
pub const UNPROVIDED: &str = "wasm-unprovided";
pub const CONTEXT: &str = "acp-context-proxy";
pub const GUARD: &str = "acp-tool-guard";
pub const NOTES: &str = "acp-notes-proxy";
const BINARIES: [&str; 7] = [PROBE, SOCKET, NET, UNPROVIDED, CONTEXT, GUARD, NOTES];

/// How long the first build and warm-up may take on a cold machine.
const BUILD_PATIENCE: Duration = Duration::from_secs(900);

/// `target/wasm-fixtures`.
fn fixtures_dir() -> PathBuf {
    workspace_root().join("target").join("wasm-fixtures")
}

/// The cache directory every test shares unless it needs a cache of its own.
pub fn shared_cache_dir() -> PathBuf {
    fixtures_dir().join("compile-cache")
}

/// The `.wasm` file of `binary` built for `target`, building (and warming the shared
/// compile cache) on first use in this process.
pub fn artifact(binaries: &Binaries, binary: &str, target: WasmTarget) -> PathBuf {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| build_and_warm(binaries));
    artifact_path(binary, target)
}

/// The native build of `binary` made by the same cargo resolution as the WASM ones (same
/// packages, so the same dependency features: the workspace's own build of a proxy may differ,
/// e.g. in the order of JSON object members, because other members enable more features).
pub fn native_artifact(binaries: &Binaries, binary: &str) -> PathBuf {
    let _ = artifact(binaries, binary, WasmTarget::P1);
    fixtures_dir().join("release").join(binary)
}

fn artifact_path(binary: &str, target: WasmTarget) -> PathBuf {
    fixtures_dir()
        .join(target.triple())
        .join("release")
        .join(format!("{binary}.wasm"))
}

fn build_and_warm(binaries: &Binaries) {
    let dir = fixtures_dir();
    std::fs::create_dir_all(&dir).expect("create target/wasm-fixtures");
    let lock = File::create(dir.join("build.lock")).expect("create the build lock");
    lock.lock().expect("lock target/wasm-fixtures");
    // The WASM targets, then the host with exactly the same packages.
    for targets in [&WasmTarget::ALL.map(WasmTarget::triple)[..], &[]] {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .current_dir(workspace_root())
            .args(["build", "--release", "--target-dir"])
            .arg(&dir)
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            // The tests need the fixtures' behaviour, not the release profile's LTO: this
            // keeps their build (in every test run on a cold machine) short.
            .env("CARGO_PROFILE_RELEASE_LTO", "off")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
            .stdin(Stdio::null());
        for target in targets {
            command.args(["--target", target]);
        }
        for package in PACKAGES {
            command.args(["-p", package]);
        }
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run cargo for the WASM builds: {e}"));
        assert!(
            output.status.success(),
            "building the WASM fixtures failed ({}); is the target installed \
             (`rustup target add wasm32-wasip1 wasm32-wasip2`)?\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // One conductor per build, all at once: several fixtures end their chain at once (the
    // socket fixture exits, the unprovided one is refused, the shipped proxies want
    // arguments), and a conductor whose chain ended stops compiling its other proxies.
    // The preview 1 build of `wasm-unprovided` is refused before it is compiled: nothing to warm.
    let warming: Vec<WarmUp> = WasmTarget::ALL
        .into_iter()
        .flat_map(|target| BINARIES.map(|binary| (binary, target)))
        .filter(|&(binary, target)| (binary, target) != (UNPROVIDED, WasmTarget::P1))
        .map(|(binary, target)| WarmUp::start(binaries, binary, target))
        .collect();
    for warm_up in warming {
        warm_up.wait();
    }
    drop(lock);
}

/// Compiles `components` (built elsewhere: the TypeScript and Python kits' components) into
/// the shared compile cache, all at once, waiting as long as a cold build may take: a first
/// compile of a 14-18 MB component under a debug conductor outlasts an editor's patience.
pub fn warm_components(binaries: &Binaries, components: &[(&str, PathBuf)]) {
    let warming: Vec<WarmUp> = components
        .iter()
        .map(|(label, path)| WarmUp::start_artifact(binaries, path.clone(), label))
        .collect();
    for warm_up in warming {
        warm_up.wait();
    }
}

/// A conductor with one artifact as its proxy, started to compile it into (or find it in)
/// the shared cache; the chain itself is never used.
struct WarmUp {
    artifact: PathBuf,
    conductor: Child,
}

impl WarmUp {
    fn start(binaries: &Binaries, binary: &str, target: WasmTarget) -> Self {
        let label = format!("{binary}-{}", target.triple());
        Self::start_artifact(binaries, artifact_path(binary, target), &label)
    }

    fn start_artifact(binaries: &Binaries, artifact: PathBuf, label: &str) -> Self {
        let text = format!(
            "[conductor]\ncache_dir = {}\n[agent]\nbuiltin = \"demo\"\n\
             [[proxy]]\nname = \"{label}\"\nwasm = {}\nstartup_timeout = \"{}s\"\n",
            toml_string(&shared_cache_dir().display().to_string()),
            toml_string(&artifact.display().to_string()),
            // A cold compile of a large component under a debug conductor on a busy
            // machine can outlast the default 60 s.
            BUILD_PATIENCE.as_secs()
        );
        std::fs::create_dir_all(fixtures_dir()).expect("create target/wasm-fixtures");
        let config = fixtures_dir().join(format!("warm-{label}.toml"));
        std::fs::write(&config, text).expect("write the warm-up config");
        let conductor = Command::new(&binaries.conductor)
            .args(["run", "--config"])
            .arg(&config)
            .env("ACP_CONDUCTOR_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the conductor to warm the compile cache");
        Self {
            artifact,
            conductor,
        }
    }

    /// Waits until the artifact was loaded, then ends the conductor.
    fn wait(mut self) {
        let stderr = self.conductor.stderr.take().expect("piped stderr");
        let deadline = Instant::now() + BUILD_PATIENCE;
        let mut loaded = false;
        let mut log = String::new();
        // Read raw lines: a guest may log bytes that are not UTF-8, and stopping at such a
        // line would end the warm-up before the fixture was loaded.
        let mut reader = BufReader::new(stderr);
        let mut raw = Vec::new();
        while !loaded && Instant::now() <= deadline {
            raw.clear();
            match reader.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end();
            loaded = line.contains("compiled the WASI") || line.contains("from the compile cache");
            log.push_str(line);
            log.push('\n');
        }
        let _ = self.conductor.kill();
        let _ = self.conductor.wait();
        assert!(
            loaded,
            "the warm-up conductor did not load {}:\n{log}",
            self.artifact.display()
        );
    }
}

/// A component importing one instance named `name` with nothing in it: enough for a host to
/// refuse it by that import, and smaller than any toolchain's output.
pub fn component_importing(name: &str) -> Vec<u8> {
    let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
    // Type section: one instance type with no declarations.
    bytes.extend_from_slice(&[7, 3, 1, 0x42, 0]);
    let len = u8::try_from(name.len()).expect("a short name");
    // Import section: one import, a plain name, of an instance of type 0.
    bytes.extend_from_slice(&[10, len + 5, 1, 0, len]);
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(&[5, 0]);
    bytes
}

/// What the conductor says (`check`, `doctor` and the loader alike) of a component
/// importing `name`, which it does not provide.
pub fn unprovided_component_import(name: &str) -> String {
    format!(
        "imports `{name}`, which a WASM proxy is never given: it gets only WASI 0.2's cli, \
         clocks, filesystem, http, io, random and sockets (with the network denied)"
    )
}

/// A `[[proxy]]` entry of a [`WasmChain`].
#[derive(Debug, Clone)]
pub struct ProxyEntry {
    pub name: String,
    pub launch: Launch,
    pub args: Vec<String>,
    /// `env` values (explicit variables).
    pub env: Vec<(String, String)>,
    /// `[proxy.sandbox]` keys with their values as TOML text.
    pub sandbox: Vec<(String, String)>,
    /// Other `[[proxy]]` keys with their values as TOML text.
    pub settings: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub enum Launch {
    Command(PathBuf),
    Wasm(PathBuf),
}

impl ProxyEntry {
    pub fn args(&mut self, args: &[&str]) -> &mut Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// Sets another `[[proxy]]` key (`on_failure`, ...); `value` is TOML text.
    pub fn setting(&mut self, key: &str, value: &str) -> &mut Self {
        self.settings.push((key.to_string(), value.to_string()));
        self
    }

    /// Sets a `[proxy.sandbox]` key; `value` is TOML text.
    pub fn sandbox(&mut self, key: &str, value: &str) -> &mut Self {
        self.sandbox.push((key.to_string(), value.to_string()));
        self
    }

    /// Grants `host` at `guest` in `mode` ("ro" or "rw").
    pub fn grant_dir(&mut self, host: &Path, guest: &str, mode: &str) -> &mut Self {
        let item = format!(
            "{{ host = {}, guest = {}, mode = {} }}",
            toml_string(&host.display().to_string()),
            toml_string(guest),
            toml_string(mode)
        );
        match self.sandbox.iter_mut().find(|(key, _)| key == "dirs") {
            Some((_, dirs)) => {
                dirs.pop();
                dirs.push_str(&format!(", {item}]"));
            }
            None => self.sandbox.push(("dirs".to_string(), format!("[{item}]"))),
        }
        self
    }
}

/// A [`TestChain`] (directory, agent, `[conductor]` settings) whose proxies may be WASM. The
/// chain's own proxy list is not used.
pub struct WasmChain {
    pub chain: TestChain,
    pub proxies: Vec<ProxyEntry>,
}

impl WasmChain {
    /// Compiled code goes to the shared cache unless `cache_dir` is set on `chain`.
    pub fn new(mut chain: TestChain) -> Self {
        if !chain.conductor.iter().any(|(key, _)| key == "cache_dir") {
            chain.conductor_setting(
                "cache_dir",
                &toml_string(&shared_cache_dir().display().to_string()),
            );
        }
        Self {
            chain,
            proxies: Vec::new(),
        }
    }

    pub fn add_wasm(&mut self, name: &str, wasm: &Path) -> &mut ProxyEntry {
        self.add(name, Launch::Wasm(wasm.to_path_buf()))
    }

    pub fn add_native(&mut self, name: &str, command: &Path) -> &mut ProxyEntry {
        self.add(name, Launch::Command(command.to_path_buf()))
    }

    fn add(&mut self, name: &str, launch: Launch) -> &mut ProxyEntry {
        self.proxies.push(ProxyEntry {
            name: name.to_string(),
            launch,
            args: Vec::new(),
            env: Vec::new(),
            sandbox: Vec::new(),
            settings: Vec::new(),
        });
        self.proxies.last_mut().expect("just pushed")
    }

    pub fn config_text(&self) -> String {
        let mut text = self.chain.config_text();
        for proxy in &self.proxies {
            text.push_str(&format!("[[proxy]]\nname = {}\n", toml_string(&proxy.name)));
            let (key, path) = match &proxy.launch {
                Launch::Command(path) => ("command", path),
                Launch::Wasm(path) => ("wasm", path),
            };
            text.push_str(&format!(
                "{key} = {}\nargs = {}\n",
                toml_string(&path.display().to_string()),
                toml_array(&proxy.args)
            ));
            if !proxy.env.is_empty() {
                let pairs: Vec<String> = proxy
                    .env
                    .iter()
                    .map(|(name, value)| format!("{name} = {}", toml_string(value)))
                    .collect();
                text.push_str(&format!("env = {{ {} }}\n", pairs.join(", ")));
            }
            for (key, value) in &proxy.settings {
                text.push_str(&format!("{key} = {value}\n"));
            }
            if !proxy.sandbox.is_empty() {
                text.push_str("[proxy.sandbox]\n");
                for (key, value) in &proxy.sandbox {
                    text.push_str(&format!("{key} = {value}\n"));
                }
            }
            text.push('\n');
        }
        text
    }

    pub fn write_config(&self) -> PathBuf {
        let path = self.chain.config_path();
        std::fs::write(&path, self.config_text()).expect("write conductor.toml");
        path
    }

    /// Writes the config and starts the conductor as an editor would, with debug logs.
    pub fn launch(&self) -> Editor {
        self.launch_with_env(&[])
    }

    /// Like [`WasmChain::launch`], with more variables in the conductor's environment.
    pub fn launch_with_env(&self, envs: &[(&str, &str)]) -> Editor {
        let config = self.write_config();
        let mut all = vec![("ACP_CONDUCTOR_LOG", "debug")];
        all.extend_from_slice(envs);
        Editor::launch(
            &self.chain.binaries.conductor,
            &[
                "run".to_string(),
                "--config".to_string(),
                config.display().to_string(),
            ],
            &all,
        )
    }
}
