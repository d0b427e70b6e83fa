//! The `conductor.toml` schema: which tables and keys exist, their types and their defaults.
//! Must not know how a chain runs: it only turns a parsed document into a `Config` or errors.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::diagnostics::{ConfigErrorKind, Diagnostics};
use super::interpolate::{InterpolationError, interpolate, references};
use super::observe::{ProgramLookup, Recorder, VariableUse};
use super::resolve::{ProgramSearch, ResolveError, relative_to, resolve_dir, resolve_program};
use super::{
    AgentSpec, BridgeForm, BuiltinAgent, CommandSpec, ConductorSettings, Config, FailurePolicy,
    Mode, OnReload, ProxyLaunch, ProxyProtocol, ProxySpec, SizeError, parse_duration, parse_size,
    size_from_integer,
};
use crate::suggest::did_you_mean;
use failure::Component;

mod failure;
mod registry;
mod remote;
mod trace;
mod wasm;

const ROOT_KEYS: &[&str] = &["conductor", "agent", "proxy"];
const CONDUCTOR_KEYS: &[&str] = &[
    "mode",
    "max_line",
    "write_timeout",
    "shutdown_grace",
    "queue_limit",
    "cache_dir",
    "trace",
    "trace_payloads",
    "redact",
    "mcp_bridge",
    "watch",
    "reload_open",
    "otlp",
];
const AGENT_KEYS: &[&str] = &[
    "command",
    "builtin",
    "registry",
    "registry_file",
    "url",
    "headers",
    "args",
    "env",
    "cwd",
    "name",
    "on_failure",
    "on_reload",
    "restart_then",
    "startup_timeout",
    "request_timeout",
];
/// Keys that only make sense for an agent the conductor launches itself.
const LAUNCH_ONLY_AGENT_KEYS: &[&str] = &["args", "env", "cwd", "name"];
const PROXY_KEYS: &[&str] = &[
    "name",
    "command",
    "wasm",
    "url",
    "headers",
    "args",
    "env",
    "cwd",
    "enabled",
    "protocol",
    "shared",
    "sandbox",
    "sha256",
    "on_failure",
    "restart_then",
    "startup_timeout",
    "request_timeout",
];

const MODES: &[(&str, Mode)] = &[("agent", Mode::Agent), ("proxy", Mode::Proxy)];
const BUILTINS: &[(&str, BuiltinAgent)] = &[("demo", BuiltinAgent::Demo)];
const PROTOCOLS: &[(&str, ProxyProtocol)] = &[
    ("auto", ProxyProtocol::Auto),
    ("rfd", ProxyProtocol::Rfd),
    ("underscore", ProxyProtocol::Underscore),
];

const ON_RELOAD: &[(&str, OnReload)] = &[("keep", OnReload::Keep), ("restart", OnReload::Restart)];
const MCP_BRIDGES: &[(&str, BridgeForm)] = &[
    ("auto", BridgeForm::Auto),
    ("http", BridgeForm::Http),
    ("stdio", BridgeForm::Stdio),
];

const DEFAULT_AGENT_NAME: &str = "agent";

type Key<'i> = Spanned<DeString<'i>>;
type Value<'i> = Spanned<DeValue<'i>>;

/// What validation may consult besides the file itself.
pub(crate) struct Surroundings<'a> {
    pub(crate) vars: &'a dyn Fn(&str) -> Option<String>,
    pub(crate) exe_dir: Option<&'a Path>,
    /// Directory of the configuration file: relative paths are relative to it.
    pub(crate) config_dir: &'a Path,
    /// A mode chosen on the command line (`run --proxy`), which wins over the file's.
    pub(crate) mode: Option<Mode>,
    /// Where what was looked up is noted, for `doctor`.
    pub(crate) recorder: Recorder<'a>,
}

/// Which checks apply to a value.
///
/// A disabled proxy is checked for mistakes in the file only, not against this machine
/// (unset variables, missing programs or directories), so that a proxy can be switched
/// off exactly where its program or its variables are missing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    FileOnly,
    FileAndMachine,
}

