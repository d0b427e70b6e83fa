//! The chain as resolved from `conductor.toml`: what to start, with which grants and limits,
//! and how each component's failures are handled. Plain data that the drivers run.
//!
//! The binary's `config` reads, checks and resolves a file into these types; nothing here
//! reads TOML or knows where in a file a value was written.

pub mod diff;
mod duration;
mod size;
mod wasm_file;

use std::path::PathBuf;
use std::time::Duration;

pub use acp_remote::RemoteSpec;
pub use acp_router::BridgeForm;
pub use acp_router::policy::{AfterRestarts, FailurePolicy, OnFailure};
pub use acp_trace::TraceSettings;
pub use duration::{DurationError, format_duration, parse_duration};
pub use size::{SizeError, format_size, parse_size, size_from_integer};
pub use wasm_file::{WasmFileError, WasmKind};

/// Why a `wasm` proxy is refused by a conductor built without WASM support.
pub const NO_WASM: &str = "this acp-conductor was built without WASM support (cargo \
     feature `wasm`, on by default): rebuild it with default features, or run the proxy as a \
     `command`";

/// A validated configuration: every program exists and every variable was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Absolute path of the file this was read from.
    pub file: PathBuf,
    pub conductor: ConductorSettings,
    /// The end of the chain; absent only in proxy mode, where the parent conductor's
    /// successor takes its place.
    pub agent: Option<AgentSpec>,
    /// Enabled proxies in chain order (file order); the first one is next to the editor.
    pub proxies: Vec<ProxySpec>,
    /// What happens when the agent fails (`on_failure` and the timeouts of `[agent]`).
    pub agent_failure: FailurePolicy,
    /// What a reload does when `[agent]` changed (`on_reload`).
    pub agent_on_reload: OnReload,
}

/// `[agent] on_reload`: whether a reload that changes the agent restarts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnReload {
    /// The agent keeps running (it holds the sessions); its change waits for a restart.
    #[default]
    Keep,
    /// The agent is started again with its new settings; its sessions are lost, as after a
    /// failure under `restart`.
    Restart,
}

/// The `[conductor]` table: how the conductor itself behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConductorSettings {
    pub mode: Mode,
    /// Longest accepted JSON-RPC line, in bytes.
    pub max_line: usize,
    /// How long a write to a peer may block before that peer is failed.
    pub write_timeout: Duration,
    /// How long children get to exit after their stdin closes before they are killed.
    pub shutdown_grace: Duration,
    /// Bytes queued toward one peer before senders to it pause.
    pub queue_limit: usize,
    /// Where compiled WASM proxies are kept between runs: `cache_dir` when set, else
    /// `$XDG_CACHE_HOME/acp-conductor` or `$HOME/.cache/acp-conductor`; `None` when none
    /// of these is known, and then WASM proxies are compiled on every start.
    pub cache_dir: Option<PathBuf>,
    /// The per-hop trace: `trace`, `trace_payloads`, `redact`.
    pub trace: TraceSettings,
    /// How proxy-provided MCP servers reach an agent that does not speak MCP over ACP
    /// (`mcp_bridge`: `auto`, `http`, `stdio`).
    pub mcp_bridge: BridgeForm,
    /// `watch = true`: `run` (and `serve`) reloads when the file, or a file it names,
    /// changes on disk.
    pub watch: bool,
    /// `reload_open = true`: under `serve`, a reload changes the chains of connections open
    /// at the time too, not only those opened after it.
    pub reload_open: bool,
    /// `otlp`: the OTLP/HTTP endpoint spans are exported to (`http://collector:4318`); `None`
    /// when not written (then `OTEL_EXPORTER_OTLP_ENDPOINT` may name one).
    pub otlp: Option<String>,
}

impl Default for ConductorSettings {
    fn default() -> Self {
        Self {
            mode: Mode::default(),
            max_line: 64 << 20,
            write_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(2),
            queue_limit: 16 << 20,
            cache_dir: None,
            trace: TraceSettings::default(),
            mcp_bridge: BridgeForm::Auto,
            watch: false,
            reload_open: false,
            otlp: None,
        }
    }
}

/// Who the conductor answers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The editor launched us as its agent and sends `initialize`.
    #[default]
    Agent,
    /// A parent conductor runs us as one of its proxies and sends `proxy/initialize`.
    Proxy,
}

/// The end of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSpec {
    Command(CommandSpec),
    /// `builtin = "..."`: a program shipped with the conductor, started like a `command` one.
    Builtin {
        agent: BuiltinAgent,
        /// The agent's program, found next to the conductor or on `PATH`, without arguments.
        command: CommandSpec,
    },
    /// `url = "wss://..."`: an agent served elsewhere, reached over ACP's remote transport.
    Remote(RemoteSpec),
}

