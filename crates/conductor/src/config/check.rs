//! `acp-conductor check`: validate a configuration without starting anything, or (`--diff`)
//! say what a reload from one to another would do. Must not know how the chain runs; it
//! reports what `load` found, for a human reader.

use std::io::Write;
use std::path::Path;

use super::format_duration;
use super::format_size;
use super::{
    AfterRestarts, AgentSpec, BuiltinAgent, CommandSpec, Config, DirMode, FailurePolicy, Mode,
    OnFailure, ProxyLaunch, ProxyProtocol, RegistryUse, RemoteSpec, WasmKind, WasmSpec, inspect,
};
use crate::config::ConfigErrors;
use acp_drivers::spec::diff::{ChainDiff, FileDigests, Side, diff};
use acp_remote::protocol::{Transport, shown_url};

/// Prints a one-paragraph summary of the chain to stdout when the file is valid (this is a
/// command for humans, not the protocol); returns every error when it is invalid or unreadable.
pub fn check(path: &Path) -> Result<(), ConfigErrors> {
    let exe_dir = super::conductor_exe_dir();
    run_check(
        path,
        &|name| std::env::var(name).ok(),
        exe_dir.as_deref(),
        &mut std::io::stdout().lock(),
    )
}

fn run_check(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), ConfigErrors> {
    let (config, notes) = inspect(path, env, exe_dir);
    // A failed write (a closed pipe) cannot be reported anywhere better; the exit code
    // still tells the caller whether the configuration is valid.
    let _ = writeln!(out, "{}", summary(&config?, notes.registry.as_ref()));
    Ok(())
}

/// `check --diff OLD NEW`: loads both files as `check` does and prints, one line each, what a
/// reload from OLD to NEW would do to each component; starts nothing. Returns every error of
/// both files when either is invalid.
pub fn check_diff(old: &Path, new: &Path) -> Result<(), ConfigErrors> {
    let exe_dir = super::conductor_exe_dir();
    run_check_diff(
        old,
        new,
        &|name| std::env::var(name).ok(),
        exe_dir.as_deref(),
        &mut std::io::stdout().lock(),
    )
}

fn run_check_diff(
    old: &Path,
    new: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), ConfigErrors> {
    let (old_config, _) = inspect(old, env, exe_dir);
    let (new_config, _) = inspect(new, env, exe_dir);
    let (old_config, new_config) = match (old_config, new_config) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let mut errors = Vec::new();
            errors.extend(old.err().into_iter().flat_map(|e| e.0));
            errors.extend(new.err().into_iter().flat_map(|e| e.0));
            return Err(ConfigErrors(errors));
        }
    };
    let (old_digests, new_digests) = (FileDigests::of(&old_config), FileDigests::of(&new_config));
    let diff = diff(
        Side {
            config: &old_config,
            digests: &old_digests,
        },
        Side {
            config: &new_config,
            digests: &new_digests,
        },
    );
    // As in `check`: a failed write has nowhere better to go.
    let _ = write!(out, "{}", diff_report(old, new, &diff));
    Ok(())
}

/// "A reload from OLD to NEW would:" and the changes, or that it would be skipped.
fn diff_report(old: &Path, new: &Path, diff: &ChainDiff) -> String {
    if diff.is_empty() {
        return format!(
            "{} and {} run the same chain: a reload from one to the other changes nothing.\n",
            old.display(),
            new.display()
        );
    }
    let mut text = format!(
        "A reload from {} to {} would:\n",
        old.display(),
        new.display()
    );
    for line in diff.to_string().lines() {
        text.push_str(&format!("  {line}\n"));
    }
    text
}

