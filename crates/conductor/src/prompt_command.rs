//! `acp-conductor prompt`: hands the command over to `acp-prompt`, the editor shipped with the
//! conductor, which starts this conductor as its child. Must not know ACP: it only builds a command line.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use crate::config::ResolveError;

/// The program that plays the editor.
const PROMPT_PROGRAM: &str = "acp-prompt";

/// What `prompt` was asked to do, as parsed from the command line.
#[derive(Debug)]
pub struct PromptRequest<'a> {
    pub config: &'a Path,
    /// The log filter the prompt and its conductor use.
    pub log: &'a str,
    /// `allow` or `deny`.
    pub permissions: &'a str,
    pub cwd: Option<&'a Path>,
    pub prompts: &'a [String],
}

/// Replaces this process with `acp-prompt` (found next to acp-conductor, then on `PATH`),
/// which runs this same executable as its conductor. Returns only when that cannot be done.
///
/// The process keeps its id, so whoever started `acp-conductor prompt` (a shell, a script
/// sending it signals) deals with the prompt client directly, and its exit status is the prompt's.
pub fn exec(request: &PromptRequest<'_>) -> PromptError {
    let program = match crate::config::find_shipped_program(PROMPT_PROGRAM) {
        Ok(program) => program,
        Err(error) => return PromptError::NoPromptProgram(error),
    };
    let conductor = match std::env::current_exe() {
        Ok(conductor) => conductor,
        Err(error) => return PromptError::OwnExecutable(error),
    };
    let error = std::process::Command::new(&program)
        // The client names itself after this: its messages read as the conductor's did.
        .arg0("acp-conductor")
        .args(arguments(&conductor, request))
        .exec();
    PromptError::Exec {
        program,
        source: error,
    }
}

/// Why `prompt` could not hand over to `acp-prompt`.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error(
        "`prompt` needs the program `{PROMPT_PROGRAM}`: {0} (build it with `cargo build -p \
         acp-demo`, or install it next to acp-conductor)"
    )]
    NoPromptProgram(ResolveError),
    #[error("cannot find its own executable for `prompt`: {0}")]
    OwnExecutable(std::io::Error),
    #[error("cannot run {}: {source}", program.display())]
    Exec {
        program: PathBuf,
        source: std::io::Error,
    },
}

/// `acp-prompt`'s arguments for `request`, with `conductor` as the conductor to start.
fn arguments(conductor: &Path, request: &PromptRequest<'_>) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "--conductor".into(),
        conductor.into(),
        "--log".into(),
        request.log.into(),
        "--config".into(),
        request.config.into(),
        "--permissions".into(),
        request.permissions.into(),
    ];
    if let Some(cwd) = request.cwd {
        args.extend(["--cwd".into(), cwd.into()]);
    }
    // Prompts that look like options stay prompts.
    args.push("--".into());
    args.extend(request.prompts.iter().map(OsString::from));
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_is_passed_on_and_prompts_come_after_a_double_dash() {
        let prompts = ["--not-an-option".to_owned(), "hello".to_owned()];
        let request = PromptRequest {
            config: Path::new("conductor.toml"),
            log: "warn",
            permissions: "allow",
            cwd: Some(Path::new("work")),
            prompts: &prompts,
        };
        let args = arguments(Path::new("/opt/acp-conductor"), &request);
        assert_eq!(
            args,
            [
                "--conductor",
                "/opt/acp-conductor",
                "--log",
                "warn",
                "--config",
                "conductor.toml",
                "--permissions",
                "allow",
                "--cwd",
                "work",
                "--",
                "--not-an-option",
                "hello"
            ]
            .map(OsString::from)
        );
        let request = PromptRequest {
            cwd: None,
            ..request
        };
        let args = arguments(Path::new("/c"), &request);
        assert!(!args.contains(&OsString::from("--cwd")), "{args:?}");
    }
}