/// Validates the whole document, recording every error in `diagnostics`; returns the
/// configuration only when there were none.
pub(crate) fn validate(
    root: &DeTable<'_>,
    file: PathBuf,
    surroundings: &Surroundings<'_>,
    diagnostics: &mut Diagnostics<'_>,
) -> Option<Config> {
    let mut validator = Validator {
        diagnostics,
        surroundings,
        cache_dir: None,
    };
    validator.unknown_keys(root, "at the top level", ROOT_KEYS);
    let mut conductor = validator.conductor(root.get("conductor"));
    if let Some(mode) = surroundings.mode {
        conductor.mode = mode;
    }
    if conductor.cache_dir.is_none() {
        conductor.cache_dir = crate::cache_dir::default_cache_dir(surroundings.vars);
    }
    validator.cache_dir.clone_from(&conductor.cache_dir);
    let (agent, agent_name, agent_failure) = match root.get("agent") {
        Some(value) => validator.agent(value),
        None if conductor.mode == Mode::Proxy => (None, None, Some(FailurePolicy::default())),
        None => {
            validator.error(
                0..0,
                "missing [agent] table: it needs `command` (a program to run) or \
                 `builtin = \"demo\"` (a conductor nested in another one sets \
                 `mode = \"proxy\"` in [conductor] instead)",
            );
            (None, None, None)
        }
    };
    let proxies = root
        .get("proxy")
        .map(|value| validator.proxies(value, agent_name.as_ref()))
        .unwrap_or_default();
    if validator.diagnostics.has_errors() {
        return None;
    }
    let agent_on_reload = root
        .get("agent")
        .and_then(|value| value.get_ref().as_table())
        .and_then(|table| table.get("on_reload"))
        .and_then(|value| validator.choice("on_reload", value, ON_RELOAD, Scope::FileOnly))
        .unwrap_or_default();
    if validator.diagnostics.has_errors() {
        return None;
    }
    Some(Config {
        file,
        conductor,
        agent,
        proxies,
        agent_failure: agent_failure?,
        agent_on_reload,
    })
}

/// The name of a `command` agent, for the check that component names are distinct.
struct AgentName {
    name: String,
    /// Whether the name is the default one rather than written in the file.
    defaulted: bool,
}

struct Validator<'v, 's, 'a> {
    diagnostics: &'v mut Diagnostics<'s>,
    surroundings: &'a Surroundings<'a>,
    /// `[conductor]`'s cache directory, once read: the published registry is cached there.
    cache_dir: Option<PathBuf>,
}

