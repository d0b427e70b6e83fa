//! `acp-prompt`: plays the editor for one conductor. It starts the conductor as a child process,
//! as an editor would, sends the prompts in one session and prints a readable transcript.
//! `acp-conductor prompt` runs this program; its messages start with the name it was run as.

use std::path::PathBuf;
use std::process::ExitCode;

use acp_demo::logging::LogStyle;
use acp_demo::program_search::find_beside_or_on_path;
use acp_demo::prompt::conductor::{ConductorCommand, Ending, prompt_through};
use acp_demo::prompt::{PermissionPolicy, PromptOptions};
use clap::{Parser, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "acp-prompt",
    version,
    about = "Plays the editor: sends prompts through a conductor, in one session, and prints the answers"
)]
struct Cli {
    /// The conductor to start (default: `acp-conductor` next to this program, then on PATH).
    #[arg(long, value_name = "PATH")]
    conductor: Option<PathBuf>,
    /// Log filter for stderr, also given to the conductor. Overrides ACP_CONDUCTOR_LOG and RUST_LOG.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
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
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Permissions {
    Allow,
    Deny,
}

const LOG_VARIABLES: [&str; 2] = ["ACP_CONDUCTOR_LOG", "RUST_LOG"];

fn main() -> ExitCode {
    let name = program_name();
    let cli = Cli::parse();
    let log = acp_demo::logging::filter_spec(cli.log.as_deref(), &LOG_VARIABLES, "warn");
    // The conductor gets the filter in use, so that a bad one is reported once.
    let log = acp_demo::logging::init(&name, &log, "warn", LogStyle::Standalone);
    let cwd = match cli
        .cwd
        .map_or_else(std::env::current_dir, std::path::absolute)
    {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("{name}: cannot determine the working directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let program = match cli.conductor {
        Some(program) => program,
        None => match find_beside_or_on_path("acp-conductor") {
            Some(program) => program,
            None => {
                eprintln!(
                    "{name}: `acp-conductor` not found next to {name} or on PATH (or give --conductor PATH)"
                );
                return ExitCode::FAILURE;
            }
        },
    };
    let conductor = ConductorCommand {
        program,
        log,
        config: cli.config,
    };
    let options = PromptOptions {
        prompts: cli.prompts,
        cwd,
        permissions: match cli.permissions {
            Permissions::Allow => PermissionPolicy::Allow,
            Permissions::Deny => PermissionPolicy::Deny,
        },
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{name}: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    let ending = runtime.block_on(prompt_through(&conductor, &options, &mut stdout));
    if let Ending::Failed {
        error,
        chain_failed,
    } = &ending
    {
        eprintln!("{name}: {error:#}");
        if *chain_failed {
            eprintln!("{name}: the chain failed; run with --log debug for details");
        }
    }
    ExitCode::from(ending.exit_code())
}

/// The file name this program was run as (`acp-conductor` when that hands `prompt` over to it).
fn program_name() -> String {
    std::env::args_os()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(|path| path.file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "acp-prompt".to_owned())
}
