//! The effective chain, as `doctor` prints it: each component in order from the editor, with
//! what will really be started (absolute program and arguments, or the `.wasm` file), how
//! the conductor speaks to it and what its failure does. Environment values are never
//! printed, only their names: they are where secrets live.

use crate::config::{
    AfterRestarts, AgentSpec, BridgeForm, CommandSpec, Config, DirMode, FailurePolicy, Mode,
    OnFailure, ProxyLaunch, ProxyProtocol, RegistryUse, RemoteSpec, WasmKind, format_duration,
    format_size,
};
use acp_remote::protocol::{Transport, shown_url};

/// The chain as lines of text, without a trailing newline.
pub(crate) fn describe(config: &Config, registry: Option<&RegistryUse>) -> String {
    let mut lines = vec![match config.conductor.mode {
        Mode::Agent => "The chain, from the editor:".to_owned(),
        Mode::Proxy => {
            "The chain, from a parent conductor (this one runs in proxy mode):".to_owned()
        }
    }];
    let mut number = 0;
    for proxy in &config.proxies {
        number += 1;
        let dialect = match proxy.protocol {
            ProxyProtocol::Auto => "protocol auto (proxy/initialize, else _proxy/initialize)",
            ProxyProtocol::Rfd => "protocol rfd (proxy/initialize)",
            ProxyProtocol::Underscore => "protocol underscore (_proxy/initialize)",
        };
        match &proxy.launch {
            ProxyLaunch::Native(spec) => {
                lines.push(format!(
                    "  {number}. proxy `{}`: a process; {dialect}",
                    proxy.name
                ));
                lines.extend(command_lines(spec));
            }
            ProxyLaunch::Wasm(wasm) => {
                let kind = WasmKind::of_file(&wasm.module)
                    .map_or_else(|error| error.to_string(), |kind| kind.describe().to_owned());
                lines.push(format!(
                    "  {number}. proxy `{}`: WebAssembly in the conductor; {dialect}",
                    proxy.name
                ));
                let mut run = vec![wasm.module.display().to_string()];
                run.extend(wasm.args.iter().map(|arg| quoted(arg)));
                lines.push(format!("       runs {} ({kind})", run.join(" ")));
                if let Some(download) = &wasm.download {
                    let kept = if wasm.module.is_file() {
                        "fetched and kept in the cache"
                    } else {
                        "not fetched yet: fetched into the cache on first start"
                    };
                    lines.push(format!(
                        "       source: {}, SHA-256 {}; {kept}",
                        download.url,
                        download.sha256_hex()
                    ));
                }
                let sandbox = &wasm.sandbox;
                let mut grants: Vec<String> = sandbox
                    .dirs
                    .iter()
                    .map(|dir| {
                        let mode = match dir.mode {
                            DirMode::ReadOnly => "read-only",
                            DirMode::ReadWrite => "read-write",
                        };
                        format!("{} as {} {mode}", dir.host.display(), dir.guest)
                    })
                    .collect();
                if grants.is_empty() {
                    grants.push("no directories".to_owned());
                }
                lines.push(format!(
                    "       sandbox: {}; no network; memory {}; {} of computing per message",
                    grants.join(", "),
                    format_size(sandbox.memory),
                    format_duration(sandbox.message_timeout)
                ));
                if !wasm.env.is_empty() {
                    let names: Vec<&str> = wasm.env.iter().map(|(name, _)| name.as_str()).collect();
                    lines.push(format!("       environment: {}", names.join(", ")));
                }
            }
            ProxyLaunch::Remote(remote) => {
                lines.push(format!(
                    "  {number}. proxy `{}`: served elsewhere; {dialect}",
                    proxy.name
                ));
                lines.extend(remote_lines(remote));
            }
        }
        lines.push(format!("       {}", failure(&proxy.failure)));
    }
    match &config.agent {
        Some(agent) => {
            number += 1;
            let (spec, origin) = match agent {
                AgentSpec::Command(spec) => match registry {
                    Some(registry) => (
                        spec,
                        format!(
                            "{} {} from the agent registry (`{}`, {}; {})",
                            registry.name,
                            registry.version,
                            registry.id,
                            registry.kind,
                            registry.source
                        ),
                    ),
                    None => (spec, "a process".to_owned()),
                },
                AgentSpec::Builtin { agent, command } => {
                    (command, format!("the built-in {} agent", agent.name()))
                }
                AgentSpec::Remote(remote) => {
                    lines.push(format!(
                        "  {number}. agent `{}`: served elsewhere",
                        remote.name
                    ));
                    lines.extend(remote_lines(remote));
                    lines.push(format!("       {}", failure(&config.agent_failure)));
                    lines.push(format!(
                        "       {}",
                        mcp_bridge(config.conductor.mcp_bridge)
                    ));
                    return lines.join("\n");
                }
            };
            lines.push(format!("  {number}. agent `{}`: {origin}", spec.name));
            lines.extend(command_lines(spec));
            lines.push(format!("       {}", failure(&config.agent_failure)));
            lines.push(format!(
                "       {}",
                mcp_bridge(config.conductor.mcp_bridge)
            ));
        }
        None => lines.push(format!(
            "  {}. the parent conductor's successor",
            number + 1
        )),
    }
    lines.join("\n")
}

