//! `acp-conductor doctor`: what new users get wrong, found before the editor finds it. It
//! reads the configuration as `check` does, then judges it against the machine the way the
//! editor will run it: commands on the editor's smaller `PATH`, scripts' interpreters,
//! variables the editor may not pass on; with `--probe` it starts the chain for real and
//! times each component's answer to `initialize`. Prints a report for people to stdout.
//!
//! Exit status (set by `cli`): 0 when no problem was found (warnings and notes do not count),
//! 1 when one was, 78 (`EX_CONFIG`, as `check`) when the file cannot be read at all.

mod chain;
mod paths;
mod probe;

use std::io::Write;
use std::path::Path;

use crate::config::{self, Config, ConfigErrorKind, ConfigErrors, Observations};
use acp_drivers::runtime::{self, RuntimeKind};
pub(crate) use paths::DESKTOP_PATH;
use paths::Paths;
use probe::{ComponentProbe, Outcome};

/// Variables every session has; noting that an editor may lack them would be noise.
const EVERYWHERE: &[&str] = &["HOME", "USER", "LOGNAME", "PATH", "SHELL", "TMPDIR", "LANG"];

/// What `doctor` was asked to do.
#[derive(Debug, Clone)]
pub struct DoctorRequest<'a> {
    pub config: &'a Path,
    /// The `PATH` the editor gives the conductor (`--path`); the desktop one when `None`.
    pub editor_path: Option<&'a str>,
    /// Start the chain and initialize it (`--probe`).
    pub probe: bool,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Severity {
    /// The chain will not work as the editor starts it.
    Problem,
    /// It may work, but not as intended.
    Warning,
    /// Worth knowing.
    Note,
}

/// One thing doctor found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) severity: Severity,
    pub(crate) message: String,
    /// What to do about it, one line each.
    pub(crate) hints: Vec<String>,
}

/// Why `doctor` ends in failure.
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    /// The file cannot be read at all, so there is no report.
    #[error("{0}")]
    Unreadable(ConfigErrors),
    /// The report, on stdout, names each of them.
    #[error("{0} problem(s) found")]
    ProblemsFound(usize),
}

/// Runs `doctor` with this process's environment; the report on stdout.
pub fn doctor_command(request: &DoctorRequest<'_>) -> Result<(), DoctorError> {
    let vars = |name: &str| std::env::var(name).ok();
    let exe = std::env::current_exe().ok();
    let exe_dir = exe.as_deref().and_then(Path::parent);
    run_doctor(request, &vars, exe_dir, &mut std::io::stdout().lock())
}

fn run_doctor(
    request: &DoctorRequest<'_>,
    vars: &dyn Fn(&str) -> Option<String>,
    exe_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), DoctorError> {
    let (loaded, notes) = config::inspect(request.config, vars, exe_dir);
    if let Err(errors) = &loaded
        && errors
            .0
            .iter()
            .all(|error| error.kind == ConfigErrorKind::Unreadable)
    {
        return Err(DoctorError::Unreadable(errors.clone()));
    }
    let shell_path = vars("PATH");
    let paths = Paths {
        shell: shell_path.as_deref(),
        editor: request.editor_path.unwrap_or(DESKTOP_PATH),
        exe_dir,
    };
    let mut findings = Vec::new();
    if let Err(errors) = &loaded {
        findings.extend(error_findings(errors, &notes));
    }
    findings.extend(paths::command_findings(&notes, &paths));
    if let Ok(config) = &loaded {
        findings.extend(paths::interpreter_findings(config, &paths));
    }
    if let Some(warning) = notes.registry.as_ref().and_then(|r| r.warning.clone()) {
        findings.push(Finding {
            severity: Severity::Warning,
            message: warning,
            hints: Vec::new(),
        });
    }
    findings.extend(variable_notes(&notes));
    findings.extend(paths::conductor_finding(&paths));
    findings.sort_by_key(|finding| finding.severity);

    let mut report = format!(
        "acp-conductor doctor: {}\nCommands are looked up as an editor started from the desktop \
         would: on PATH={}{}\n\n",
        std::path::absolute(request.config)
            .unwrap_or_else(|_| request.config.to_path_buf())
            .display(),
        paths.editor,
        if request.editor_path.is_some() {
            " (--path)"
        } else {
            " (give the editor's own with --path)"
        }
    );
    match &loaded {
        Ok(config) => report.push_str(&hide_values(
            chain::describe(config, notes.registry.as_ref()),
            &notes,
            vars,
        )),
        Err(_) => report.push_str("The chain cannot be shown until the errors below are fixed."),
    }
    report.push_str("\n\n");
    let mut problems = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Problem)
        .count();
    for finding in &findings {
        let label = match finding.severity {
            Severity::Problem => "problem",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        report.push_str(&format!("{label}: {}\n", finding.message));
        for hint in &finding.hints {
            report.push_str(&format!("  fix: {hint}\n"));
        }
    }
    if !findings.is_empty() {
        report.push('\n');
    }
    let _ = out.write_all(report.as_bytes());
    let _ = out.flush();

    if request.probe {
        let text = match &loaded {
            Ok(config) => {
                let _ = out.write_all(
                    b"Probe: starting the chain and sending initialize, as the editor would...\n",
                );
                let _ = out.flush();
                let results = run_probe(config, paths.editor);
                problems += results.iter().filter(|r| r.outcome.is_problem()).count();
                probe_text(&results)
            }
            Err(_) => "Probe skipped: the configuration has errors.\n".to_owned(),
        };
        let _ = out.write_all(text.as_bytes());
        let _ = out.write_all(b"\n");
    }
    let summary = match problems {
        0 => "No problems found.".to_owned(),
        1 => "1 problem found.".to_owned(),
        n => format!("{n} problems found."),
    };
    let _ = writeln!(out, "{summary}");
    match problems {
        0 => Ok(()),
        n => Err(DoctorError::ProblemsFound(n)),
    }
}

