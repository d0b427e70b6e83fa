//! doctor's report, run in process against files the tests write, with the environment
//! given by each test (no probe: that runs end to end, in `tests/tests/doctor.rs`).

use std::path::Path;

use super::*;
use crate::cli::{CommandError, exit_status};
use crate::config::test_support::TempDir;

/// The report and exit status of `doctor` on `file` with `PATH` = `shell` and the editor's
/// PATH `editor`, and `vars` besides.
fn report(file: &Path, shell: &str, editor: &str, vars: &[(&str, &str)]) -> (u8, String) {
    let lookup = |name: &str| match name {
        "PATH" => Some(shell.to_owned()),
        _ => vars
            .iter()
            .find(|(var, _)| *var == name)
            .map(|(_, value)| (*value).to_owned()),
    };
    let mut out = Vec::new();
    let request = DoctorRequest {
        config: file,
        editor_path: Some(editor),
        probe: false,
    };
    let code = match run_doctor(&request, &lookup, None, &mut out) {
        Ok(()) => 0,
        Err(error) => exit_status(&CommandError::from(error)),
    };
    (code, String::from_utf8(out).unwrap())
}

#[test]
fn a_command_the_editor_finds_elsewhere_is_a_warning_not_a_problem() {
    let temp = TempDir::new("doctor-elsewhere");
    let mine = temp.file("mine/tool", 0o755);
    let theirs = temp.file("theirs/tool", 0o755);
    let file = temp.write("conductor.toml", "[agent]\ncommand = \"tool\"\n");
    let shell = format!(
        "{}:{}",
        temp.path().join("mine").display(),
        temp.path().join("theirs").display()
    );
    let editor = temp.path().join("theirs").display().to_string();
    let (code, text) = report(&file, &shell, &editor, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!(
            "warning: `agent`: command `tool` (line 2) is {} on this shell's PATH but {} on the \
             editor's: the editor will run another program\n  fix: write the full path of the \
             one you mean: `command = \"{}\"`\n",
            mine.display(),
            theirs.display(),
            mine.display()
        )),
        "{text}"
    );
    assert!(text.ends_with("No problems found.\n"), "{text}");
}

#[test]
fn variables_set_here_are_noted_once_and_common_ones_not_at_all() {
    let temp = TempDir::new("doctor-variables");
    let agent = temp.file("bin/agent", 0o755);
    let file = temp.write(
        "conductor.toml",
        format!(
            "[agent]\ncommand = \"{}\"\nargs = [\"${{API_KEY}}\", \"${{API_KEY}}\", \"${{HOME}}\", \
             \"${{OPTIONAL:-x}}\"]\n",
            agent.display()
        ),
    );
    let bin = temp.path().join("bin").display().to_string();
    let (code, text) = report(
        &file,
        &bin,
        &bin,
        &[
            ("API_KEY", "secret"),
            ("HOME", "/home/me"),
            ("OPTIONAL", "y"),
        ],
    );
    assert_eq!(code, 0, "{text}");
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("note: `${"))
        .collect();
    assert_eq!(
        notes,
        [
            "note: `${API_KEY}` (line 3) is set in this shell; an editor started from the desktop \
          passes on its own environment, which may not have it"
        ]
    );
    // The value itself never appears in the report: the argument is shown as written.
    assert!(!text.contains("secret"), "{text}");
    assert!(
        text.contains("/bin/agent ${API_KEY} ${API_KEY} /home/me y\n"),
        "{text}"
    );
}

#[test]
fn an_interpreter_on_the_components_own_path_is_found_there() {
    let temp = TempDir::new("doctor-own-path");
    temp.file("interp/acp-test-interpreter", 0o755);
    let script = temp.write("bin/agent", "#!/usr/bin/env acp-test-interpreter\n");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let interp = temp.path().join("interp").display().to_string();
    let without = temp.write(
        "without.toml",
        format!("[agent]\ncommand = \"{}\"\n", script.display()),
    );
    let (code, text) = report(&without, "/usr/bin", "/usr/bin", &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("is a script run by `acp-test-interpreter`"),
        "{text}"
    );
    let with = temp.write(
        "with.toml",
        format!(
            "[agent]\ncommand = \"{}\"\nenv = {{ PATH = \"{interp}\" }}\n",
            script.display()
        ),
    );
    let (code, text) = report(&with, "/usr/bin", "/usr/bin", &[]);
    assert_eq!(code, 0, "{text}");
}
