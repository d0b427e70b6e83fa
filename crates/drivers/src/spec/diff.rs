//! What a reload from one resolved `Config` to another would change: each component matched
//! by name as kept, moved, replaced (saying what differs), added or removed, and the agent.
//!
//! Pure data over two `Config`s and the digests of their `.wasm` files; it must not know how a
//! change is carried out (that is the supervisor's and the core's) nor how a file is read.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{AgentSpec, CommandSpec, Config, ProxyLaunch, ProxySpec, RemoteSpec, WasmSpec};

/// The SHA-256 of each file a config names, as read when the config was loaded: each local
/// `.wasm` file, and each policy file a proxy's command is given (`--policy FILE`, as
/// `acp-tool-guard` takes it). A proxy rebuilt in place (same path, new bytes), or whose policy
/// file was edited, is a changed proxy. Other arguments are not read: a file a proxy writes
/// (a log, a record) must not count as a change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDigests(BTreeMap<PathBuf, [u8; 32]>);

impl FileDigests {
    /// Reads every file `config` names; a file that cannot be read has no digest (starting
    /// its proxy will say why).
    pub fn of(config: &Config) -> FileDigests {
        let mut digests = BTreeMap::new();
        let mut add = |path: PathBuf| {
            if let Ok(bytes) = std::fs::read(&path) {
                digests.insert(path, Sha256::digest(&bytes).into());
            }
        };
        for proxy in &config.proxies {
            match &proxy.launch {
                ProxyLaunch::Wasm(wasm) => add(wasm.module.clone()),
                ProxyLaunch::Native(command) => {
                    command.policy_files().into_iter().for_each(&mut add)
                }
                ProxyLaunch::Remote(_) => {}
            }
        }
        FileDigests(digests)
    }

    /// A digest as if `path` held it; for tests and for callers that hashed already.
    pub fn insert(&mut self, path: PathBuf, digest: [u8; 32]) {
        self.0.insert(path, digest);
    }

    fn get(&self, path: &Path) -> Option<&[u8; 32]> {
        self.0.get(path)
    }
}

impl CommandSpec {
    /// The files given as `--policy FILE` or `--policy=FILE` that exist (relative ones from
    /// its working directory, else the conductor's), as absolute paths.
    pub fn policy_files(&self) -> Vec<PathBuf> {
        let after_flag = self
            .args
            .windows(2)
            .filter(|pair| pair[0] == POLICY_OPTION)
            .map(|pair| pair[1].as_str());
        let joined = self.args.iter().filter_map(|arg| {
            arg.strip_prefix(POLICY_OPTION)
                .and_then(|rest| rest.strip_prefix('='))
        });
        after_flag
            .chain(joined)
            .filter_map(|arg| {
                let path = Path::new(arg);
                let path = match (&self.cwd, path.is_absolute()) {
                    (_, true) => path.to_path_buf(),
                    (Some(cwd), false) => cwd.join(path),
                    (None, false) => std::path::absolute(path).ok()?,
                };
                path.is_file().then_some(path)
            })
            .collect()
    }
}

/// The option a proxy's policy file follows (`acp-tool-guard --policy FILE`).
const POLICY_OPTION: &str = "--policy";

/// A resolved config with the digests of its `.wasm` files, as one side of a diff.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub config: &'a Config,
    pub digests: &'a FileDigests,
}

/// Everything a reload from one config to another would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainDiff {
    /// The proxies of the new chain in its order, then the removed ones in their old order.
    pub proxies: Vec<ProxyChange>,
    pub agent: AgentChange,
    /// `[conductor]` settings that differ; a reload does not apply them (a restart does).
    pub conductor: Vec<&'static str>,
}

impl ChainDiff {
    /// Nothing would change: a reload to the new config is skipped.
    pub fn is_empty(&self) -> bool {
        self.agent == AgentChange::Kept
            && self.conductor.is_empty()
            && self
                .proxies
                .iter()
                .all(|change| matches!(change, ProxyChange::Kept { .. }))
    }
}

/// What happens to one proxy. Positions count from 0, next to the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyChange {
    /// Same spec; its place among the proxies kept is the same.
    Kept {
        name: String,
        position: usize,
    },
    /// Same spec, but it now comes before or after another proxy it did not before.
    Moved {
        name: String,
        from: usize,
        to: usize,
    },
    /// A new instance with the new spec takes its place (at its new place when `moved`).
    Replaced {
        name: String,
        from: usize,
        to: usize,
        what: Vec<Difference>,
        /// It also comes before or after another proxy it did not before.
        moved: bool,
    },
    Added {
        name: String,
        position: usize,
    },
    Removed {
        name: String,
        position: usize,
    },
}

