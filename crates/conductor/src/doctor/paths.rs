//! Programs as the editor will find them. An editor started from a desktop (a dock, a menu, a
//! launcher) has a much smaller `PATH` than a terminal: on macOS `/usr/bin:/bin:/usr/sbin:/sbin`,
//! and on Linux often little more. A command found here in a shell may be missing there, and
//! so may the interpreter a script's `#!` line names (`npx` is a `node` script). Must not
//! read the configuration file: it judges what loading it recorded and resolved.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Finding, Severity};
use crate::config::{
    AgentSpec, CommandSpec, Config, Observations, ProgramSearch, ProxyLaunch, ResolveError,
    resolve_program,
};

/// The `PATH` a desktop-started editor gives its agents when `--path` says nothing else.
pub(crate) const DESKTOP_PATH: &str = "/usr/bin:/bin:/usr/sbin:/sbin";

/// Where programs are looked for, in the shell doctor runs in and in the editor.
pub(crate) struct Paths<'a> {
    pub(crate) shell: Option<&'a str>,
    pub(crate) editor: &'a str,
    pub(crate) exe_dir: Option<&'a Path>,
}

impl Paths<'_> {
    fn on_editor_path(&self, command: &str) -> Result<PathBuf, ResolveError> {
        let search = ProgramSearch {
            exe_dir: self.exe_dir,
            path_var: Some(self.editor.to_owned()),
        };
        resolve_program(command, Path::new("/"), &search)
    }

    fn on_shell_path(&self, command: &str) -> Option<PathBuf> {
        let search = ProgramSearch {
            exe_dir: self.exe_dir,
            path_var: self.shell.map(str::to_owned),
        };
        resolve_program(command, Path::new("/"), &search).ok()
    }
}

/// Each bare command name that this shell finds but the editor will not, or finds elsewhere.
pub(crate) fn command_findings(notes: &Observations, paths: &Paths<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for lookup in &notes.programs {
        let Some(here) = &lookup.found else {
            // Not found at all: loading reported it already.
            continue;
        };
        let whose = lookup
            .component
            .as_deref()
            .map(|name| format!("`{name}`: "))
            .unwrap_or_default();
        let registry = notes
            .registry
            .as_ref()
            .is_some_and(|r| (r.line, r.column) == (lookup.line, lookup.column));
        match paths.on_editor_path(&lookup.command) {
            Err(_) => {
                let dir = here.parent().unwrap_or(Path::new("/"));
                let fix = if registry {
                    format!(
                        "the registry agent runs `{}`: give acp-conductor a PATH that has {} in \
                         the editor's settings for it (an `env` with PATH = \"{}:{}\"), or replace \
                         `registry` with `command = \"{}\"` and the agent's arguments",
                        lookup.command,
                        dir.display(),
                        dir.display(),
                        paths.editor,
                        here.display()
                    )
                } else {
                    format!("write the full path: `command = \"{}\"`", here.display())
                };
                findings.push(Finding {
                    severity: Severity::Problem,
                    message: format!(
                        "{whose}command `{}` (line {}) is found on this shell's PATH, at {}, but \
                         not on the PATH an editor started from the desktop gets ({})",
                        lookup.command,
                        lookup.line,
                        here.display(),
                        paths.editor
                    ),
                    hints: vec![fix],
                });
            }
            Ok(there) if &there != here => findings.push(Finding {
                severity: Severity::Warning,
                message: format!(
                    "{whose}command `{}` (line {}) is {} on this shell's PATH but {} on the \
                     editor's: the editor will run another program",
                    lookup.command,
                    lookup.line,
                    here.display(),
                    there.display()
                ),
                hints: vec![if registry {
                    format!(
                        "the registry agent runs `{}` from the PATH: give acp-conductor a PATH \
                         that finds the one you mean in the editor's settings for it (its `env`)",
                        lookup.command
                    )
                } else {
                    format!(
                        "write the full path of the one you mean: `command = \"{}\"`",
                        here.display()
                    )
                }],
            }),
            Ok(_) => {}
        }
    }
    findings
}

