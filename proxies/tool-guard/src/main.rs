//! `acp-tool-guard`: an ACP policy proxy between agent and editor. Auto-allows or denies
//! permission requests, fences file and terminal access, redacts secrets from prompts.

mod glob;
mod guard;
mod policy;
mod tool_calls;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use proxy_kit::log::Level;

use crate::guard::ToolGuard;
use crate::policy::Policy;

/// Enforces a TOML policy on what an ACP agent may do. Run it as a `[[proxy]]` of a conductor.
#[derive(Parser, Debug)]
#[command(name = "acp-tool-guard", version)]
struct Args {
    /// The policy file (see docs/proxies.md for its format).
    #[arg(long, value_name = "FILE")]
    policy: PathBuf,
    /// Log level on stderr (off, error, warn, info, debug, trace); default: $ACP_PROXY_LOG or info.
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<Level>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    proxy_kit::log::init("tool-guard", args.log_level);
    let policy = match std::fs::read_to_string(&args.policy)
        .map_err(|e| e.to_string())
        .and_then(|text| Policy::from_toml(&text).map_err(|e| e.to_string()))
    {
        Ok(policy) => policy,
        Err(e) => {
            proxy_kit::error!("policy {}: {e}", args.policy.display());
            return ExitCode::from(2);
        }
    };
    proxy_kit::info!(
        "policy {}: {} permission rule(s), {} redaction pattern(s)",
        args.policy.display(),
        policy.permissions.len(),
        policy.redactions.len()
    );
    proxy_kit::run(ToolGuard::new(policy))
}