impl ProxyChange {
    pub fn name(&self) -> &str {
        match self {
            ProxyChange::Kept { name, .. }
            | ProxyChange::Moved { name, .. }
            | ProxyChange::Replaced { name, .. }
            | ProxyChange::Added { name, .. }
            | ProxyChange::Removed { name, .. } => name,
        }
    }

    /// Whether a new instance of the proxy must be started.
    pub fn starts_instance(&self) -> bool {
        matches!(
            self,
            ProxyChange::Replaced { .. } | ProxyChange::Added { .. }
        )
    }
}

/// What happens to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentChange {
    Kept,
    /// The agent's spec differs; whether it is restarted is `on_reload`'s to say.
    Changed(Vec<Difference>),
}

/// One way a component's spec differs. Values that may be secret (environment values, header
/// values) are never held, only their names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// Runs another way: a command, a `wasm` file, a URL, or none (proxy mode's successor).
    Kind {
        from: &'static str,
        to: &'static str,
    },
    Program {
        from: PathBuf,
        to: PathBuf,
    },
    Args,
    /// The named variables were added, removed or given another value.
    Env(Vec<String>),
    Cwd,
    WasmFile {
        from: String,
        to: String,
    },
    /// Same `.wasm` file, other bytes (rebuilt in place).
    WasmHash,
    /// The `--policy` file has other bytes (an edited policy).
    PolicyFile(PathBuf),
    /// `[proxy.sandbox]` directories or passed variables.
    Grants,
    /// `[proxy.sandbox]` memory or message timeout.
    Limits,
    Url,
    /// The named headers were added, removed or given another value.
    Headers(Vec<String>),
    Protocol,
    /// `on_failure`, `restart_then`, `startup_timeout` or `request_timeout`.
    FailurePolicy,
    Shared,
    /// The name written in the config (`name` of `[agent]`).
    Name,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Kind { from, to } => write!(f, "{from} -> {to}"),
            Difference::Program { from, to } => {
                write!(f, "command {} -> {}", from.display(), to.display())
            }
            Difference::Args => f.write_str("args"),
            Difference::Env(names) => write!(f, "env ({})", names.join(", ")),
            Difference::Cwd => f.write_str("cwd"),
            Difference::WasmFile { from, to } => write!(f, "wasm {from} -> {to}"),
            Difference::WasmHash => f.write_str("wasm file's contents"),
            Difference::PolicyFile(path) => write!(f, "contents of {}", path.display()),
            Difference::Grants => f.write_str("sandbox grants"),
            Difference::Limits => f.write_str("sandbox limits"),
            Difference::Url => f.write_str("url"),
            Difference::Headers(names) => write!(f, "headers ({})", names.join(", ")),
            Difference::Protocol => f.write_str("protocol"),
            Difference::FailurePolicy => f.write_str("failure policy"),
            Difference::Shared => f.write_str("shared"),
            Difference::Name => f.write_str("name"),
        }
    }
}

impl fmt::Display for ProxyChange {
    /// "kept `a`", "moved `a` (2 -> 1)", "replaced `a` (args, env (KEY))", "added `a` at 1",
    /// "removed `a`": how a reload's log line and `check --diff` name a change.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyChange::Kept { name, .. } => write!(f, "kept `{name}`"),
            ProxyChange::Moved { name, from, to } => write!(f, "moved `{name}` ({from} -> {to})"),
            ProxyChange::Replaced {
                name,
                what,
                moved: false,
                ..
            } => write!(f, "replaced `{name}` ({})", joined(what)),
            ProxyChange::Replaced {
                name,
                what,
                moved: true,
                from,
                to,
            } => write!(
                f,
                "replaced `{name}` ({}) and moved ({from} -> {to})",
                joined(what)
            ),
            ProxyChange::Added { name, position } => write!(f, "added `{name}` at {position}"),
            ProxyChange::Removed { name, .. } => write!(f, "removed `{name}`"),
        }
    }
}

fn joined(differences: &[Difference]) -> String {
    differences
        .iter()
        .map(Difference::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for ChainDiff {
    /// One line per change, proxies first, then the agent and the settings not applied.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in &self.proxies {
            writeln!(f, "{change}")?;
        }
        match &self.agent {
            AgentChange::Kept => writeln!(f, "kept the agent")?,
            AgentChange::Changed(what) => writeln!(f, "agent changed ({})", joined(what))?,
        }
        for setting in &self.conductor {
            writeln!(f, "[conductor] {setting} changed (applied on restart only)")?;
        }
        Ok(())
    }
}

