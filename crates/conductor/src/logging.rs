//! Logs go to stderr, never stdout (stdout is the protocol). The filter comes from `--log`,
//! then `ACP_CONDUCTOR_LOG`, then `RUST_LOG`, then the command's default.
//!
//! Two formatting layers share stderr and the filter. The conductor's own events go through
//! `tracing-subscriber`'s escaping of control characters (a method name or error message
//! from a peer could otherwise write escape sequences to a terminal). Relayed component
//! stderr goes through a layer without that escaping, because the relay has already cleaned
//! each line itself (`component::stderr_relay`): escaping again would turn the colours kept
//! for a terminal into literal `\x1b[31m` text.

use std::io::IsTerminal;
use std::sync::LazyLock;

use tracing_subscriber::filter::{self, FilterExt};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::component::stderr_relay;

pub fn init(flag: Option<&str>, default: &str) {
    let spec = filter_spec(flag, default);
    let env_filter = || EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new(default));
    if let Err(e) = EnvFilter::try_new(&spec) {
        eprintln!("acp-conductor: ignoring log filter {spec:?}: {e}");
    }
    let is_relay = |meta: &tracing::Metadata<'_>| meta.target() == stderr_relay::TARGET;
    let own = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(stderr_is_terminal())
        .with_filter(env_filter().and(filter::filter_fn(move |meta| !is_relay(meta))));
    let relay = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(stderr_is_terminal())
        .with_ansi_sanitization(false)
        .with_filter(env_filter().and(filter::filter_fn(is_relay)));
    let _ = tracing_subscriber::registry()
        .with(own)
        .with(relay)
        .try_init();
}

/// Whether the conductor's stderr is a terminal: decides colours in its own log lines and
/// whether relayed component stderr keeps its colours. Asked once per process.
pub fn stderr_is_terminal() -> bool {
    static TERMINAL: LazyLock<bool> = LazyLock::new(|| std::io::stderr().is_terminal());
    *TERMINAL
}

/// The filter a command uses: `--log`, then `ACP_CONDUCTOR_LOG`, then `RUST_LOG`, then `default`.
pub fn filter_spec(flag: Option<&str>, default: &str) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("ACP_CONDUCTOR_LOG").ok())
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| default.to_string())
}
