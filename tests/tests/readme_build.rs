//! The README's first command builds what the demo chain runs, and only that: the packages it
//! names are exactly those whose programs `conductor.toml.example` and `acp-conductor prompt`
//! start. A proxy added to the example without its package here would be "not found" on a
//! fresh clone; a test fixture or the bench added here would cost a new user minutes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the repository")
        .to_path_buf()
}

/// The first line of the README's first `sh` block.
fn readme_first_command() -> String {
    let readme = std::fs::read_to_string(repository().join("README.md")).expect("README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .expect("the README has a sh block");
    block.lines().next().expect("a command").to_string()
}

/// Every program the demo starts: the conductor, `acp-prompt` (which `acp-conductor prompt`
/// runs), the demo agent of `builtin = "demo"`, and each `command` of the example's proxies.
fn demo_programs() -> BTreeSet<String> {
    let example = std::fs::read_to_string(repository().join("conductor.toml.example"))
        .expect("conductor.toml.example");
    let mut programs: BTreeSet<String> = ["acp-conductor", "acp-prompt"]
        .into_iter()
        .map(String::from)
        .collect();
    for line in example.lines().map(str::trim) {
        if line == r#"builtin = "demo""# {
            programs.insert("acp-demo-agent".to_string());
        } else if let Some(value) = line.strip_prefix("command = ") {
            programs.insert(value.trim_matches('"').to_string());
        }
    }
    programs
}

/// Which workspace package builds each binary, from `cargo metadata`.
fn package_of_binary() -> Vec<(String, String)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(repository())
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "{output:?}");
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata JSON");
    let mut bins = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            if target["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
            {
                bins.push((
                    target["name"].as_str().unwrap().to_string(),
                    package["name"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    bins
}

#[test]
fn the_readme_builds_exactly_the_packages_of_the_programs_the_demo_runs() {
    let command = readme_first_command();
    let (build, run) = command
        .split_once(" && ")
        .unwrap_or_else(|| panic!("build && run: {command}"));
    assert!(
        run.starts_with("target/debug/acp-conductor prompt --config conductor.toml.example "),
        "{run}"
    );
    let words: Vec<&str> = build.split_whitespace().collect();
    assert_eq!(&words[..2], ["cargo", "build"], "{build}");
    let mut named = BTreeSet::new();
    let mut rest = words[2..].iter();
    while let Some(word) = rest.next() {
        assert_eq!(*word, "-p", "only packages are selected: {build}");
        named.insert(rest.next().expect("a package after -p").to_string());
    }

    let bins = package_of_binary();
    let needed: BTreeSet<String> = demo_programs()
        .iter()
        .map(|program| {
            bins.iter()
                .find(|(bin, _)| bin == program)
                .unwrap_or_else(|| panic!("no workspace package builds `{program}`"))
                .1
                .clone()
        })
        .collect();
    assert_eq!(named, needed, "README: {build}");
}
