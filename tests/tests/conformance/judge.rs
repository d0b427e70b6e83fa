//! The conformance judge, a program of its own Cargo workspace (`tests/conformance-judge`):
//! built once per test run, run on what a scenario recorded, its verdicts read back. It is the
//! judge that knows the schema; this module knows only how to ask it.
//!
//! The judge has a workspace and a lock file of its own because its schema crate
//! (`agent-client-protocol-schema` 1.20.0) and the SDK fixture's (1.15.1, through
//! `agent-client-protocol` 5.0.0) cannot share this workspace's lock: cargo keeps one
//! semver-compatible version of a crate from crates.io per lock file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::links::{LinkKind, LinkRecord};

/// The judge's name for the legacy form of an acp server declaration with `id` where schema
/// 1.20 has `serverId` (the judge's `Legacy::AcpDeclarationWithId`).
pub const ACP_DECLARATION_WITH_ID: &str = "acp declaration with `id`";

/// The judge's verdict on one line the conductor wrote.
#[derive(Debug, Clone)]
pub struct Judged {
    pub link: String,
    pub kind: LinkKind,
    /// Which of the lines the conductor wrote on the link it is, from 1.
    pub number: usize,
    /// What the line is: `request session/new`, `notification session/update plan`,
    /// `result of session/prompt`, `request fs/read_text_file in proxy/successor`; the
    /// scenarios' coverage checks match on it.
    pub what: String,
    /// The name of the legacy form it is, when it is one the judge excuses.
    pub legacy: Option<String>,
    pub line: String,
    /// `Err` holds why the schema refused the line.
    pub verdict: Result<(), String>,
}

/// What the judge made of a recording.
pub struct Verdicts {
    /// One per line the conductor wrote, link by link.
    pub judged: Vec<Judged>,
    /// Success when the schema refused no line.
    pub status: ExitStatus,
    /// Its standard error: the counts, and every refused line with its context.
    pub told: String,
}

/// The judge's program, built on first use by this test binary (the other tests wait for it);
/// before a scenario starts its processes, so that compiling it does not eat into their time.
pub fn program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(build)
}

/// Builds the judge with the cargo running these tests, into `conformance-judge` in the
/// target directory these tests were built into, from its own lock file.
fn build() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance-judge/Cargo.toml");
    // A fixture of this package lives in `<target>/<profile>/`.
    let target = Path::new(env!("CARGO_BIN_EXE_test-agent"))
        .parent()
        .and_then(Path::parent)
        .expect("a fixture binary lives in the target directory's profile directory")
        .join("conformance-judge");
    let output = Command::new(env!("CARGO"))
        .args(["build", "--locked", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .output()
        .expect("cargo starts");
    assert!(
        output.status.success(),
        "building the conformance judge ({}) failed, {}:\n{}",
        manifest.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let program = target.join("debug").join(format!(
        "acp-conformance-judge{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(program.is_file(), "cargo built no {}", program.display());
    program
}

/// The recording of `links` as the judge reads it: JSON lines, each one line the conductor
/// (`by: conductor`) or its peer (`by: peer`) wrote on a named link.
fn recording(links: &[LinkRecord]) -> String {
    let mut text = String::new();
    for link in links {
        let lines = [("peer", &link.peer_sent), ("conductor", &link.written)];
        for (by, lines) in lines {
            for line in lines {
                let entry = json!({
                    "link": link.name,
                    "kind": link.kind.token(),
                    "by": by,
                    "line": line,
                });
                text.push_str(&entry.to_string());
                text.push('\n');
            }
        }
    }
    text
}

/// Runs the judge on every line of `links`.
pub fn run(links: &[LinkRecord]) -> Verdicts {
    let recording = recording(links);
    let mut child = Command::new(program())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the conformance judge starts");
    let mut stdin = child.stdin.take().expect("the judge's stdin");
    // Written from a thread: the judge's verdicts fill its stdout pipe meanwhile.
    let output = std::thread::scope(|scope| {
        scope.spawn(move || {
            stdin
                .write_all(recording.as_bytes())
                .expect("the judge reads the recording")
        });
        child
            .wait_with_output()
            .expect("the conformance judge ends")
    });
    let told = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "the conformance judge did not judge the recording ({}):\n{told}",
        output.status
    );
    let judged = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(read_verdict)
        .collect();
    Verdicts {
        judged,
        status: output.status,
        told,
    }
}

/// One verdict line of the judge's.
fn read_verdict(line: &str) -> Judged {
    let verdict: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("the judge wrote a verdict that is not JSON ({e}): {line}"));
    let text = |field: &str| {
        verdict[field]
            .as_str()
            .unwrap_or_else(|| panic!("no `{field}` in the verdict {line}"))
            .to_string()
    };
    let kind = text("kind");
    Judged {
        link: text("link"),
        kind: LinkKind::from_token(&kind)
            .unwrap_or_else(|| panic!("the judge named an unknown kind of link: {line}")),
        number: verdict["number"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or_else(|| panic!("no `number` in the verdict {line}")),
        what: text("what"),
        legacy: verdict["legacy"].as_str().map(str::to_string),
        line: text("line"),
        verdict: match &verdict["error"] {
            Value::Null => Ok(()),
            error => Err(error.as_str().map_or(error.to_string(), str::to_string)),
        },
    }
}

/// The names of the legacy forms the judge excuses from payload judging.
pub fn allow_list() -> Vec<String> {
    let output = Command::new(program())
        .arg("--allow-list")
        .output()
        .expect("the conformance judge starts");
    assert!(
        output.status.success(),
        "the judge's --allow-list failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}