impl Validator<'_, '_, '_> {
    fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.diagnostics.error_at(span.start, message);
    }

    fn unknown_keys(&mut self, table: &DeTable<'_>, place: &str, known: &[&str]) {
        for (key, _) in entries(table) {
            let name: &str = key.get_ref();
            if !known.contains(&name) {
                let suggestion = did_you_mean(name, known, '`');
                self.error(
                    key.span(),
                    format!("unknown key `{name}` {place}{suggestion}"),
                );
            }
        }
    }

    fn conductor(&mut self, value: Option<&Value<'_>>) -> ConductorSettings {
        let mut settings = ConductorSettings::default();
        let Some(table) = value.and_then(|value| self.table("conductor", value)) else {
            return settings;
        };
        let scope = Scope::FileAndMachine;
        self.unknown_keys(table, "in [conductor]", CONDUCTOR_KEYS);
        if let Some(mode) = table
            .get("mode")
            .and_then(|value| self.choice("mode", value, MODES, scope))
        {
            settings.mode = mode;
        }
        if let Some(bytes) = table
            .get("max_line")
            .and_then(|value| self.size("max_line", value, scope))
        {
            settings.max_line = bytes;
        }
        if let Some(bytes) = table
            .get("queue_limit")
            .and_then(|value| self.size("queue_limit", value, scope))
        {
            settings.queue_limit = bytes;
        }
        if let Some(timeout) = table
            .get("write_timeout")
            .and_then(|value| self.duration("write_timeout", value, scope))
        {
            // A zero timeout would fail every peer on its first write.
            if timeout.is_zero() {
                self.error(
                    table["write_timeout"].span(),
                    "`write_timeout` must be longer than zero",
                );
            } else {
                settings.write_timeout = timeout;
            }
        }
        if let Some(grace) = table
            .get("shutdown_grace")
            .and_then(|value| self.duration("shutdown_grace", value, scope))
        {
            settings.shutdown_grace = grace;
        }
        if let Some(form) = table
            .get("mcp_bridge")
            .and_then(|value| self.choice("mcp_bridge", value, MCP_BRIDGES, scope))
        {
            settings.mcp_bridge = form;
        }
        if let Some(value) = table.get("cache_dir") {
            settings.cache_dir = self.cache_dir(value, scope);
        }
        if let Some(watch) = table
            .get("watch")
            .and_then(|value| self.boolean("watch", value))
        {
            settings.watch = watch;
        }
        if let Some(reload_open) = table
            .get("reload_open")
            .and_then(|value| self.boolean("reload_open", value))
        {
            settings.reload_open = reload_open;
        }
        self.trace_settings(table, &mut settings.trace, scope);
        if let Some(value) = table.get("otlp") {
            settings.otlp = self.otlp_endpoint(value, scope);
        }
        settings
    }

    /// The agent, when valid, its name, when it has one, even if the rest is invalid, and
    /// its failure policy.
    fn agent(
        &mut self,
        value: &Value<'_>,
    ) -> (Option<AgentSpec>, Option<AgentName>, Option<FailurePolicy>) {
        let Some(table) = self.table("agent", value) else {
            return (None, None, None);
        };
        let scope = Scope::FileAndMachine;
        self.unknown_keys(table, "in [agent]", AGENT_KEYS);
        let failure = self.failure_policy(table, Component::Agent, scope);
        let (spec, name) = self.agent_launch(value, table, scope);
        (spec, name, failure)
    }

    /// The launch keys of `[agent]`.
    fn agent_launch(
        &mut self,
        value: &Value<'_>,
        table: &DeTable<'_>,
        scope: Scope,
    ) -> (Option<AgentSpec>, Option<AgentName>) {
        let command = table.get_key_value("command");
        let builtin = table.get_key_value("builtin");
        let registry = table.get_key_value("registry");
        let url = table.get_key_value("url");
        self.refuse_headers_without_url(table, "[agent]");
        if registry.is_none()
            && let Some((key, _)) = table.get_key_value("registry_file")
        {
            self.error(
                key.span(),
                "`registry_file` only says where `registry = \"<id>\"` looks the agent up; \
                 set `registry` too, or remove it",
            );
        }
        let chosen: Vec<(&str, usize)> = [
            ("command", command),
            ("builtin", builtin),
            ("registry", registry),
            ("url", url),
        ]
        .into_iter()
        .filter_map(|(name, entry)| entry.map(|(key, _)| (name, key.span().start)))
        .collect();
        if let [(first, _), (second, _), ..] = chosen.as_slice() {
            let later = chosen.iter().map(|(_, start)| *start).max().unwrap_or(0);
            self.error(
                later..later,
                format!("[agent] sets both `{first}` and `{second}`; keep one of them"),
            );
            // Checked only so that their own mistakes are reported in the same pass.
            if let Some((_, builtin)) = builtin {
                self.choice("builtin", builtin, BUILTINS, scope);
            }
            let name = self.agent_name(table, DEFAULT_AGENT_NAME, scope);
            self.launch(table, None, scope);
            return (None, name);
        }
        if let (None, Some((_, builtin))) = (command, builtin) {
            for (key, _) in entries(table) {
                let name: &str = key.get_ref();
                if LAUNCH_ONLY_AGENT_KEYS.contains(&name) {
                    self.error(
                        key.span(),
                        format!(
                            "`{name}` applies only to an agent started with `command` or \
                             `registry`, not to `builtin`"
                        ),
                    );
                }
            }
            let spec = self
                .choice("builtin", builtin, BUILTINS, scope)
                .and_then(|agent| self.builtin_agent(agent, builtin.span()));
            return (spec, None);
        }
        if let Some((_, registry)) = registry {
            return self.registry_agent(table, registry, scope);
        }
        if url.is_some() {
            let name = self.agent_name(table, DEFAULT_AGENT_NAME, scope);
            let launch_name = name.as_ref().map(|name| name.name.clone());
            let remote = self.remote_launch(table, "[agent]", launch_name, scope);
            return (remote.map(AgentSpec::Remote), name);
        }
        let name = self.agent_name(table, DEFAULT_AGENT_NAME, scope);
        let launch = self.launch(table, name.as_ref().map(|name| name.name.clone()), scope);
        if command.is_none() {
            self.error(
                value.span(),
                "[agent] needs `command` (a program to run), `registry = \"<id>\"` (an agent \
                 from the ACP registry), `url` (an agent served elsewhere) or \
                 `builtin = \"demo\"`",
            );
            return (None, name);
        }
        (launch.map(AgentSpec::Command), name)
    }

    /// `[agent] name`, or `default` when the file gives none.
    fn agent_name(
        &mut self,
        table: &DeTable<'_>,
        default: &str,
        scope: Scope,
    ) -> Option<AgentName> {
        match table.get("name") {
            Some(value) => self.name(value, scope).map(|name| AgentName {
                name,
                defaulted: false,
            }),
            None => Some(AgentName {
                name: default.to_owned(),
                defaulted: true,
            }),
        }
    }

    fn proxies(&mut self, value: &Value<'_>, agent_name: Option<&AgentName>) -> Vec<ProxySpec> {
        let Some(items) = value.get_ref().as_array() else {
            self.error(
                value.span(),
                format!(
                    "`proxy` must be an array of tables (write [[proxy]]), found {}",
                    value.get_ref().type_str()
                ),
            );
            return Vec::new();
        };
        let mut seen_names: Vec<(String, usize)> = Vec::new();
        let mut proxies = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let (proxy, name) = self.proxy(index + 1, item);
            if let Some((name, span)) = name {
                if let Some((_, first)) = seen_names.iter().find(|(seen, _)| *seen == name) {
                    let first_line = self.diagnostics.line_of(*first);
                    self.error(
                        span.clone(),
                        format!("duplicate proxy name `{name}` (first used on line {first_line})"),
                    );
                } else if let Some(agent_name) = agent_name
                    && agent_name.name == name
                {
                    let origin = if agent_name.defaulted {
                        format!(
                            " (the agent is named `{}` unless [agent] sets `name`)",
                            agent_name.name
                        )
                    } else {
                        String::new()
                    };
                    self.error(
                        span.clone(),
                        format!(
                            "proxy name `{name}` is also the agent's name{origin}; every \
                             component needs its own name for logs and errors"
                        ),
                    );
                }
                seen_names.push((name, span.start));
            }
            proxies.extend(proxy);
        }
        proxies
    }

    /// One `[[proxy]]` entry: the spec when it is valid and enabled, and its name when it
    /// has a valid one.
    fn proxy(
        &mut self,
        number: usize,
        value: &Value<'_>,
    ) -> (Option<ProxySpec>, Option<(String, Range<usize>)>) {
        let Some(table) = value.get_ref().as_table() else {
            self.error(
                value.span(),
                format!(
                    "[[proxy]] entries must be tables, found {}",
                    value.get_ref().type_str()
                ),
            );
            return (None, None);
        };
        let enabled = match table.get("enabled") {
            Some(value) => self.boolean("enabled", value),
            None => Some(true),
        };
        let scope = if enabled == Some(false) {
            Scope::FileOnly
        } else {
            Scope::FileAndMachine
        };
        let name = match table.get("name") {
            Some(value) => self.name(value, scope).map(|name| (name, value.span())),
            None => {
                self.error(value.span(), format!("[[proxy]] #{number} needs a `name`"));
                None
            }
        };
        let place = match &name {
            Some((name, _)) => format!("[[proxy]] \"{name}\""),
            None => format!("[[proxy]] #{number}"),
        };
        self.unknown_keys(table, &format!("in {place}"), PROXY_KEYS);
        let protocol = match table.get("protocol") {
            Some(value) => self.choice("protocol", value, PROTOCOLS, scope),
            None => Some(ProxyProtocol::default()),
        };
        let failure = self.failure_policy(table, Component::Proxy, scope);
        let shared = self.shared(table, &place);
        let launch_name = name.as_ref().map(|(name, _)| name.clone());
        self.refuse_headers_without_url(table, &place);
        let chosen: Vec<(&str, usize)> = ["command", "wasm", "url"]
            .into_iter()
            .filter_map(|key| table.get_key_value(key))
            .map(|(key, _)| (&**key.get_ref(), key.span().start))
            .collect();
        let launch = match chosen.as_slice() {
            [(first, _), (second, _), ..] => {
                let later = chosen.iter().map(|(_, start)| *start).max().unwrap_or(0);
                self.error(
                    later..later,
                    format!("{place} sets both `{first}` and `{second}`; keep one of them"),
                );
                None
            }
            [("command", _)] => {
                self.refuse_sandbox_for_native(table);
                self.refuse_sha256_without_wasm_url(table);
                self.launch(table, launch_name, scope)
                    .map(ProxyLaunch::Native)
            }
            [("wasm", _)] => self
                .wasm_launch(table, launch_name, scope)
                .map(ProxyLaunch::Wasm),
            [_] => {
                self.refuse_sha256_without_wasm_url(table);
                self.remote_launch(table, &place, launch_name, scope)
                    .map(ProxyLaunch::Remote)
            }
            [] => {
                self.error(
                    value.span(),
                    format!(
                        "{place} needs a `command` (a program to run), `wasm` (a WebAssembly \
                         proxy) or `url` (a proxy served elsewhere)"
                    ),
                );
                // Checked only so that their own mistakes are reported in the same pass.
                self.launch(table, launch_name, scope);
                None
            }
        };
        let spec = match (enabled, &name, launch, protocol, failure, shared) {
            (
                Some(true),
                Some((name, _)),
                Some(launch),
                Some(protocol),
                Some(failure),
                Some(shared),
            ) => Some(ProxySpec {
                name: name.clone(),
                launch,
                protocol,
                failure,
                shared,
            }),
            _ => None,
        };
        (spec, name)
    }

    /// `shared`: one instance for every connection of `serve`. Only a proxy the conductor
    /// starts can be shared; a `url` proxy is one server for everyone already.
    fn shared(&mut self, table: &DeTable<'_>, place: &str) -> Option<bool> {
        let Some(value) = table.get("shared") else {
            return Some(false);
        };
        let shared = self.boolean("shared", value)?;
        if shared && table.contains_key("url") {
            self.error(
                value.span(),
                format!(
                    "{place} sets `shared` with `url`: only a proxy the conductor starts \
                     (`command` or `wasm`) can be shared; a proxy served at a URL is already \
                     one server for every chain"
                ),
            );
            return None;
        }
        Some(shared)
    }

    /// `command`, `args`, `env` and `cwd` of a table; all are checked even when the name or
    /// the command is missing, so that their mistakes are reported in the same pass.
    fn launch(
        &mut self,
        table: &DeTable<'_>,
        name: Option<String>,
        scope: Scope,
    ) -> Option<CommandSpec> {
        let program = table.get("command").and_then(|command| {
            self.string("command", command, scope)
                .and_then(|text| self.program(&text, command.span(), scope, name.as_deref()))
        });
        let args = match table.get("args") {
            Some(value) => self.string_array("args", value, scope),
            None => Some(Vec::new()),
        };
        let env = match table.get("env") {
            Some(value) => self.string_table("env", value, scope),
            None => Some(Vec::new()),
        };
        let cwd = match table.get("cwd") {
            Some(value) => self
                .string("cwd", value, scope)
                .and_then(|text| self.working_dir(&text, value.span(), scope))
                .map(Some),
            None => Some(None),
        };
        Some(CommandSpec {
            name: name?,
            program: program?,
            args: args?,
            env: env?,
            cwd: cwd?,
        })
    }

    fn program(
        &mut self,
        command: &str,
        span: Range<usize>,
        scope: Scope,
        component: Option<&str>,
    ) -> Option<PathBuf> {
        if command.is_empty() {
            self.error(span, "`command` must not be empty");
            return None;
        }
        if scope == Scope::FileOnly {
            // Left unresolved: only disabled proxies skip the lookup, and their spec is
            // dropped once validated.
            return Some(PathBuf::from(command));
        }
        let found = self.look_up(command, span.clone(), component);
        found
            .map_err(|error| self.error(span, error.to_string()))
            .ok()
    }

    /// Resolves `command` as a `command` value is, noting a bare name's lookup for `doctor`.
    fn look_up(
        &mut self,
        command: &str,
        span: Range<usize>,
        component: Option<&str>,
    ) -> Result<PathBuf, ResolveError> {
        let found = resolve_program(
            command,
            self.surroundings.config_dir,
            &self.program_search(),
        );
        if !command.contains('/') {
            let (line, column) = self.diagnostics.line_and_column(span.start);
            self.surroundings.recorder.record(|notes| {
                notes.programs.push(ProgramLookup {
                    component: component.map(str::to_owned),
                    command: command.to_owned(),
                    line,
                    column,
                    found: found.as_ref().ok().cloned(),
                })
            });
        }
        found
    }

    /// An agent shipped with the conductor: its program is looked up as a bare `command`
    /// name is, and a missing one is reported at the `builtin` value.
    fn builtin_agent(&mut self, agent: BuiltinAgent, span: Range<usize>) -> Option<AgentSpec> {
        let program = agent.program();
        let found = self.look_up(program, span.clone(), Some(agent.name()));
        let program = found
            .map_err(|message| {
                self.error(
                    span,
                    format!(
                        "{message}: `builtin = \"{}\"` runs it as the agent (build it with \
                         `cargo build -p {}`, or install it next to acp-conductor)",
                        agent.name(),
                        agent.package()
                    ),
                )
            })
            .ok()?;
        Some(AgentSpec::Builtin {
            agent,
            command: CommandSpec {
                name: agent.name().to_owned(),
                program,
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
            },
        })
    }

    /// Where bare program names are looked for.
    fn program_search(&self) -> ProgramSearch<'_> {
        ProgramSearch {
            exe_dir: self.surroundings.exe_dir,
            path_var: (self.surroundings.vars)("PATH"),
        }
    }

    fn working_dir(&mut self, dir: &str, span: Range<usize>, scope: Scope) -> Option<PathBuf> {
        if dir.is_empty() {
            self.error(
                span,
                "`cwd` must not be empty (use \".\" for the config file's directory)",
            );
            return None;
        }
        if scope == Scope::FileOnly {
            return Some(relative_to(self.surroundings.config_dir, dir));
        }
        resolve_dir(dir, self.surroundings.config_dir)
            .map_err(|error| self.error(span, error.to_string()))
            .ok()
    }

    fn name(&mut self, value: &Value<'_>, scope: Scope) -> Option<String> {
        let name = self.string("name", value, scope)?;
        if name.is_empty() {
            self.error(value.span(), "`name` must not be empty");
            return None;
        }
        Some(name)
    }

    fn table<'t, 'i>(&mut self, key: &str, value: &'t Value<'i>) -> Option<&'t DeTable<'i>> {
        let table = value.get_ref().as_table();
        if table.is_none() {
            self.error(
                value.span(),
                format!(
                    "`{key}` must be a table, found {}",
                    value.get_ref().type_str()
                ),
            );
        }
        table
    }

    fn string(&mut self, key: &str, value: &Value<'_>, scope: Scope) -> Option<String> {
        let Some(text) = value.get_ref().as_str() else {
            self.error(
                value.span(),
                format!(
                    "`{key}` must be a string, found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        self.interpolated(key, text, value.span(), scope)
    }

    /// Interpolates one string value, reporting problems at the string.
    fn interpolated(
        &mut self,
        key: &str,
        text: &str,
        span: Range<usize>,
        scope: Scope,
    ) -> Option<String> {
        // Command lines and environments are C strings: a NUL would cut them short.
        if text.contains('\0') {
            self.error(span, format!("`{key}` must not contain a NUL character"));
            return None;
        }
        if scope == Scope::FileAndMachine {
            let (line, column) = self.diagnostics.line_and_column(span.start);
            for (name, has_default) in references(text) {
                let set = (self.surroundings.vars)(&name).is_some();
                self.surroundings.recorder.record(|notes| {
                    notes.variables.push(VariableUse {
                        name,
                        has_default,
                        set,
                        line,
                        column,
                    })
                });
            }
        }
        match interpolate(text, self.surroundings.vars) {
            Ok(expanded) => Some(expanded),
            Err(errors) => {
                for error in errors {
                    let kind = match &error {
                        InterpolationError::Unset { name } if scope == Scope::FileAndMachine => {
                            ConfigErrorKind::UnsetVariable { name: name.clone() }
                        }
                        // Disabled proxies are checked against the file, not the machine.
                        InterpolationError::Unset { .. } => continue,
                        InterpolationError::Malformed { .. } => ConfigErrorKind::Invalid,
                    };
                    self.diagnostics
                        .error_of_kind_at(span.start, kind, error.message());
                }
                None
            }
        }
    }

    fn string_array(&mut self, key: &str, value: &Value<'_>, scope: Scope) -> Option<Vec<String>> {
        let Some(items) = value.get_ref().as_array() else {
            self.error(
                value.span(),
                format!(
                    "`{key}` must be an array of strings, found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        let mut strings = Some(Vec::with_capacity(items.len()));
        for item in items.iter() {
            let string = match item.get_ref().as_str() {
                Some(text) => self.interpolated(key, text, item.span(), scope),
                None => {
                    self.error(
                        item.span(),
                        format!(
                            "`{key}` items must be strings, found {}",
                            item.get_ref().type_str()
                        ),
                    );
                    None
                }
            };
            match (string, strings.as_mut()) {
                (Some(string), Some(strings)) => strings.push(string),
                _ => strings = None,
            }
        }
        strings
    }

    /// A table of string values, such as `env`, in file order.
    fn string_table(
        &mut self,
        key: &str,
        value: &Value<'_>,
        scope: Scope,
    ) -> Option<Vec<(String, String)>> {
        let Some(table) = value.get_ref().as_table() else {
            self.error(
                value.span(),
                format!(
                    "`{key}` must be a table of strings, found {}",
                    value.get_ref().type_str()
                ),
            );
            return None;
        };
        let mut pairs = Some(Vec::with_capacity(table.len()));
        for (name, item) in entries(table) {
            let valid_name = self.environment_name(name.get_ref(), name.span());
            let name: &str = name.get_ref();
            let text = match item.get_ref().as_str() {
                Some(text) => self.interpolated(&format!("{key}.{name}"), text, item.span(), scope),
                None => {
                    self.error(
                        item.span(),
                        format!(
                            "`{key}.{name}` must be a string, found {}",
                            item.get_ref().type_str()
                        ),
                    );
                    None
                }
            };
            match (valid_name, text, pairs.as_mut()) {
                (true, Some(text), Some(pairs)) => pairs.push((name.to_owned(), text)),
                _ => pairs = None,
            }
        }
        pairs
    }

    fn environment_name(&mut self, name: &str, span: Range<usize>) -> bool {
        let problem = if name.is_empty() {
            "environment variable names must not be empty"
        } else if name.contains('=') {
            "environment variable names must not contain `=`"
        } else if name.contains('\0') {
            "environment variable names must not contain a NUL character"
        } else {
            return true;
        };
        self.error(span, problem);
        false
    }

    fn boolean(&mut self, key: &str, value: &Value<'_>) -> Option<bool> {
        let boolean = value.get_ref().as_bool();
        if boolean.is_none() {
            self.error(
                value.span(),
                format!(
                    "`{key}` must be true or false, found {}",
                    value.get_ref().type_str()
                ),
            );
        }
        boolean
    }

    fn choice<T: Copy>(
        &mut self,
        key: &str,
        value: &Value<'_>,
        options: &[(&str, T)],
        scope: Scope,
    ) -> Option<T> {
        let text = self.string(key, value, scope)?;
        if let Some((_, chosen)) = options.iter().find(|(name, _)| *name == text) {
            return Some(*chosen);
        }
        let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
        let suggestion = did_you_mean(&text, &names, '"');
        self.error(
            value.span(),
            format!(
                "`{key}` must be {}, found \"{text}\"{suggestion}",
                alternatives(&names)
            ),
        );
        None
    }

    fn size(&mut self, key: &str, value: &Value<'_>, scope: Scope) -> Option<usize> {
        let size = match value.get_ref() {
            DeValue::Integer(integer) => i128::from_str_radix(integer.as_str(), integer.radix())
                .map_err(|_| SizeError::IntegerTooLarge(integer.to_string()))
                .and_then(size_from_integer),
            DeValue::String(_) => parse_size(&self.string(key, value, scope)?),
            other => {
                self.error(
                    value.span(),
                    format!(
                        "`{key}` must be a size such as \"64MiB\" or a number of bytes, \
                         found {}",
                        other.type_str()
                    ),
                );
                return None;
            }
        };
        size.map_err(|message| self.error(value.span(), format!("`{key}`: {message}")))
            .ok()
    }

    fn duration(&mut self, key: &str, value: &Value<'_>, scope: Scope) -> Option<Duration> {
        let duration = match value.get_ref() {
            DeValue::String(_) => parse_duration(&self.string(key, value, scope)?),
            other => {
                self.error(
                    value.span(),
                    format!(
                        "`{key}` must be a duration such as \"30s\" or \"500ms\", found {}",
                        other.type_str()
                    ),
                );
                return None;
            }
        };
        duration
            .map_err(|message| self.error(value.span(), format!("`{key}`: {message}")))
            .ok()
    }
}

/// A table's entries in file order (the parsed map is sorted by key).
fn entries<'t, 'i>(table: &'t DeTable<'i>) -> Vec<(&'t Key<'i>, &'t Value<'i>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn alternatives(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("\"{name}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}