/// One paragraph: the chain in order from the editor, then the limits.
fn summary(config: &Config, registry: Option<&RegistryUse>) -> String {
    let upstream = match config.conductor.mode {
        Mode::Agent => "the editor",
        Mode::Proxy => "a parent conductor (proxy mode)",
    };
    let mut hops: Vec<String> = config
        .proxies
        .iter()
        .map(|proxy| {
            let protocol = match proxy.protocol {
                ProxyProtocol::Auto => "",
                ProxyProtocol::Rfd => ", protocol rfd",
                ProxyProtocol::Underscore => ", protocol underscore",
            };
            let shared = if proxy.shared {
                ", shared by every connection under `serve`"
            } else {
                ""
            };
            let protocol = &format!("{protocol}{shared}{}", failure_details(&proxy.failure));
            match &proxy.launch {
                ProxyLaunch::Native(launch) => format!("proxy {}", launched(launch, protocol)),
                ProxyLaunch::Wasm(wasm) => format!("WASM proxy {}", sandboxed(wasm, protocol)),
                ProxyLaunch::Remote(remote) => {
                    format!("remote proxy {}", reached(remote, protocol))
                }
            }
        })
        .collect();
    let agent_failure = failure_details(&config.agent_failure);
    hops.push(match &config.agent {
        Some(AgentSpec::Command(launch)) => match registry {
            Some(registry) => format!(
                "agent {}",
                launched(
                    launch,
                    &format!(
                        ", {} {} from the agent registry ({}){agent_failure}",
                        registry.name, registry.version, registry.kind
                    )
                )
            ),
            None => format!("agent {}", launched(launch, &agent_failure)),
        },
        Some(AgentSpec::Builtin {
            agent: BuiltinAgent::Demo,
            command,
        }) => format!(
            "the built-in demo agent ({}{agent_failure})",
            command.program.display()
        ),
        Some(AgentSpec::Remote(remote)) => {
            format!("remote agent {}", reached(remote, &agent_failure))
        }
        None => "the parent conductor's successor".to_owned(),
    });
    let settings = &config.conductor;
    let mut text = format!(
        "{} is valid. From {upstream}, messages go to {}. Lines are limited to {}, at most {} \
         is queued toward each peer, writes time out after {} and children get {} to exit.",
        config.file.display(),
        hops.join(", then "),
        format_size(settings.max_line),
        format_size(settings.queue_limit),
        format_duration(settings.write_timeout),
        format_duration(settings.shutdown_grace),
    );
    if config
        .proxies
        .iter()
        .any(|proxy| matches!(proxy.launch, ProxyLaunch::Wasm(_)))
    {
        match &settings.cache_dir {
            Some(dir) => text.push_str(&format!(" Compiled WASM is cached in {}.", dir.display())),
            None => text.push_str(
                " WASM is compiled on every start (no cache_dir, XDG_CACHE_HOME or HOME).",
            ),
        }
    }
    if let Some(file) = &settings.trace.file {
        text.push_str(&trace_sentence(file, &settings.trace));
    }
    if let Some(endpoint) = &settings.otlp {
        text.push_str(&format!(
            " Spans are exported over OTLP/HTTP to {endpoint}/v1/traces.",
            endpoint = endpoint.trim_end_matches('/')
        ));
    }
    text.push_str(mcp_bridge_sentence(settings.mcp_bridge));
    text
}

/// What `mcp_bridge` asks for, when it is not the default.
fn mcp_bridge_sentence(form: super::BridgeForm) -> &'static str {
    match form {
        super::BridgeForm::Auto => "",
        super::BridgeForm::Http => {
            " MCP servers proxies provide reach an agent that cannot speak MCP over ACP over \
             HTTP on a loopback port (mcp_bridge = \"http\")."
        }
        super::BridgeForm::Stdio => {
            " MCP servers proxies provide reach an agent that cannot speak MCP over ACP as stdio \
             shims (mcp_bridge = \"stdio\")."
        }
    }
}

/// " Each message is traced to FILE (payloads left out); ...": what `trace` asks for.
fn trace_sentence(file: &Path, trace: &super::TraceSettings) -> String {
    let payloads = if trace.payloads {
        ""
    } else {
        " (payloads left out)"
    };
    let patterns = match trace.redact.len() {
        0 => String::new(),
        1 => " and matches of 1 `redact` pattern".to_owned(),
        n => format!(" and matches of {n} `redact` patterns"),
    };
    format!(
        " Each message on each link is traced to {}{payloads}; `env` values{patterns} are \
         written as \"[redacted]\".",
        file.display()
    )
}

