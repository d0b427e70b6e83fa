//! Logs go to stderr, never stdout (stdout is the protocol). The filter comes from `--log`,
//! then `ACP_CONDUCTOR_LOG`, then `RUST_LOG`, then the command's default.
//!
//! Two formatting layers share stderr and the filter. The conductor's own events go through
//! `tracing-subscriber`'s escaping of control characters (a method name or error message
//! from a peer could otherwise write escape sequences to a terminal). Relayed component
//! stderr goes through a layer without that escaping, because the relay has already cleaned
//! each line itself (`component::stderr_relay`): escaping again would turn the colours kept
//! for a terminal into literal `\x1b[31m` text.
//!
//! A directive for `acp_conductor` covers the library crates the conductor is built from too
//! (`acp_router`, `acp_drivers`, ...), unless the filter names them: they were modules of
//! `acp_conductor` before the crates were split by layer, and `--log acp_conductor=debug` is
//! how users ask for the conductor's debug logs.
//!
//! `wasmtime_wasi` stays at `warn` unless the filter names it: it wraps every WASI preview 1
//! call of a guest in an INFO span with its arguments formatted (`#[instrument]`), several per
//! message, and at `info` making those spans was a fifth of the conductor's CPU with three
//! WASM proxies (docs/performance.md, "WASM proxies").

use tracing_subscriber::filter::{self, Directive, FilterExt};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use acp_drivers::component::stderr_relay::{self, stderr_is_terminal};

pub fn init(flag: Option<&str>, default: &str) {
    let spec = with_own_crates(&filter_spec(flag, default));
    let env_filter = || {
        let filter = EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new(default));
        quiet_wasi(filter, &spec)
    };
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

/// The target whose per-call spans a WASM guest would pay for on every message.
const WASI_TARGET: &str = "wasmtime_wasi";

/// `filter` with `wasmtime_wasi` (and `wasmtime_wasi_io`) at `warn`, unless `spec` names it.
fn quiet_wasi(filter: EnvFilter, spec: &str) -> EnvFilter {
    if spec.contains(WASI_TARGET) {
        return filter;
    }
    match format!("{WASI_TARGET}=warn").parse::<Directive>() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    }
}

/// The crates of this workspace whose events are the conductor's own.
const OWN_CRATES: &[&str] = &[
    "acp_wire",
    "acp_router",
    "acp_link",
    "acp_trace",
    "acp_trace_view",
    "acp_metrics",
    "acp_remote",
    "acp_drivers",
];

/// `spec` with each directive for the `acp_conductor` target (the whole crate, not one of its
/// modules) repeated for every crate of [`OWN_CRATES`] the spec does not name.
fn with_own_crates(spec: &str) -> String {
    let named = |krate: &str| {
        spec.split(',').any(|directive| {
            let target = directive.split('=').next().unwrap_or("").trim();
            target == krate || target.starts_with(&format!("{krate}::"))
        })
    };
    let mut directives: Vec<String> = spec.split(',').map(str::to_owned).collect();
    for directive in spec.split(',') {
        let Some(level) = directive.trim().strip_prefix("acp_conductor=") else {
            continue;
        };
        for krate in OWN_CRATES.iter().filter(|krate| !named(krate)) {
            directives.push(format!("{krate}={level}"));
        }
    }
    directives.join(",")
}

/// The filter a command uses: `--log`, then `ACP_CONDUCTOR_LOG`, then `RUST_LOG`, then `default`.
pub fn filter_spec(flag: Option<&str>, default: &str) -> String {
    flag.map(str::to_string)
        .or_else(|| std::env::var("ACP_CONDUCTOR_LOG").ok())
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| default.to_string())
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    /// Whether a span at `level` with `target` is enabled under `spec`, filtered as `init`
    /// filters.
    fn span_enabled(spec: &str, target: &str, level: Level) -> bool {
        let filter = quiet_wasi(EnvFilter::new(spec), spec);
        let subscriber = tracing_subscriber::registry().with(filter);
        let span = tracing::subscriber::with_default(subscriber, || match (target, level) {
            ("wasmtime_wasi::p1", Level::INFO) => {
                tracing::info_span!(target: "wasmtime_wasi::p1", "fd_read")
            }
            ("wasmtime_wasi::p1", Level::WARN) => {
                tracing::warn_span!(target: "wasmtime_wasi::p1", "fd_read")
            }
            ("acp_conductor::run", Level::INFO) => {
                tracing::info_span!(target: "acp_conductor::run", "run")
            }
            _ => unreachable!("not a case of these tests"),
        });
        !span.is_disabled()
    }

    #[test]
    fn wasi_call_spans_are_off_unless_warn() {
        for spec in ["info", "debug", "trace", "acp_conductor=debug"] {
            assert!(
                !span_enabled(spec, "wasmtime_wasi::p1", Level::INFO),
                "{spec}"
            );
            assert!(
                span_enabled(spec, "wasmtime_wasi::p1", Level::WARN),
                "{spec}"
            );
        }
        assert!(span_enabled("info", "acp_conductor::run", Level::INFO));
    }

    #[test]
    fn a_directive_for_the_conductor_covers_its_library_crates() {
        let spec = with_own_crates("info,acp_conductor=debug");
        assert!(spec.contains("acp_drivers=debug"), "{spec}");
        assert!(spec.contains("acp_router=debug"), "{spec}");
        let filter = EnvFilter::new(&spec);
        let subscriber = tracing_subscriber::registry().with(filter);
        tracing::subscriber::with_default(subscriber, || {
            assert!(tracing::enabled!(target: "acp_drivers::supervisor", Level::DEBUG));
            assert!(!tracing::enabled!(target: "hyper::proto", Level::DEBUG));
        });
        // A crate the filter names keeps what it says; a module of the conductor widens
        // nothing; a filter without the conductor is left as it is.
        let spec = with_own_crates("acp_conductor=trace,acp_router=warn");
        assert!(!spec.contains("acp_router=trace"), "{spec}");
        assert!(spec.contains("acp_drivers=trace"), "{spec}");
        assert_eq!(
            with_own_crates("acp_conductor::run=debug"),
            "acp_conductor::run=debug"
        );
        assert_eq!(with_own_crates("debug"), "debug");
    }

    #[test]
    fn a_filter_that_names_wasmtime_wasi_decides_for_it() {
        let spec = "info,wasmtime_wasi=info";
        assert!(span_enabled(spec, "wasmtime_wasi::p1", Level::INFO));
        let spec = "info,wasmtime_wasi=error";
        assert!(!span_enabled(spec, "wasmtime_wasi::p1", Level::WARN));
    }
}