/// Each native component whose program is a script whose interpreter the editor's `PATH`
/// (or the component's own `env` PATH) does not have.
pub(crate) fn interpreter_findings(config: &Config, paths: &Paths<'_>) -> Vec<Finding> {
    let mut commands: Vec<(String, &CommandSpec)> = config
        .proxies
        .iter()
        .filter_map(|proxy| match &proxy.launch {
            ProxyLaunch::Native(spec) => Some((format!("proxy `{}`", proxy.name), spec)),
            ProxyLaunch::Wasm(_) | ProxyLaunch::Remote(_) => None,
        })
        .collect();
    match &config.agent {
        Some(AgentSpec::Command(spec)) => commands.push((format!("agent `{}`", spec.name), spec)),
        Some(AgentSpec::Builtin { command, .. }) => {
            commands.push((format!("agent `{}`", command.name), command))
        }
        Some(AgentSpec::Remote(_)) | None => {}
    }
    let mut findings = Vec::new();
    for (label, spec) in commands {
        let Some(shebang) = shebang(&spec.program) else {
            continue;
        };
        let own_path = spec
            .env
            .iter()
            .rev()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.as_str());
        let child_path = own_path.unwrap_or(paths.editor);
        let whose_path = if own_path.is_some() {
            "the PATH its `env` sets"
        } else {
            "the editor's PATH"
        };
        match shebang.interpreter {
            Interpreter::Searched(name) => {
                let search = ProgramSearch {
                    exe_dir: None,
                    path_var: Some(child_path.to_owned()),
                };
                if resolve_program(&name, Path::new("/"), &search).is_ok() {
                    continue;
                }
                let here = paths.on_shell_path(&name);
                let hint = match &here {
                    Some(found) => {
                        let dir = found.parent().unwrap_or(Path::new("/"));
                        format!(
                            "`{name}` is in {} here: add it to the component's PATH, with \
                             `env = {{ PATH = \"{}:{}\" }}` in its table of conductor.toml",
                            dir.display(),
                            dir.display(),
                            child_path
                        )
                    }
                    None => format!("install `{name}`, or give the component a PATH that has it"),
                };
                findings.push(Finding {
                    severity: Severity::Problem,
                    message: format!(
                        "{label}: {} is a script run by `{name}` (`{}`), and `{name}` is not on \
                         {whose_path} ({child_path})",
                        spec.program.display(),
                        shebang.line
                    ),
                    hints: vec![hint],
                });
            }
            Interpreter::Absolute(path) => {
                if !path.is_file() {
                    findings.push(Finding {
                        severity: Severity::Problem,
                        message: format!(
                            "{label}: {} is a script run by {} (`{}`), which does not exist",
                            spec.program.display(),
                            path.display(),
                            shebang.line
                        ),
                        hints: Vec::new(),
                    });
                }
            }
        }
    }
    findings
}

/// A note when the editor cannot start `acp-conductor` by its bare name.
pub(crate) fn conductor_finding(paths: &Paths<'_>) -> Option<Finding> {
    let exe = std::env::current_exe().ok()?;
    let search = ProgramSearch {
        exe_dir: None,
        path_var: Some(paths.editor.to_owned()),
    };
    let found = resolve_program("acp-conductor", Path::new("/"), &search).ok();
    let same = found
        .as_ref()
        .is_some_and(|found| std::fs::canonicalize(found).ok() == std::fs::canonicalize(&exe).ok());
    (!same).then(|| Finding {
        severity: Severity::Note,
        message: format!(
            "acp-conductor itself is not on the editor's PATH: in the editor's settings, start \
             it by its full path, {}",
            exe.display()
        ),
        hints: Vec::new(),
    })
}

/// A script's `#!` line.
#[derive(Debug, PartialEq, Eq)]
struct Shebang {
    /// The line as written, without `#!`'s trailing spaces and the newline.
    line: String,
    interpreter: Interpreter,
}

#[derive(Debug, PartialEq, Eq)]
enum Interpreter {
    /// `#!/usr/bin/env node`: `node`, looked up on the PATH the program runs with.
    Searched(String),
    /// `#!/bin/sh`.
    Absolute(PathBuf),
}

/// The `#!` line of `program`, if it is a script.
fn shebang(program: &Path) -> Option<Shebang> {
    let mut head = [0u8; 256];
    let mut file = std::fs::File::open(program).ok()?;
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(_) => return None,
        }
    }
    parse_shebang(&head[..filled])
}

fn parse_shebang(head: &[u8]) -> Option<Shebang> {
    let rest = head.strip_prefix(b"#!")?;
    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let text = std::str::from_utf8(&rest[..end]).ok()?.trim();
    let mut words = text.split_whitespace();
    let first = words.next()?;
    let line = format!("#!{text}");
    if Path::new(first).file_name().and_then(|n| n.to_str()) == Some("env") {
        // `env -S node --flags`, `env node`: the first word that is not an option.
        let name = words.find(|word| !word.starts_with('-'))?;
        if name.contains('=') {
            return None;
        }
        return Some(Shebang {
            line,
            interpreter: Interpreter::Searched(name.to_owned()),
        });
    }
    Some(Shebang {
        line,
        interpreter: Interpreter::Absolute(PathBuf::from(first)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebang_lines_name_their_interpreter() {
        assert_eq!(
            parse_shebang(b"#!/usr/bin/env node\nconsole.log(1)\n"),
            Some(Shebang {
                line: "#!/usr/bin/env node".to_owned(),
                interpreter: Interpreter::Searched("node".to_owned())
            })
        );
        assert_eq!(
            parse_shebang(b"#!/usr/bin/env -S node --no-warnings\n").map(|s| s.interpreter),
            Some(Interpreter::Searched("node".to_owned()))
        );
        assert_eq!(
            parse_shebang(b"#! /bin/sh -e\n").map(|s| s.interpreter),
            Some(Interpreter::Absolute(PathBuf::from("/bin/sh")))
        );
        assert_eq!(parse_shebang(b"\x7fELF\x02\x01"), None);
        assert_eq!(parse_shebang(b"#!/usr/bin/env\n"), None);
    }
}
