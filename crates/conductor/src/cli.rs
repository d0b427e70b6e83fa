//! The `acp-conductor` command line: `run` (the editor-facing agent), `serve` (the chain for
//! remote editors), `check`, `doctor`, `agents`, `prompt`. Parses arguments and picks a runtime; the work is done by `run`,
//! `config`, `doctor`, `registry` and `acp-prompt`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::config::{self, ConfigErrors, Mode};
use crate::doctor::DoctorError;
use crate::mcp::shim::ShimError;
use crate::prompt_command::{self, PromptError, PromptRequest};
use crate::registry::RegistryError;
use crate::run;
use crate::serve::ServeCommandError;
use crate::trace_command::ViewError;
use acp_drivers::runtime::{self, RuntimeKind};
use acp_router::Finish;
use acp_router::topology::ChainMode;

#[derive(Debug, Parser)]
#[command(
    name = "acp-conductor",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("ACP_CONDUCTOR_BUILD"), ")"),
    about = "Runs a chain of ACP proxies and an agent as one ACP agent"
)]
struct Cli {
    /// Log filter for stderr (e.g. `debug`, `acp_conductor=trace`). Overrides ACP_CONDUCTOR_LOG and RUST_LOG.
    #[arg(long, global = true, value_name = "FILTER")]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Speak ACP on stdin/stdout: the command an editor launches instead of its agent.
    Run {
        #[arg(long, env = "ACP_CONDUCTOR_CONFIG", value_name = "FILE")]
        config: PathBuf,
        /// Run as a proxy inside another conductor (expect `proxy/initialize`).
        #[arg(long)]
        proxy: bool,
        /// Write a per-hop trace of every message to FILE (JSON lines; see docs/trace.md).
        /// Wins over `trace` in [conductor].
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Reload when the config file, or a file it names, changes on disk (as `watch =
        /// true` in [conductor]; see docs/reload.md).
        #[arg(long)]
        watch: bool,
    },
    /// Serve the chain to remote editors over ACP's Streamable HTTP and WebSocket transport
    /// (one `/acp` endpoint; each connection gets its own chain). See docs/remote.md.
    Serve(crate::serve::ServeArgs),
    /// Validate a config file without starting anything (exit 78 when invalid).
    Check {
        #[arg(
            long,
            env = "ACP_CONDUCTOR_CONFIG",
            value_name = "FILE",
            required_unless_present = "diff"
        )]
        config: Option<PathBuf>,
        /// Print what a reload from OLD to NEW would do to each component (kept, moved,
        /// replaced and why, added, removed; the agent), without running anything. `--config`
        /// (or ACP_CONDUCTOR_CONFIG) is not read then.
        #[arg(long, num_args = 2, value_names = ["OLD", "NEW"])]
        diff: Option<Vec<PathBuf>>,
    },
    /// Check a config against this machine as an editor will run it: commands on the
    /// editor's PATH, wasm files, sandbox grants, variables; print the chain (exit 1 on a
    /// problem, 78 when the file cannot be read).
    Doctor {
        #[arg(long, env = "ACP_CONDUCTOR_CONFIG", value_name = "FILE")]
        config: PathBuf,
        /// The PATH the editor starts acp-conductor with (default: a desktop app's,
        /// /usr/bin:/bin:/usr/sbin:/sbin).
        #[arg(long, value_name = "PATH")]
        path: Option<String>,
        /// Also start the chain, send `initialize` as an editor would, time each
        /// component's answer, and stop everything.
        #[arg(long)]
        probe: bool,
    },
    /// List the agents of the ACP agent registry (`[agent] registry = "<id>"` runs one).
    Agents {
        /// Read this registry file instead of fetching the published registry.
        #[arg(long, value_name = "FILE")]
        registry_file: Option<PathBuf>,
    },
    /// Play the editor: send prompts through the chain, in one session, and print the answers.
    Prompt {
        #[arg(long, env = "ACP_CONDUCTOR_CONFIG", value_name = "FILE")]
        config: PathBuf,
        /// How to answer the agent's permission requests.
        #[arg(long, value_enum, default_value_t = Permissions::Deny)]
        permissions: Permissions,
        /// The session's working directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The prompt text; several are sent one after another in the same session.
        #[arg(required = true, value_name = "TEXT")]
        prompts: Vec<String>,
    },
    /// Look at a trace written by `run --trace FILE`.
    Trace(crate::trace_command::TraceArgs),
    /// The stdio MCP server the conductor writes into session setups for agents that
    /// cannot speak MCP-over-ACP; relays to the conductor that wrote it. Not for people.
    #[command(hide = true)]
    McpBridge {
        /// The conductor's private socket.
        #[arg(long, value_name = "PATH")]
        socket: PathBuf,
        /// The id of the declared server this shim stands for.
        #[arg(long, value_name = "ID")]
        server: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Permissions {
    Allow,
    Deny,
}

/// Exit status for a configuration that cannot be used (sysexits EX_CONFIG).
const EX_CONFIG: u8 = 78;

/// Why a command ended in failure. `Display` is what goes to stderr; [`exit_code`] is the one
/// place that turns it into an exit status.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The configuration cannot be used (`run`, `check`, `prompt`).
    #[error("{0}")]
    Config(#[from] ConfigErrors),
    #[error(transparent)]
    Doctor(#[from] DoctorError),
    #[error("acp-conductor agents: {0}")]
    Agents(#[from] RegistryError),
    #[error("trace view: {0}")]
    TraceView(#[from] ViewError),
    #[error("acp-conductor: {0}")]
    Prompt(#[from] PromptError),
    /// The chain stopped on a failure; the log said which.
    #[error("the chain stopped on a failure")]
    ChainFailed,
    #[error(transparent)]
    Serve(#[from] ServeCommandError),
    #[error("acp-conductor mcp-bridge: {0}")]
    McpBridge(#[from] ShimError),
}

impl CommandError {
    /// What to print to stderr, unless the command has said it already (in its log or its
    /// report).
    pub fn message(&self) -> Option<String> {
        match self {
            CommandError::ChainFailed
            | CommandError::Doctor(DoctorError::ProblemsFound(_))
            | CommandError::Serve(ServeCommandError::Listen(_)) => None,
            other => Some(other.to_string()),
        }
    }
}

/// The exit status of a failed command: 78 (`EX_CONFIG`) when the configuration (or `serve`'s
/// command line) cannot be used, 2 when the MCP bridge never reached the conductor, 1
/// otherwise.
pub fn exit_status(error: &CommandError) -> u8 {
    match error {
        CommandError::Config(_)
        | CommandError::Doctor(DoctorError::Unreadable(_))
        | CommandError::Serve(ServeCommandError::Config(_) | ServeCommandError::Plan(_)) => {
            EX_CONFIG
        }
        CommandError::McpBridge(ShimError::Unreachable { .. }) => 2,
        CommandError::McpBridge(_)
        | CommandError::Serve(ServeCommandError::Listen(_) | ServeCommandError::Runtime(_))
        | CommandError::Doctor(DoctorError::ProblemsFound(_))
        | CommandError::Agents(_)
        | CommandError::TraceView(_)
        | CommandError::Prompt(_)
        | CommandError::ChainFailed => 1,
    }
}

pub fn exit_code(error: &CommandError) -> ExitCode {
    ExitCode::from(exit_status(error))
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let log = cli.log.as_deref();
    match cli.command {
        Command::McpBridge { socket, server } => finish(crate::mcp::shim::run(&socket, &server)),
        Command::Serve(args) => finish(crate::serve::main(args, log)),
        Command::Trace(args) => finish(crate::trace_command::main(args, log)),
        Command::Check { config, diff } => {
            crate::logging::init(log, "warn");
            match (diff.as_deref(), config) {
                (Some([old, new]), _) => finish(config::check_diff(old, new)),
                (_, Some(config)) => finish(config::check(&config)),
                // clap requires `--config` unless `--diff`, and `--diff` takes two files.
                _ => unreachable!("clap checks `check`'s arguments"),
            }
        }
        Command::Doctor {
            config,
            path,
            probe,
        } => {
            // The report says what went wrong; `--log` shows the conductor's own lines too.
            crate::logging::init(log, "off");
            finish(crate::doctor::doctor_command(
                &crate::doctor::DoctorRequest {
                    config: &config,
                    editor_path: path.as_deref(),
                    probe,
                },
            ))
        }
        Command::Agents { registry_file } => {
            crate::logging::init(log, "warn");
            finish(crate::registry::agents_command(registry_file.as_deref()))
        }
        Command::Run {
            config,
            proxy,
            trace,
            watch,
        } => {
            crate::logging::init(log, "info");
            finish(run_chain(&config, proxy, trace, watch))
        }
        Command::Prompt {
            config,
            permissions,
            cwd,
            prompts,
        } => {
            // No logging set up: acp-prompt does that, and reports a bad filter once.
            let log = crate::logging::filter_spec(log, "warn");
            finish(prompt(&PromptRequest {
                config: &config,
                log: &log,
                permissions: match permissions {
                    Permissions::Allow => "allow",
                    Permissions::Deny => "deny",
                },
                cwd: cwd.as_deref(),
                prompts: &prompts,
            }))
        }
    }
}

/// A command's outcome as its exit status, with why it failed on stderr.
fn finish<E: Into<CommandError>>(outcome: Result<(), E>) -> ExitCode {
    match outcome.map_err(Into::into) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(message) = error.message() {
                eprintln!("{message}");
            }
            exit_code(&error)
        }
    }
}

/// `run`: the chain, until it stops.
fn run_chain(
    file: &Path,
    proxy: bool,
    trace: Option<PathBuf>,
    watch: bool,
) -> Result<(), CommandError> {
    let forced = proxy.then_some(Mode::Proxy);
    let mut config = config::load_in_mode(file, forced)?;
    config.conductor.watch |= watch;
    if let Some(file) = trace {
        config.conductor.trace.file = Some(std::path::absolute(&file).unwrap_or(file));
    }
    let mode = match config.conductor.mode {
        Mode::Proxy => ChainMode::Proxy,
        Mode::Agent => ChainMode::Agent,
    };
    crate::otlp::start(&config);
    let finish =
        runtime::run_on_main_thread(RuntimeKind::OneThread, |main| run::run(main, &config, mode))
            .expect("tokio runtime");
    crate::otlp::finish();
    match finish {
        Finish::Stopped => Ok(()),
        Finish::Failed => Err(CommandError::ChainFailed),
    }
}

/// `prompt`: returns only when it could not become `acp-prompt`.
fn prompt(request: &PromptRequest<'_>) -> Result<(), CommandError> {
    // Checked here too, so that a bad file is reported the same with or without
    // `acp-prompt` installed.
    config::load(request.config)?;
    Err(prompt_command::exec(request).into())
}
