//! `acp-context-proxy`: an ACP proxy that injects shared context (AGENTS.md-style files and
//! inline rules) into prompts, so a team's rules reach any agent. Argument parsing only here.

mod blocks;
mod proxy;

use std::process::ExitCode;

use clap::Parser;
use proxy_kit::log::Level;

use crate::proxy::{Config, ContextProxy, Mode, Placement};

/// Injects context files and rules into ACP prompts. Run it as a `[[proxy]]` of a conductor.
#[derive(Parser, Debug)]
#[command(name = "acp-context-proxy", version)]
struct Args {
    /// A context file: absolute, or relative to the session's cwd. Repeatable.
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<String>,
    /// An inline rule, injected as one line of the rules block. Repeatable.
    #[arg(long = "rule", value_name = "TEXT")]
    rules: Vec<String>,
    /// Inject on the first prompt of each session, or on every prompt.
    #[arg(long, value_enum, default_value_t = Mode::Once)]
    mode: Mode,
    /// Put the context after the user's blocks of the prompt, or before them.
    #[arg(long, value_enum, default_value_t = Placement::After)]
    placement: Placement,
    /// Files larger than this are reported and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
    max_file_bytes: u64,
    /// Log level on stderr (off, error, warn, info, debug, trace); default: $ACP_PROXY_LOG or info.
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<Level>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    proxy_kit::log::init("context", args.log_level);
    if args.files.is_empty() && args.rules.is_empty() {
        proxy_kit::error!("nothing to inject: give at least one --file or --rule");
        return ExitCode::from(2);
    }
    proxy_kit::run(ContextProxy::new(Config {
        files: args.files,
        rules: args.rules,
        mode: args.mode,
        placement: args.placement,
        max_file_bytes: args.max_file_bytes,
    }))
}
