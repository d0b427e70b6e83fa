//! Why a registry could not be read or fetched, and why one of its agents cannot be run here.
//! Must not know who reports them: the configuration and `agents` print their `Display`.

use std::path::PathBuf;

/// A registry that could not be had.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("not a registry: expected a JSON object with `agents`")]
    NotAnObject,
    #[error("not a registry: it has no `agents` array")]
    NoAgentsArray,
    #[error("cannot read registry file {}: {source}", path.display())]
    FileUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("registry file {}: {source}", path.display())]
    FileNotARegistry {
        path: PathBuf,
        source: Box<RegistryError>,
    },
    /// The GET could not be made, or was not answered with success (`source` without the
    /// URL, which the message names already).
    #[error("fetching {url} failed: {}", describe(source))]
    Request { url: String, source: reqwest::Error },
    /// The GET could not even be set up.
    #[error("fetching {url} failed: {cause}")]
    Setup { url: String, cause: SetupError },
    /// The answer's body broke off or is not text.
    #[error("reading {url} failed: {}", describe(source))]
    Body { url: String, source: reqwest::Error },
    #[error("reading {url} failed: the body is larger than {limit} bytes")]
    TooLarge { url: String, limit: u64 },
    #[error("reading {url} failed: {source}")]
    NotUtf8 {
        url: String,
        source: std::string::FromUtf8Error,
    },
    #[error("{url} did not send a registry: {source}")]
    NotSent {
        url: String,
        source: Box<RegistryError>,
    },
    /// Not fetched, and no copy to fall back on.
    #[error(
        "cannot get the agent registry: {why}; no copy is cached{} (when offline, save \
         registry.json and point `registry_file` at it)",
        cache.as_ref().map(|file| format!(" in {}", file.display())).unwrap_or_default()
    )]
    Unavailable {
        why: Box<RegistryError>,
        cache: Option<PathBuf>,
    },
}

/// What the one GET needs before it is sent.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("TLS cannot be set up: {0}")]
    Tls(#[from] rustls::Error),
    #[error("no runtime for the request: {0}")]
    Runtime(#[from] std::io::Error),
}

/// An agent of the registry that cannot be run on this machine as it is.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// Only a binary archive, not unpacked yet: the text says how to install it.
    #[error("{instructions}")]
    NotInstalled { instructions: String },
    #[error(
        "agent `{id}` ({name} {version}) has no build for this machine ({platform}); the \
         registry has builds for {}",
        listed.join(", ")
    )]
    NoBuildHere {
        id: String,
        name: String,
        version: String,
        platform: String,
        listed: Vec<String>,
    },
    #[error("agent `{id}` has no distribution acp-conductor can run")]
    NothingToRun { id: String },
}

/// A reqwest error and its causes, one after the other.
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