impl AgentSpec {
    /// The agent's name in logs, errors and the trace.
    pub fn name(&self) -> &str {
        match self {
            AgentSpec::Command(spec) | AgentSpec::Builtin { command: spec, .. } => &spec.name,
            AgentSpec::Remote(remote) => &remote.name,
        }
    }
}

/// Agents shipped with the conductor, selected with `builtin = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinAgent {
    Demo,
}

impl BuiltinAgent {
    /// The component's name in logs and errors.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinAgent::Demo => "demo",
        }
    }

    /// The program that is this agent, installed next to `acp-conductor`.
    pub fn program(self) -> &'static str {
        match self {
            BuiltinAgent::Demo => "acp-demo-agent",
        }
    }

    /// The workspace package that builds [`program`](Self::program).
    pub fn package(self) -> &'static str {
        match self {
            BuiltinAgent::Demo => "acp-demo",
        }
    }
}

/// A child process to launch: everything needed to spawn it, already resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// The component's name in logs and errors.
    pub name: String,
    /// Absolute path of an executable file.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables added to the conductor's environment, in file order.
    pub env: Vec<(String, String)>,
    /// Absolute working directory; `None` inherits the conductor's.
    pub cwd: Option<PathBuf>,
}

/// One enabled `[[proxy]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySpec {
    pub name: String,
    pub launch: ProxyLaunch,
    pub protocol: ProxyProtocol,
    pub failure: FailurePolicy,
    /// `shared = true`: under `serve`, one instance serves every connection's chain
    /// (`component::shared`); a chain run on its own starts it as usual.
    pub shared: bool,
}

/// How a proxy runs: `command = ...`, `wasm = ...` or `url = ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyLaunch {
    /// A child process.
    Native(CommandSpec),
    /// A WASI command inside the conductor, in a sandbox.
    Wasm(WasmSpec),
    /// A proxy served elsewhere (a shared one), reached over ACP's remote transport.
    Remote(RemoteSpec),
}

/// A WASM proxy: everything needed to load and run it, already resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WasmSpec {
    /// The component's name in logs and errors.
    pub name: String,
    /// Absolute path of the `.wasm` file (a core module or a component); for a `download`,
    /// where the cache keeps it.
    pub module: PathBuf,
    /// Where the file comes from when `wasm` is a URL.
    pub download: Option<WasmDownload>,
    /// Arguments after `argv[0]`, which is the proxy's name.
    pub args: Vec<String>,
    /// The guest's whole environment: `env` values of `[[proxy]]` in file order, then the
    /// variables named in `sandbox.env` that are set in the conductor's environment.
    pub env: Vec<(String, String)>,
    pub sandbox: Sandbox,
}

/// A `.wasm` file published at a URL, fetched once into the cache directory and used only
/// when its bytes have the SHA-256 the config names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WasmDownload {
    pub url: String,
    pub sha256: [u8; 32],
}

impl WasmDownload {
    /// The hash as the config writes it: 64 lowercase hexadecimal digits.
    pub fn sha256_hex(&self) -> String {
        self.sha256.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// `[proxy.sandbox]`: what a WASM proxy is granted beyond stdin, stdout and stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Host directories the guest may open, each under its own guest path.
    pub dirs: Vec<DirGrant>,
    /// Names of the conductor's environment variables passed through when set.
    pub pass_env: Vec<String>,
    /// Linear memories and tables of the instance together, in bytes.
    pub memory: usize,
    /// How long the guest may compute without reading input before it is interrupted.
    pub message_timeout: Duration,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self {
            dirs: Vec::new(),
            pass_env: Vec::new(),
            memory: 64 << 20,
            message_timeout: Duration::from_secs(5),
        }
    }
}

/// One entry of `dirs`: a host directory visible to the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// Absolute, existing host directory.
    pub host: PathBuf,
    /// Absolute path under which the guest sees it.
    pub guest: String,
    pub mode: DirMode,
}

/// What the guest may do inside a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirMode {
    /// List and read (`"ro"`).
    #[default]
    ReadOnly,
    /// Also create, write, rename and remove (`"rw"`).
    ReadWrite,
}

/// How the conductor speaks to a proxy about its successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProxyProtocol {
    /// Decided from what the proxy sends.
    #[default]
    Auto,
    /// `proxy/initialize` and `proxy/successor`, as in the proxy-chains RFD.
    Rfd,
    /// The underscore-prefixed method names some implementations use.
    Underscore,
}