/// "`name` (/abs/file.wasm, a WASI 0.2 component; 64 MiB, 5s per message; grants ...)".
fn sandboxed(wasm: &WasmSpec, details: &str) -> String {
    let (source, kind) = match &wasm.download {
        None => (
            wasm.module.display().to_string(),
            WasmKind::of_file(&wasm.module).map_or("unreadable", WasmKind::describe),
        ),
        Some(download) => (
            format!("{}, SHA-256 {}", download.url, download.sha256_hex()),
            WasmKind::of_file(&wasm.module).map_or("fetched on first start", WasmKind::describe),
        ),
    };
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
    if !wasm.env.is_empty() {
        let names: Vec<&str> = wasm.env.iter().map(|(name, _)| name.as_str()).collect();
        grants.push(format!("variables {}", names.join(", ")));
    }
    let grants = if grants.is_empty() {
        "no files, variables or network".to_owned()
    } else {
        format!("{}; no network", grants.join(", "))
    };
    format!(
        "`{}` ({source}, {kind}{details}; memory {}, computing {} per message; {grants})",
        wasm.name,
        format_size(sandbox.memory),
        format_duration(sandbox.message_timeout),
    )
}

/// "; on failure restart, then bypass; startup timeout 5s; request timeout 90s", leaving
/// out what is the default.
fn failure_details(policy: &FailurePolicy) -> String {
    let defaults = FailurePolicy::default();
    let mut parts = Vec::new();
    match policy.on_failure {
        OnFailure::Fail => {}
        OnFailure::Bypass => parts.push("on failure bypass".to_owned()),
        OnFailure::Restart { then } => parts.push(format!(
            "on failure restart, then {}",
            match then {
                AfterRestarts::Fail => "fail",
                AfterRestarts::Bypass => "bypass",
            }
        )),
    }
    if policy.startup_timeout != defaults.startup_timeout {
        parts.push(format!(
            "startup timeout {}",
            format_duration(policy.startup_timeout)
        ));
    }
    if let Some(limit) = policy.request_timeout {
        parts.push(format!("request timeout {}", format_duration(limit)));
    }
    parts.iter().map(|part| format!("; {part}")).collect()
}

/// "`name` (/abs/program, details)".
fn launched(launch: &CommandSpec, details: &str) -> String {
    format!("`{}` ({}{details})", launch.name, launch.program.display())
}

/// "`name` (wss://host/acp over WebSocket, headers Authorization)": never a header's value.
fn reached(remote: &RemoteSpec, details: &str) -> String {
    let transport = Transport::of_scheme(remote.url.scheme()).map_or("?", Transport::describe);
    let headers = if remote.headers.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = remote
            .headers
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        format!(", headers {}", names.join(", "))
    };
    format!(
        "`{}` ({} over {transport}{headers}{details})",
        remote.name,
        shown_url(&remote.url)
    )
}

#[cfg(test)]
mod tests {
    use std::process::ExitCode;

    use super::*;
    use crate::cli::{CommandError, exit_code, exit_status};
    use crate::config::test_support::TempDir;

    /// Exit code, stdout and stderr of a check with no variables but `PATH`.
    fn run(temp: &TempDir, file: &Path) -> (u8, String, String) {
        let path_var = temp.path().join("bin").display().to_string();
        let lookup = |name: &str| (name == "PATH").then(|| path_var.clone());
        let mut out = Vec::new();
        let (code, err) = match run_check(file, &lookup, None, &mut out) {
            Ok(()) => (0, String::new()),
            Err(errors) => {
                let error = CommandError::from(errors);
                (
                    exit_status(&error),
                    format!("{}\n", error.message().unwrap()),
                )
            }
        };
        (code, String::from_utf8(out).unwrap(), err)
    }

    #[test]
    fn valid_config_prints_a_summary_and_exits_zero() {
        let temp = TempDir::new("check-valid");
        let guard = temp.file("bin/guard", 0o755);
        let agent = temp.file("bin/agent", 0o755);
        let file = temp.write(
            "conductor.toml",
            "[conductor]\nmax_line = \"1MiB\"\nwrite_timeout = \"500ms\"\n\
             [agent]\ncommand = \"agent\"\nname = \"claude\"\n\
             [[proxy]]\nname = \"context\"\ncommand = \"guard\"\nshared = true\n\
             [[proxy]]\nname = \"guard\"\ncommand = \"guard\"\nprotocol = \"rfd\"\n\
             on_failure = \"restart\"\nrestart_then = \"bypass\"\nstartup_timeout = \"5s\"\n\
             [[proxy]]\nname = \"off\"\ncommand = \"guard\"\nenabled = false\n",
        );
        let (code, out, err) = run(&temp, &file);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(
            out,
            format!(
                "{} is valid. From the editor, messages go to proxy `context` ({guard}, shared by \
                 every connection under `serve`), then \
                 proxy `guard` ({guard}, protocol rfd; on failure restart, then bypass; startup \
                 timeout 5s), then agent `claude` ({agent}). Lines are \
                 limited to 1 MiB, at most 16 MiB is queued toward each peer, writes time out \
                 after 500ms and children get 2s to exit.\n",
                file.display(),
                guard = guard.display(),
                agent = agent.display(),
            )
        );
    }