/// What a reload from `old` to `new` would do.
pub fn diff(old: Side<'_>, new: Side<'_>) -> ChainDiff {
    let old_position = |name: &str| old.config.proxies.iter().position(|p| p.name == name);
    // Proxies present in both, in new order, with their old positions: those off the longest
    // run that keeps the old order are the ones that moved.
    let common: Vec<(usize, usize)> = new
        .config
        .proxies
        .iter()
        .enumerate()
        .filter_map(|(to, proxy)| old_position(&proxy.name).map(|from| (from, to)))
        .collect();
    let in_order = longest_increasing(&common.iter().map(|&(from, _)| from).collect::<Vec<_>>());
    let mut proxies = Vec::new();
    let mut common_index = 0;
    for (to, proxy) in new.config.proxies.iter().enumerate() {
        let Some(from) = old_position(&proxy.name) else {
            proxies.push(ProxyChange::Added {
                name: proxy.name.clone(),
                position: to,
            });
            continue;
        };
        let kept_order = in_order.contains(&common_index);
        common_index += 1;
        let what = proxy_differences(&old.config.proxies[from], old.digests, proxy, new.digests);
        let name = proxy.name.clone();
        proxies.push(if !what.is_empty() {
            ProxyChange::Replaced {
                name,
                from,
                to,
                what,
                moved: !kept_order,
            }
        } else if kept_order {
            ProxyChange::Kept { name, position: to }
        } else {
            ProxyChange::Moved { name, from, to }
        });
    }
    for (position, proxy) in old.config.proxies.iter().enumerate() {
        if !new.config.proxies.iter().any(|p| p.name == proxy.name) {
            proxies.push(ProxyChange::Removed {
                name: proxy.name.clone(),
                position,
            });
        }
    }
    let mut agent = agent_differences(old.config.agent.as_ref(), new.config.agent.as_ref());
    if old.config.agent_failure != new.config.agent_failure {
        agent.push(Difference::FailurePolicy);
    }
    ChainDiff {
        proxies,
        agent: if agent.is_empty() {
            AgentChange::Kept
        } else {
            AgentChange::Changed(agent)
        },
        conductor: conductor_differences(old.config, new.config),
    }
}

/// Indices into `values` of one longest strictly increasing subsequence (the earliest-ending
/// one on ties), by patience sorting.
fn longest_increasing(values: &[usize]) -> Vec<usize> {
    // tails[k]: index of the smallest last value of an increasing run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = vec![None; values.len()];
    for (index, &value) in values.iter().enumerate() {
        let length = tails.partition_point(|&tail| values[tail] < value);
        previous[index] = length.checked_sub(1).map(|k| tails[k]);
        if length == tails.len() {
            tails.push(index);
        } else {
            tails[length] = index;
        }
    }
    let mut run = Vec::with_capacity(tails.len());
    let mut next = tails.last().copied();
    while let Some(index) = next {
        run.push(index);
        next = previous[index];
    }
    run.reverse();
    run
}

fn proxy_differences(
    old: &ProxySpec,
    old_digests: &FileDigests,
    new: &ProxySpec,
    new_digests: &FileDigests,
) -> Vec<Difference> {
    let mut what = match (&old.launch, &new.launch) {
        (ProxyLaunch::Native(a), ProxyLaunch::Native(b)) => {
            let mut what = command_differences(a, b);
            if what.is_empty() {
                what.extend(
                    b.policy_files()
                        .into_iter()
                        .filter(|file| old_digests.get(file) != new_digests.get(file))
                        .map(Difference::PolicyFile),
                );
            }
            what
        }
        (ProxyLaunch::Wasm(a), ProxyLaunch::Wasm(b)) => {
            wasm_differences(a, old_digests, b, new_digests)
        }
        (ProxyLaunch::Remote(a), ProxyLaunch::Remote(b)) => remote_differences(a, b),
        (a, b) => vec![Difference::Kind {
            from: launch_kind(a),
            to: launch_kind(b),
        }],
    };
    if old.protocol != new.protocol {
        what.push(Difference::Protocol);
    }
    if old.failure != new.failure {
        what.push(Difference::FailurePolicy);
    }
    if old.shared != new.shared {
        what.push(Difference::Shared);
    }
    what
}

fn launch_kind(launch: &ProxyLaunch) -> &'static str {
    match launch {
        ProxyLaunch::Native(_) => "command",
        ProxyLaunch::Wasm(_) => "wasm",
        ProxyLaunch::Remote(_) => "url",
    }
}

fn agent_kind(agent: Option<&AgentSpec>) -> &'static str {
    match agent {
        Some(AgentSpec::Command(_)) => "command",
        Some(AgentSpec::Builtin { .. }) => "builtin",
        Some(AgentSpec::Remote(_)) => "url",
        None => "the parent's successor",
    }
}

