//! `acp-conductor check`: a valid file exits 0; each mistake is reported as
//! `file:line:column: message` on stderr and the exit status is 78.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use acp_conductor_tests::test_chain::{fresh_dir, toml_string};
use acp_conductor_tests::{Binaries, binaries};

const EX_CONFIG: i32 = 78;
const UNSET_VARIABLE: &str = "ACP_E2E_SURELY_UNSET_VARIABLE";

struct Checked {
    path: PathBuf,
    text: String,
    output: Output,
    dir: PathBuf,
}

impl Drop for Checked {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Checked {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Asserts exit 78 and a `file:line:col:` diagnostic for the config line containing
    /// `line_text`, the column being where one of `anchors` starts on that line, and that
    /// stderr mentions every word of `words`.
    fn assert_reported(&self, line_text: &str, anchors: &[&str], words: &[&str]) {
        let stderr = self.stderr();
        assert_eq!(
            self.output.status.code(),
            Some(EX_CONFIG),
            "stderr:\n{stderr}"
        );
        let (index, line) = self
            .text
            .lines()
            .enumerate()
            .find(|(_, line)| line.contains(line_text))
            .unwrap_or_else(|| panic!("the test's config has no line with {line_text}"));
        let line_number = index + 1;
        let locations: Vec<String> = anchors
            .iter()
            .map(|anchor| {
                let column = line
                    .find(anchor)
                    .unwrap_or_else(|| panic!("{anchor} not on {line}"))
                    + 1;
                format!("{}:{line_number}:{column}:", self.path.display())
            })
            .collect();
        assert!(
            stderr
                .lines()
                .any(|l| locations.iter().any(|location| l.starts_with(location))),
            "expected a diagnostic starting with one of {locations:?}; stderr:\n{stderr}"
        );
        let lowercase = stderr.to_lowercase();
        for word in words {
            assert!(
                lowercase.contains(&word.to_lowercase()),
                "stderr should mention `{word}`:\n{stderr}"
            );
        }
    }
}

fn check(label: &str, text: &str) -> Checked {
    let binaries: Binaries = binaries!();
    let dir = fresh_dir(label);
    let path = dir.join("conductor.toml");
    std::fs::write(&path, text).unwrap();
    let output = Command::new(&binaries.conductor)
        .args(["check", "--config"])
        .arg(&path)
        .env_remove(UNSET_VARIABLE)
        .env_remove("ACP_CONDUCTOR_CONFIG")
        .output()
        .expect("run acp-conductor check");
    Checked {
        path,
        text: text.to_string(),
        output,
        dir,
    }
}

fn quoted(path: &Path) -> String {
    toml_string(&path.display().to_string())
}

#[test]
fn check_accepts_a_valid_config() {
    let binaries = binaries!();
    let text = format!(
        "[agent]\ncommand = {}\nargs = [\"--updates\", \"2\"]\n\n[[proxy]]\nname = \"p1\"\ncommand = {}\n",
        quoted(&binaries.agent),
        quoted(&binaries.proxy)
    );
    let checked = check("check-valid", &text);
    assert_eq!(
        checked.output.status.code(),
        Some(0),
        "stderr:\n{}",
        checked.stderr()
    );
}

#[test]
fn misspelled_key_is_reported_with_its_position_and_a_suggestion() {
    let binaries = binaries!();
    let text = format!("[agent]\ncomand = {}\n", quoted(&binaries.agent));
    let checked = check("check-misspelled", &text);
    checked.assert_reported("comand", &["comand"], &["comand", "command"]);
}

#[test]
fn misspelled_proxy_key_is_reported_with_a_suggestion() {
    let binaries = binaries!();
    let text = format!(
        "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"p1\"\ncommand = {}\nprotocl = \"rfd\"\n",
        quoted(&binaries.agent),
        quoted(&binaries.proxy)
    );
    let checked = check("check-misspelled-proxy", &text);
    checked.assert_reported("protocl", &["protocl"], &["protocl", "protocol"]);
}

#[test]
fn wrong_type_is_reported_with_its_position() {
    let binaries = binaries!();
    let text = format!(
        "[agent]\ncommand = {}\nargs = \"--updates\"\n",
        quoted(&binaries.agent)
    );
    let checked = check("check-wrong-type", &text);
    checked.assert_reported("args =", &["args", "\"--updates\""], &["args"]);
}

#[test]
fn missing_command_is_reported_with_its_position() {
    let binaries = binaries!();
    let text = format!(
        "[agent]\ncommand = {}\n\n[[proxy]]\nname = \"ghost\"\ncommand = \"/nonexistent/ghost-proxy\"\n",
        quoted(&binaries.agent)
    );
    let checked = check("check-missing-command", &text);
    checked.assert_reported(
        "ghost-proxy",
        &["command", "\"/nonexistent"],
        &["/nonexistent/ghost-proxy"],
    );
}

#[test]
fn command_name_not_on_path_is_reported_with_its_position() {
    let text = "[agent]\ncommand = \"acp-e2e-no-such-program\"\n";
    let checked = check("check-missing-bare-command", text);
    checked.assert_reported(
        "no-such-program",
        &["command", "\"acp-e2e"],
        &["acp-e2e-no-such-program"],
    );
}

#[test]
fn unset_variable_is_reported_with_its_position() {
    let binaries = binaries!();
    let text = format!(
        "[agent]\ncommand = {}\nenv = {{ TOKEN = \"${{{UNSET_VARIABLE}}}\" }}\n",
        quoted(&binaries.agent)
    );
    let checked = check("check-unset-variable", &text);
    checked.assert_reported(
        UNSET_VARIABLE,
        &["env", "TOKEN", "\"${", "${"],
        &[UNSET_VARIABLE],
    );
}
