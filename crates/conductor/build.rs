//! Which build this is, for `acp-conductor --version`: the git commit the conductor was
//! built from (and whether the checkout had uncommitted changes), or `unknown` when it was
//! not built from a git checkout of this repository (or git is not installed), and the
//! cargo profile. Sets `ACP_CONDUCTOR_BUILD`, e.g. `commit 6a33fef1c2d3, release build`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".to_string());
    let commit = match git_commit(&manifest_dir) {
        Some(Commit { id, dirty: false }) => format!("commit {id}"),
        Some(Commit { id, dirty: true }) => format!("commit {id} with uncommitted changes"),
        None => "commit unknown".to_string(),
    };
    println!("cargo:rustc-env=ACP_CONDUCTOR_BUILD={commit}, {profile} build");
    // Without these, cargo would run this again only when a file of this package changes,
    // and a commit would not show.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src");
    for path in git_files(&manifest_dir) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

struct Commit {
    id: String,
    dirty: bool,
}

fn git_commit(dir: &Path) -> Option<Commit> {
    // An enclosing repository that does not track this package is somebody else's (a
    // vendored copy): its commit would say nothing about this build.
    git(dir, &["ls-files", "--error-unmatch", "Cargo.toml"])?;
    let id = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    // Without optional locks: a build must not write the index under a running git.
    let status = git(
        dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )?;
    Some(Commit {
        id,
        dirty: !status.is_empty(),
    })
}

/// The files whose change means another commit is checked out: `HEAD`, the branch it
/// names, and the packed refs (in a worktree, `HEAD` is the worktree's own and the refs are
/// the repository's).
fn git_files(dir: &Path) -> Vec<PathBuf> {
    let path = |args: &[&str]| git(dir, args).map(|p| dir.join(p));
    let (Some(git_dir), Some(common_dir)) = (
        path(&["rev-parse", "--git-dir"]),
        path(&["rev-parse", "--git-common-dir"]),
    ) else {
        return Vec::new();
    };
    let mut files = vec![git_dir.join("HEAD"), common_dir.join("packed-refs")];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        files.push(common_dir.join(branch));
    }
    files.into_iter().filter(|f| f.exists()).collect()
}

/// What `git args` printed (trimmed), if it ran and succeeded.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8(output.stdout).ok()?.trim().to_string())
}
