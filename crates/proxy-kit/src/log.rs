//! Logging to stderr, one line per event, prefixed with the proxy's name. stdout is the
//! protocol, so nothing here may ever write there. Knows nothing about messages.
//!
//! The level comes from [`init`]'s argument when given, else from the `ACP_PROXY_LOG`
//! environment variable (`off`, `error`, `warn`, `info`, `debug`, `trace`), else `info`.
//! A WASM proxy sees the variable only if its sandbox is granted it.

use std::fmt;
use std::io::Write;
use std::sync::OnceLock;

/// The environment variable that sets the level when [`init`] is not given one.
pub const LEVEL_ENV: &str = "ACP_PROXY_LOG";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl Level {
    fn label(self) -> &'static str {
        match self {
            Level::Off => "OFF",
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        }
    }
}

/// A `--log-level` or `$ACP_PROXY_LOG` that names no level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown log level `{0}` (expected off, error, warn, info, debug or trace)")]
pub struct UnknownLevel(pub String);

impl std::str::FromStr for Level {
    type Err = UnknownLevel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(Level::Off),
            "error" => Ok(Level::Error),
            "warn" | "warning" => Ok(Level::Warn),
            "info" => Ok(Level::Info),
            "debug" => Ok(Level::Debug),
            "trace" => Ok(Level::Trace),
            other => Err(UnknownLevel(other.to_owned())),
        }
    }
}

struct Logger {
    name: String,
    level: Level,
}

static LOGGER: OnceLock<Logger> = OnceLock::new();

/// Sets the name and level for the rest of the process; later calls change nothing.
/// Without a call, lines are prefixed `proxy` and the level comes from [`LEVEL_ENV`].
pub fn init(name: &str, level: Option<Level>) {
    let _ = LOGGER.set(Logger {
        name: name.to_string(),
        level: level.unwrap_or_else(level_from_env),
    });
}

fn level_from_env() -> Level {
    match std::env::var(LEVEL_ENV) {
        Ok(text) => text.parse().unwrap_or_else(|e| {
            eprintln!("{e} in {LEVEL_ENV}; logging at info");
            Level::Info
        }),
        Err(_) => Level::Info,
    }
}

fn logger() -> &'static Logger {
    LOGGER.get_or_init(|| Logger {
        name: "proxy".to_string(),
        level: level_from_env(),
    })
}

pub fn enabled(level: Level) -> bool {
    level != Level::Off && level <= logger().level
}

/// Writes one line; use the [`error!`](crate::error), [`warn!`](crate::warn),
/// [`info!`](crate::info), [`debug!`](crate::debug) and [`trace!`](crate::trace) macros instead of calling this.
pub fn write(level: Level, args: fmt::Arguments<'_>) {
    if !enabled(level) {
        return;
    }
    let logger = logger();
    // A failed write to stderr has nowhere better to be reported.
    let _ = writeln!(
        std::io::stderr().lock(),
        "[{}] {} {}",
        logger.name,
        level.label(),
        args
    );
}

#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Error, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Warn, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Info, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Debug, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! trace {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Trace, format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_order() {
        assert_eq!("DEBUG".parse::<Level>(), Ok(Level::Debug));
        assert_eq!(" warning ".parse::<Level>(), Ok(Level::Warn));
        assert_eq!("off".parse::<Level>(), Ok(Level::Off));
        assert!("loud".parse::<Level>().is_err());
        assert!(Level::Error < Level::Info && Level::Info < Level::Trace);
    }
}
