//! Logs of the demo programs go to stderr, never stdout (stdout is the protocol, or the
//! transcript). The filter comes from a flag, then the given variables, then a default.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogStyle {
    /// Time, level, target and message: a program run by hand.
    Standalone,
    /// Level and message only: a chain component, whose lines the conductor logs again
    /// with its own time and the component's name.
    Component,
}

/// The filter to use: `flag` when given, else the first of `variables` that is set, else
/// `default`.
pub fn filter_spec(flag: Option<&str>, variables: &[&str], default: &str) -> String {
    flag.map(str::to_owned)
        .or_else(|| variables.iter().find_map(|name| std::env::var(name).ok()))
        .unwrap_or_else(|| default.to_owned())
}

/// Sends `tracing` events matching `spec` to stderr; a spec that does not parse is reported
/// (as `program: ...`) and replaced by `default`. Returns the spec in use.
pub fn init(program: &str, spec: &str, default: &str, style: LogStyle) -> String {
    let (filter, in_use) = match EnvFilter::try_new(spec) {
        Ok(filter) => (filter, spec),
        Err(e) => {
            eprintln!("{program}: ignoring log filter {spec:?}: {e}");
            (EnvFilter::new(default), default)
        }
    };
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(filter);
    let _ = match style {
        LogStyle::Standalone => builder.try_init(),
        LogStyle::Component => builder.without_time().with_target(false).try_init(),
    };
    in_use.to_owned()
}
