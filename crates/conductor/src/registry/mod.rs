//! The ACP agent registry: the `registry.json` the ACP project publishes (or a local file of
//! the same shape), the agents it lists and how each one is run. Must not know the
//! configuration file: `config` asks it for one agent's command, `acp-conductor agents` for
//! the list. Never spawns anything; fetching is one HTTPS GET (`fetch.rs`),
//! with the HTTP client remote components use.
//!
//! The shape (the registry's `registry.schema.json` and `agent.schema.json`):
//!
//! ```json
//! { "version": "1.0.0",
//!   "agents": [ { "id": "gemini", "name": "Gemini CLI", "version": "0.27.3",
//!                 "description": "...",
//!                 "distribution": {
//!                   "npx": { "package": "@google/gemini-cli@0.27.3", "args": ["--experimental-acp"] },
//!                   "uvx": { "package": "...", "args": [...], "env": {...} },
//!                   "binary": { "linux-x86_64": { "archive": "https://...", "cmd": "./x",
//!                                                 "args": [...], "env": {...} }, ... } } } ],
//!   "extensions": [ ... ] }
//! ```
//!
//! Unknown members are ignored, so that a newer registry still reads; an entry that cannot
//! be read is left out of the list (and named), not a reason to refuse the others.

mod error;
mod fetch;
mod launch;
mod list;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use error::{LaunchError, RegistryError, SetupError};
pub use fetch::{CACHE_MAX_AGE, DEFAULT_URL, URL_VARIABLE, published};
pub use launch::{AgentLaunch, Kind, install_root, platform};
pub use list::{agents_command, table};

/// A registry, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    /// The registry schema version (`"1.0.0"`).
    pub version: String,
    pub agents: Vec<Agent>,
    /// Entries that could not be read, each with why (`agents[3] ("x"): missing field ...`).
    pub unreadable: Vec<String>,
    /// Where it came from, for messages.
    pub origin: Origin,
}

/// Where a registry was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `registry_file` or `--registry-file`.
    File(PathBuf),
    /// Fetched from `url` just now (and cached in `cache`, when there is a cache).
    Fetched { url: String, cache: Option<PathBuf> },
    /// The cached copy of `url`, fetched `age` ago; `stale` says why it was not fetched
    /// again although older than [`CACHE_MAX_AGE`].
    Cached {
        url: String,
        cache: PathBuf,
        age: std::time::Duration,
        stale: Option<String>,
    },
}

impl Origin {
    /// "registry file /x/r.json", "the registry at https://..., fetched now".
    pub fn describe(&self) -> String {
        match self {
            Origin::File(path) => format!("registry file {}", path.display()),
            Origin::Fetched { url, .. } => format!("the registry at {url}, fetched now"),
            Origin::Cached { url, age, .. } => {
                format!("the registry at {url}, as cached {} ago", age_text(*age))
            }
        }
    }

    /// A warning for the user when what was read may be out of date.
    pub fn warning(&self) -> Option<String> {
        match self {
            Origin::Cached {
                stale: Some(why),
                cache,
                age,
                ..
            } => Some(format!(
                "using the registry cached {} ago in {} because it could not be fetched again: \
                 {why}",
                age_text(*age),
                cache.display()
            )),
            _ => None,
        }
    }
}

/// An age for people: "40 s", "12 min", "5 h", "3 days".
fn age_text(age: std::time::Duration) -> String {
    let seconds = age.as_secs();
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..172_800 => format!("{} h", seconds / 3600),
        _ => format!("{} days", seconds / 86_400),
    }
}

/// One agent of the registry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Agent {
    pub id: String,
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub description: String,
    pub distribution: Distribution,
}

/// How an agent is obtained and run; at least one of these is set.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct Distribution {
    /// Archives per platform (`linux-x86_64`, `darwin-aarch64`, ...).
    #[serde(default)]
    pub binary: Option<BTreeMap<String, BinaryTarget>>,
    /// A Node package run with `npx`.
    #[serde(default)]
    pub npx: Option<Package>,
    /// A Python package run with `uvx`.
    #[serde(default)]
    pub uvx: Option<Package>,
}