    #[test]
    fn the_trace_is_named_in_the_summary() {
        let temp = TempDir::new("check-trace");
        temp.demo_agent("bin");
        let file = temp.write(
            "conductor.toml",
            "[conductor]\ntrace = \"t.jsonl\"\ntrace_payloads = false\nredact = [\"a+\"]\n\
             [agent]\nbuiltin = \"demo\"\n",
        );
        let (code, out, _) = run(&temp, &file);
        assert_eq!(code, 0);
        assert!(
            out.trim_end().ends_with(&format!(
                "Each message on each link is traced to {} (payloads left out); `env` values and \
                 matches of 1 `redact` pattern are written as \"[redacted]\".",
                temp.path().join("t.jsonl").display()
            )),
            "{out}"
        );
    }

    #[test]
    fn the_otlp_endpoint_is_named_in_the_summary() {
        let temp = TempDir::new("check-otlp");
        temp.demo_agent("bin");
        let file = temp.write(
            "conductor.toml",
            "[conductor]\notlp = \"http://collector:4318/\"\n[agent]\nbuiltin = \"demo\"\n",
        );
        let (code, out, _) = run(&temp, &file);
        assert_eq!(code, 0);
        assert!(
            out.trim_end()
                .ends_with("Spans are exported over OTLP/HTTP to http://collector:4318/v1/traces."),
            "{out}"
        );
    }

    #[test]
    fn proxy_mode_and_builtin_agent_are_named_in_the_summary() {
        let temp = TempDir::new("check-proxy-mode");
        let demo = temp.demo_agent("bin");
        let file = temp.write(
            "conductor.toml",
            "[conductor]\nmode = \"proxy\"\n[agent]\nbuiltin = \"demo\"\n",
        );
        let (code, out, _) = run(&temp, &file);
        assert_eq!(code, 0);
        assert!(
            out.contains(&format!(
                "From a parent conductor (proxy mode), messages go to the built-in demo agent ({}).",
                demo.display()
            )),
            "{out}"
        );
    }

    #[test]
    fn a_missing_demo_agent_program_is_reported_at_the_builtin_value() {
        let temp = TempDir::new("check-no-demo");
        temp.dir("bin");
        let file = temp.write("conductor.toml", "[agent]\nbuiltin = \"demo\"\n");
        let (code, out, err) = run(&temp, &file);
        assert_eq!((code, out.as_str()), (78, ""));
        assert_eq!(
            err,
            format!(
                "{}:2:11: command `acp-demo-agent` not found on PATH: `builtin = \"demo\"` runs it \
                 as the agent (build it with `cargo build -p acp-demo`, or install it next to \
                 acp-conductor)\n",
                file.display()
            )
        );
    }

    #[test]
    fn invalid_config_prints_every_error_to_stderr_and_exits_78() {
        let temp = TempDir::new("check-invalid");
        let file = temp.write(
            "conductor.toml",
            "[agent]\ncomand = \"x\"\n[[proxy]]\ncommand = \"nowhere\"\n",
        );
        let (code, out, err) = run(&temp, &file);
        assert_eq!((code, out.as_str()), (78, ""));
        let file = file.display();
        assert_eq!(
            err,
            format!(
                "{file}:1:1: [agent] needs `command` (a program to run), `registry = \"<id>\"` (an agent from the ACP registry), `url` (an agent served elsewhere) or `builtin = \"demo\"`\n\
                 {file}:2:1: unknown key `comand` in [agent]; did you mean `command`?\n\
                 {file}:3:1: [[proxy]] #1 needs a `name`\n\
                 {file}:4:11: command `nowhere` not found on PATH\n"
            )
        );
    }

    #[test]
    fn unreadable_config_exits_78() {
        let temp = TempDir::new("check-unreadable");
        let missing = temp.path().join("absent.toml");
        let (code, out, err) = run(&temp, &missing);
        assert_eq!((code, out.as_str()), (78, ""));
        assert!(
            err.starts_with(&format!(
                "{}: cannot read the configuration: ",
                missing.display()
            )),
            "{err}"
        );
        let error = CommandError::from(check(&missing).unwrap_err());
        assert_eq!(exit_code(&error), ExitCode::from(78));
    }