/// The configuration's errors, each with a hint where doctor knows more than `check`.
fn error_findings(errors: &ConfigErrors, notes: &Observations) -> Vec<Finding> {
    errors
        .0
        .iter()
        .map(|error| {
            let mut hints = Vec::new();
            for unset in notes.variables.iter().filter(|v| {
                !v.set && !v.has_default && (v.line, v.column) == (error.line, error.column)
            }) {
                if matches!(&error.kind, ConfigErrorKind::UnsetVariable { name } if *name == unset.name)
                {
                    hints.push(format!(
                        "acp-conductor gets the environment the editor starts it with, not your \
                         shell's: set {} in the editor's settings for this agent server (its \
                         `env`), or give a default with `${{{}:-...}}`",
                        unset.name, unset.name
                    ));
                }
            }
            Finding {
                severity: Severity::Problem,
                message: error.to_string(),
                hints,
            }
        })
        .collect()
}

/// `text` with the value of each variable the file references written back as `${NAME}`:
/// an argument made of `${API_KEY}` is shown as that, not as the key. Values every session
/// has (`HOME`) and very short ones stay, since hiding them would hide half the text.
fn hide_values(
    mut text: String,
    notes: &Observations,
    vars: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut values: Vec<(String, &str)> = notes
        .variables
        .iter()
        .filter(|used| !EVERYWHERE.contains(&used.name.as_str()))
        .filter_map(|used| vars(&used.name).map(|value| (value, used.name.as_str())))
        .filter(|(value, _)| value.chars().count() >= 4)
        .collect();
    // Longest first, so that a value containing another is hidden whole.
    values.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    for (value, name) in values {
        text = text.replace(&value, &format!("${{{name}}}"));
    }
    text
}

/// Variables without a default that are set here: an editor started from the desktop may
/// not have them.
fn variable_notes(notes: &Observations) -> Vec<Finding> {
    let mut named: Vec<&str> = Vec::new();
    let mut findings = Vec::new();
    for used in &notes.variables {
        if !used.set || used.has_default || EVERYWHERE.contains(&used.name.as_str()) {
            continue;
        }
        if named.contains(&used.name.as_str()) {
            continue;
        }
        named.push(&used.name);
        findings.push(Finding {
            severity: Severity::Note,
            message: format!(
                "`${{{}}}` (line {}) is set in this shell; an editor started from the desktop \
                 passes on its own environment, which may not have it",
                used.name, used.line
            ),
            hints: vec![format!(
                "if the editor does not have it, set {} in the editor's settings for this agent \
                 server (its `env`)",
                used.name
            )],
        });
    }
    findings
}

/// Starts the chain with the editor's `PATH` for its components and initializes it.
fn run_probe(config: &Config, editor_path: &str) -> Vec<ComponentProbe> {
    let mut config = config.clone();
    let with_path = |spec: &mut config::CommandSpec| {
        if !spec.env.iter().any(|(name, _)| name == "PATH") {
            spec.env.push(("PATH".to_owned(), editor_path.to_owned()));
        }
    };
    for proxy in &mut config.proxies {
        if let config::ProxyLaunch::Native(spec) = &mut proxy.launch {
            with_path(spec);
        }
    }
    match &mut config.agent {
        Some(config::AgentSpec::Command(spec)) => with_path(spec),
        Some(config::AgentSpec::Builtin { command, .. }) => with_path(command),
        Some(config::AgentSpec::Remote(_)) | None => {}
    }
    runtime::run_on_main_thread(RuntimeKind::Workers, |main| probe::probe(main, &config))
        .expect("tokio runtime")
}

/// One line per component (and its stderr's last lines when it failed).
fn probe_text(results: &[ComponentProbe]) -> String {
    let width = results.iter().map(|r| r.label.len()).max().unwrap_or(0);
    let mut text = String::new();
    for result in results {
        let timeout = config::format_duration(result.startup_timeout);
        let line = match &result.outcome {
            Outcome::Answered { took } => format!(
                "ok       answered initialize in {} (startup timeout {timeout})",
                milliseconds(*took)
            ),
            Outcome::Refused { took, message } => format!(
                "problem  answered initialize with an error after {}: {message}",
                milliseconds(*took)
            ),
            Outcome::Failed { reason, .. } => format!("problem  {reason}"),
            Outcome::PassedOnFailure => {
                "-        passed on the failure of a component after it".to_owned()
            }
            Outcome::NotReached => {
                "-        not reached: a component before it failed first".to_owned()
            }
        };
        text.push_str(&format!("  {:width$}  {line}\n", result.label));
        if let Outcome::Failed { stderr, .. } = &result.outcome
            && !stderr.is_empty()
        {
            text.push_str("           its last stderr lines:\n");
            for line in stderr {
                text.push_str(&format!("             | {line}\n"));
            }
        }
    }
    text
}

fn milliseconds(duration: std::time::Duration) -> String {
    format!("{} ms", duration.as_millis())
}

#[cfg(test)]
mod tests;