/// "reached at URL over TRANSPORT", then the names of the headers sent (never their values).
fn remote_lines(remote: &RemoteSpec) -> Vec<String> {
    let transport = Transport::of_scheme(remote.url.scheme()).map_or("?", Transport::describe);
    let mut lines = vec![format!(
        "       reached at {} over {transport}",
        shown_url(&remote.url)
    )];
    if !remote.headers.is_empty() {
        let names: Vec<&str> = remote
            .headers
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        lines.push(format!("       headers: {}", names.join(", ")));
    }
    lines
}

/// "runs /abs/program arg ...", then its directory and environment names when set.
fn command_lines(spec: &CommandSpec) -> Vec<String> {
    let mut run = vec![spec.program.display().to_string()];
    run.extend(spec.args.iter().map(|arg| quoted(arg)));
    let mut lines = vec![format!("       runs {}", run.join(" "))];
    if let Some(cwd) = &spec.cwd {
        lines.push(format!("       in {}", cwd.display()));
    }
    if !spec.env.is_empty() {
        let names: Vec<&str> = spec.env.iter().map(|(name, _)| name.as_str()).collect();
        lines.push(format!(
            "       environment: {} (values not shown)",
            names.join(", ")
        ));
    }
    lines
}

/// How MCP servers offered over ACP (by proxies or the editor) reach the agent, unless it
/// speaks MCP over ACP itself.
fn mcp_bridge(form: BridgeForm) -> &'static str {
    match form {
        BridgeForm::Auto => {
            "MCP servers offered over ACP: as HTTP servers on a loopback port if its initialize \
             answer offers mcpCapabilities.http, else as stdio shims (mcp_bridge = \"auto\")"
        }
        BridgeForm::Http => {
            "MCP servers offered over ACP: as HTTP servers on a loopback port (mcp_bridge = \"http\")"
        }
        BridgeForm::Stdio => {
            "MCP servers offered over ACP: as stdio shims, a process per server (mcp_bridge = \"stdio\")"
        }
    }
}

/// "on failure: fail; startup timeout 60s; no request timeout".
fn failure(policy: &FailurePolicy) -> String {
    let action = match policy.on_failure {
        OnFailure::Fail => "fail (the chain stops)".to_owned(),
        OnFailure::Bypass => "bypass (traffic flows around it)".to_owned(),
        OnFailure::Restart { then } => format!(
            "restart, then {}",
            match then {
                AfterRestarts::Fail => "fail",
                AfterRestarts::Bypass => "bypass",
            }
        ),
    };
    let requests = match policy.request_timeout {
        Some(limit) => format!("request timeout {}", format_duration(limit)),
        None => "no request timeout".to_owned(),
    };
    format!(
        "on failure: {action}; startup timeout {}; {requests}",
        format_duration(policy.startup_timeout)
    )
}

/// An argument as a shell would need it written, so that the line can be copied.
fn quoted(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn arguments_are_quoted_only_when_a_shell_needs_it() {
        assert_eq!(quoted("--flag=1"), "--flag=1");
        assert_eq!(quoted("@scope/pkg@1.0"), "@scope/pkg@1.0");
        assert_eq!(quoted("two words"), "'two words'");
        assert_eq!(quoted("it's"), "'it'\\''s'");
        assert_eq!(quoted(""), "''");
    }
}