fn agent_differences(old: Option<&AgentSpec>, new: Option<&AgentSpec>) -> Vec<Difference> {
    match (old, new) {
        (None, None) => Vec::new(),
        (Some(AgentSpec::Command(a)), Some(AgentSpec::Command(b)))
        | (
            Some(AgentSpec::Builtin { command: a, .. }),
            Some(AgentSpec::Builtin { command: b, .. }),
        ) => {
            let mut what = command_differences(a, b);
            if a.name != b.name {
                what.push(Difference::Name);
            }
            what
        }
        (Some(AgentSpec::Remote(a)), Some(AgentSpec::Remote(b))) => {
            let mut what = remote_differences(a, b);
            if a.name != b.name {
                what.push(Difference::Name);
            }
            what
        }
        (a, b) => vec![Difference::Kind {
            from: agent_kind(a),
            to: agent_kind(b),
        }],
    }
}

fn command_differences(old: &CommandSpec, new: &CommandSpec) -> Vec<Difference> {
    let mut what = Vec::new();
    if old.program != new.program {
        what.push(Difference::Program {
            from: old.program.clone(),
            to: new.program.clone(),
        });
    }
    if old.args != new.args {
        what.push(Difference::Args);
    }
    let env = changed_names(&old.env, &new.env);
    if !env.is_empty() {
        what.push(Difference::Env(env));
    }
    if old.cwd != new.cwd {
        what.push(Difference::Cwd);
    }
    what
}

fn wasm_differences(
    old: &WasmSpec,
    old_digests: &FileDigests,
    new: &WasmSpec,
    new_digests: &FileDigests,
) -> Vec<Difference> {
    let mut what = Vec::new();
    let source = |wasm: &WasmSpec| match &wasm.download {
        Some(download) => format!("{} (SHA-256 {})", download.url, download.sha256_hex()),
        None => wasm.module.display().to_string(),
    };
    let (from, to) = (source(old), source(new));
    if from != to {
        what.push(Difference::WasmFile { from, to });
    } else if old_digests.get(&old.module) != new_digests.get(&new.module) {
        what.push(Difference::WasmHash);
    }
    if old.args != new.args {
        what.push(Difference::Args);
    }
    let env = changed_names(&old.env, &new.env);
    if !env.is_empty() {
        what.push(Difference::Env(env));
    }
    if old.sandbox.dirs != new.sandbox.dirs || old.sandbox.pass_env != new.sandbox.pass_env {
        what.push(Difference::Grants);
    }
    if old.sandbox.memory != new.sandbox.memory
        || old.sandbox.message_timeout != new.sandbox.message_timeout
    {
        what.push(Difference::Limits);
    }
    what
}

fn remote_differences(old: &RemoteSpec, new: &RemoteSpec) -> Vec<Difference> {
    let mut what = Vec::new();
    if old.url != new.url {
        what.push(Difference::Url);
    }
    let headers = changed_names(&old.headers, &new.headers);
    if !headers.is_empty() {
        what.push(Difference::Headers(headers));
    }
    what
}

/// Names whose value was added, removed or changed, in the order first seen (old, then new);
/// a reordering of the same pairs changes the order children see them in, so it counts too.
fn changed_names(old: &[(String, String)], new: &[(String, String)]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let value = |pairs: &[(String, String)], name: &str| {
        pairs
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect::<Vec<_>>()
    };
    for (name, _) in old.iter().chain(new) {
        if !names.contains(name) && value(old, name) != value(new, name) {
            names.push(name.clone());
        }
    }
    if names.is_empty() && old != new {
        names = new.iter().map(|(name, _)| name.clone()).collect();
        names.dedup();
    }
    names
}

fn conductor_differences(old: &Config, new: &Config) -> Vec<&'static str> {
    let (a, b) = (&old.conductor, &new.conductor);
    let mut changed = Vec::new();
    if a.mode != b.mode {
        changed.push("mode");
    }
    if a.max_line != b.max_line {
        changed.push("max_line");
    }
    if a.write_timeout != b.write_timeout {
        changed.push("write_timeout");
    }
    if a.shutdown_grace != b.shutdown_grace {
        changed.push("shutdown_grace");
    }
    if a.queue_limit != b.queue_limit {
        changed.push("queue_limit");
    }
    if a.cache_dir != b.cache_dir {
        changed.push("cache_dir");
    }
    if a.trace != b.trace {
        changed.push("trace");
    }
    if a.mcp_bridge != b.mcp_bridge {
        changed.push("mcp_bridge");
    }
    if a.watch != b.watch {
        changed.push("watch");
    }
    if a.reload_open != b.reload_open {
        changed.push("reload_open");
    }
    if a.otlp != b.otlp {
        changed.push("otlp");
    }
    changed
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
