//! `acp-conductor --version` says which build it is: the release, the git commit it was
//! built from (with a note when the checkout had uncommitted changes) or `unknown` when it
//! was not built from a git checkout, and the cargo profile.

use std::path::Path;
use std::process::Command;

use acp_conductor_tests::binaries;

#[test]
fn version_names_the_release_the_commit_and_the_profile() {
    let binaries = binaries!();
    let output = Command::new(&binaries.conductor)
        .arg("--version")
        .output()
        .expect("run the conductor");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    let line = text.trim_end();
    // acp-conductor 0.1.0 (commit 6a33fef1c2d3, debug build)
    let (release, build) = line
        .strip_prefix("acp-conductor ")
        .and_then(|rest| rest.split_once(" ("))
        .unwrap_or_else(|| panic!("unexpected --version: {line:?}"));
    assert!(
        release.split('.').count() == 3 && release.split('.').all(|n| n.parse::<u32>().is_ok()),
        "{line:?}"
    );
    let (commit, profile) = build
        .strip_suffix(" build)")
        .and_then(|b| b.split_once(", "))
        .unwrap_or_else(|| panic!("unexpected --version: {line:?}"));
    assert!(["debug", "release"].contains(&profile), "{line:?}");
    let commit = commit
        .strip_prefix("commit ")
        .unwrap_or_else(|| panic!("unexpected --version: {line:?}"));
    let commit = commit
        .strip_suffix(" with uncommitted changes")
        .unwrap_or(commit);

    // The conductor is built from the checkout these tests are in.
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"));
    let in_git = git(checkout, &["rev-parse", "--git-dir"]);
    if !in_git {
        assert_eq!(commit, "unknown", "not built from a git checkout: {line:?}");
        return;
    }
    assert!(
        commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "a git checkout names its commit: {line:?}"
    );
    assert!(
        git(
            checkout,
            &["cat-file", "-e", &format!("{commit}^{{commit}}")]
        ),
        "{commit} is not a commit of this repository: {line:?}"
    );
}

fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}