    /// Exit code, stdout and stderr of `check --diff OLD NEW` with no variables but `PATH`.
    fn run_diff(temp: &TempDir, old: &Path, new: &Path) -> (u8, String, String) {
        let path_var = temp.path().join("bin").display().to_string();
        let lookup = |name: &str| (name == "PATH").then(|| path_var.clone());
        let mut out = Vec::new();
        let (code, err) = match run_check_diff(old, new, &lookup, None, &mut out) {
            Ok(()) => (0, String::new()),
            Err(errors) => {
                let error = CommandError::from(errors);
                (
                    exit_status(&error),
                    format!("{}\n", error.message().unwrap()),
                )
            }
        };
        (code, String::from_utf8(out).unwrap(), err)
    }

    const TWO_PROXIES: &str = "[agent]\nbuiltin = \"demo\"\n\
        [[proxy]]\nname = \"context\"\ncommand = \"p\"\nargs = [\"--one\"]\n\
        [[proxy]]\nname = \"notes\"\ncommand = \"p\"\n";

    #[test]
    fn diff_prints_each_change_without_running_anything() {
        let temp = TempDir::new("check-diff");
        temp.demo_agent("bin");
        temp.file("bin/p", 0o755);
        let old = temp.write("old.toml", TWO_PROXIES);
        let new = temp.write(
            "new.toml",
            "[agent]\nbuiltin = \"demo\"\n\
             [[proxy]]\nname = \"guard\"\ncommand = \"p\"\nenv = { TOKEN = \"s3cret\" }\n\
             [[proxy]]\nname = \"context\"\ncommand = \"p\"\nargs = [\"--two\"]\n",
        );
        let (code, out, err) = run_diff(&temp, &old, &new);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(
            out,
            format!(
                "A reload from {} to {} would:\n  added `guard` at 0\n  replaced `context` \
                 (args)\n  removed `notes`\n  kept the agent\n",
                old.display(),
                new.display()
            )
        );
        assert!(!out.contains("s3cret"));
    }

    #[test]
    fn diff_of_the_same_chain_says_nothing_changes() {
        let temp = TempDir::new("check-diff-same");
        temp.demo_agent("bin");
        temp.file("bin/p", 0o755);
        let old = temp.write("old.toml", TWO_PROXIES);
        let new = temp.write(
            "new.toml",
            format!("# the same chain, written again\n{TWO_PROXIES}"),
        );
        let (code, out, _) = run_diff(&temp, &old, &new);
        assert_eq!(code, 0);
        assert_eq!(
            out,
            format!(
                "{} and {} run the same chain: a reload from one to the other changes nothing.\n",
                old.display(),
                new.display()
            )
        );
    }

    #[test]
    fn diff_names_a_changed_agent_and_settings_a_reload_leaves() {
        let temp = TempDir::new("check-diff-agent");
        temp.demo_agent("bin");
        temp.file("bin/p", 0o755);
        temp.file("bin/agent", 0o755);
        let old = temp.write("old.toml", TWO_PROXIES);
        let new = temp.write(
            "new.toml",
            format!(
                "[conductor]\nmax_line = \"1MiB\"\n{}",
                TWO_PROXIES.replace("builtin = \"demo\"", "command = \"agent\"")
            ),
        );
        let (code, out, _) = run_diff(&temp, &old, &new);
        assert_eq!(code, 0);
        assert!(
            out.ends_with(
                "  kept `context`\n  kept `notes`\n  agent changed (builtin -> command)\n  \
                 [conductor] max_line changed (applied on restart only)\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn diff_reports_the_errors_of_both_files_and_exits_78() {
        let temp = TempDir::new("check-diff-invalid");
        let old = temp.write("old.toml", "[agent]\ncomand = \"x\"\n");
        let new = temp.write("new.toml", "[[proxy]]\n");
        let (code, out, err) = run_diff(&temp, &old, &new);
        assert_eq!((code, out.as_str()), (78, ""));
        assert!(
            err.contains(&format!("{}:2:1: unknown key `comand`", old.display())),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "{}:1:1: [[proxy]] #1 needs a `name`",
                new.display()
            )),
            "{err}"
        );
    }
}
