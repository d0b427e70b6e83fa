//! Logs go to stderr, never stdout (stdout is the protocol). The filter comes from `--log`,
//! then `ACP_CONDUCTOR_LOG`, then `RUST_LOG`, then the command's default.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub fn init(flag: Option<&str>, default: &str) {
    let spec = filter_spec(flag, default);
    let filter = EnvFilter::try_new(&spec).unwrap_or_else(|e| {
        eprintln!("acp-conductor: ignoring log filter {spec:?}: {e}");
        EnvFilter::new(default)
    });
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter)
        .try_init();
}

/// The filter a command uses: `--log`, then `ACP_CONDUCTOR_LOG`, then `RUST_LOG`, then `default`.
pub fn filter_spec(flag: Option<&str>, default: &str) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("ACP_CONDUCTOR_LOG").ok())
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| default.to_string())
}