/// One platform's archive.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BinaryTarget {
    /// Where the archive is downloaded from.
    pub archive: String,
    /// The command to run, relative to where the archive was unpacked (`./agent`), or a
    /// program looked up on `PATH` (`node`) that is run in that directory.
    pub cmd: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A package run by a package runner.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Package {
    /// The package name, perhaps with a version (`@scope/name@1.2.3`, `name@latest`).
    pub package: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl Distribution {
    /// The kinds offered, in the order they are listed: `["npx", "binary"]`.
    pub fn kinds(&self) -> Vec<Kind> {
        let mut kinds = Vec::new();
        if self.binary.is_some() {
            kinds.push(Kind::Binary);
        }
        if self.npx.is_some() {
            kinds.push(Kind::Npx);
        }
        if self.uvx.is_some() {
            kinds.push(Kind::Uvx);
        }
        kinds
    }
}

impl Registry {
    /// Reads a registry in the published shape from `text`.
    pub fn parse(text: &str, origin: Origin) -> Result<Registry, RegistryError> {
        let document: serde_json::Value =
            serde_json::from_str(text).map_err(RegistryError::NotJson)?;
        let Some(object) = document.as_object() else {
            return Err(RegistryError::NotAnObject);
        };
        let Some(entries) = object.get("agents").and_then(|agents| agents.as_array()) else {
            return Err(RegistryError::NoAgentsArray);
        };
        let version = object
            .get("version")
            .and_then(|version| version.as_str())
            .unwrap_or("")
            .to_owned();
        let mut agents: Vec<Agent> = Vec::with_capacity(entries.len());
        let mut unreadable = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let id = entry.get("id").and_then(|id| id.as_str());
            let named = match id {
                Some(id) => format!("agents[{index}] (\"{id}\")"),
                None => format!("agents[{index}]"),
            };
            match Agent::deserialize(entry) {
                Ok(agent) if agent.distribution.kinds().is_empty() => {
                    unreadable.push(format!("{named}: its `distribution` is empty"));
                }
                Ok(agent) if agents.iter().any(|seen| seen.id == agent.id) => {
                    unreadable.push(format!("{named}: the id is listed twice"));
                }
                Ok(agent) => agents.push(agent),
                Err(error) => unreadable.push(format!("{named}: {error}")),
            }
        }
        Ok(Registry {
            version,
            agents,
            unreadable,
            origin,
        })
    }

    /// Reads a registry file (`registry_file`, `--registry-file`).
    pub fn from_file(path: &Path) -> Result<Registry, RegistryError> {
        let text =
            std::fs::read_to_string(path).map_err(|error| RegistryError::FileUnreadable {
                path: path.to_path_buf(),
                source: error,
            })?;
        Registry::parse(&text, Origin::File(path.to_path_buf())).map_err(|error| {
            RegistryError::FileNotARegistry {
                path: path.to_path_buf(),
                source: Box::new(error),
            }
        })
    }

    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|agent| agent.id == id)
    }

    /// The ids a mistyped `id` may have meant: close in spelling, or containing it (or
    /// contained in it), at most three, closest first.
    pub fn close_matches(&self, id: &str) -> Vec<&str> {
        let ids: Vec<&str> = self.agents.iter().map(|agent| agent.id.as_str()).collect();
        crate::suggest::close_matches(id, &ids, 3)
    }

    /// "unknown agent id ... " with close matches, for a config error or the CLI.
    pub fn unknown_id_message(&self, id: &str) -> String {
        let matches = self.close_matches(id);
        let suggestion = match matches.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean `{one}`?"),
            many => format!(
                "; did you mean one of {}?",
                many.iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        format!(
            "agent `{id}` is not in {}{suggestion} (`acp-conductor agents` lists them)",
            self.origin.describe()
        )
    }
}

#[cfg(test)]
mod tests;
