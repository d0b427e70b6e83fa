//! How a registry agent is run on this machine: the command line for its `npx`, `uvx` or
//! `binary` distribution. Must not know the configuration file; the caller resolves the
//! program this returns as it resolves any `command`.
//!
//! Binary archives are never downloaded: the registry publishes no checksum to verify one
//! with, and running an unverified download as the agent is not something to do quietly. A
//! `binary` agent is run from the directory the user unpacked it into,
//! `<install root>/<id>/<version>/`; until it is there, the message says where to get it and
//! where to put it.

use std::path::{Path, PathBuf};

use super::{Agent, BinaryTarget, LaunchError, Package};

/// A distribution kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Binary,
    Npx,
    Uvx,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Binary => "binary",
            Kind::Npx => "npx",
            Kind::Uvx => "uvx",
        }
    }
}

/// An agent's command line, before its program is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLaunch {
    pub kind: Kind,
    /// `npx`, `uvx`, an absolute path inside the install directory, or a program name to look
    /// up on `PATH` (a binary distribution whose `cmd` is `node`, say).
    pub program: String,
    pub args: Vec<String>,
    /// The distribution's `env`, in name order.
    pub env: Vec<(String, String)>,
    /// Where to run it: the install directory for a binary whose `cmd` is a program on
    /// `PATH` (its arguments name files there), else `None`.
    pub cwd: Option<PathBuf>,
}

/// This machine's registry target: `linux-x86_64`, `darwin-aarch64`, `windows-x86_64`.
pub fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}-{}", std::env::consts::ARCH)
}

/// Where binary distributions are unpacked by hand: `$XDG_DATA_HOME/acp-conductor/agents`,
/// else `$HOME/.local/share/acp-conductor/agents`; `None` when neither is set (absolute).
pub fn install_root(vars: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |name: &str| {
        vars(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("XDG_DATA_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local/share")))
        .map(|base| base.join("acp-conductor").join("agents"))
}

impl Agent {
    /// Where this agent's binary archive is unpacked.
    pub fn install_dir(&self, root: &Path) -> PathBuf {
        root.join(&self.id).join(&self.version)
    }

    /// The command that runs this agent here. A binary already unpacked is preferred (the
    /// user went to the trouble), then `npx`, then `uvx`; a binary that is not unpacked yet is
    /// an error saying how to install it.
    pub fn launch(
        &self,
        platform: &str,
        install_root: Option<&Path>,
    ) -> Result<AgentLaunch, LaunchError> {
        let binary = self
            .distribution
            .binary
            .as_ref()
            .map(|targets| targets.get(platform));
        if let (Some(Some(target)), Some(root)) = (binary, install_root)
            && let Some(launch) = self.installed_binary(target, &self.install_dir(root))
        {
            return Ok(launch);
        }
        if let Some(package) = &self.distribution.npx {
            return Ok(package_launch(Kind::Npx, package, &self.version));
        }
        if let Some(package) = &self.distribution.uvx {
            return Ok(package_launch(Kind::Uvx, package, &self.version));
        }
        match binary {
            Some(Some(target)) => Err(LaunchError::NotInstalled {
                instructions: self.install_by_hand(target, platform, install_root),
            }),
            Some(None) => {
                let targets = self.distribution.binary.as_ref().expect("binary is set");
                Err(LaunchError::NoBuildHere {
                    id: self.id.clone(),
                    name: self.name.clone(),
                    version: self.version.clone(),
                    platform: platform.to_owned(),
                    listed: targets.keys().cloned().collect(),
                })
            }
            None => Err(LaunchError::NothingToRun {
                id: self.id.clone(),
            }),
        }
    }

    /// The launch of a binary unpacked in `dir`, if it is there.
    fn installed_binary(&self, target: &BinaryTarget, dir: &Path) -> Option<AgentLaunch> {
        let env = target
            .env
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        if is_in_archive(&target.cmd) {
            let program = dir.join(target.cmd.trim_start_matches("./"));
            return program.is_file().then(|| AgentLaunch {
                kind: Kind::Binary,
                program: program.display().to_string(),
                args: target.args.clone(),
                env,
                cwd: None,
            });
        }
        dir.is_dir().then(|| AgentLaunch {
            kind: Kind::Binary,
            program: target.cmd.clone(),
            args: target.args.clone(),
            env,
            cwd: Some(dir.to_path_buf()),
        })
    }

    fn install_by_hand(
        &self,
        target: &BinaryTarget,
        platform: &str,
        install_root: Option<&Path>,
    ) -> String {
        let url = &target.archive;
        let Some(root) = install_root else {
            return format!(
                "agent `{}` ({} {}) comes as a binary archive for {platform} ({url}), which \
                 acp-conductor does not download (the registry publishes no checksum to verify \
                 it with); with neither XDG_DATA_HOME nor HOME set there is nowhere to look for \
                 it unpacked: install it by hand and set `command` to its program instead of \
                 `registry`",
                self.id, self.name, self.version
            );
        };
        let dir = self.install_dir(root);
        let unpack = if url.ends_with(".zip") {
            format!(
                "mkdir -p {dir} && curl -fLo /tmp/{id}.zip {url} && unzip -o /tmp/{id}.zip -d {dir}",
                dir = dir.display(),
                id = self.id
            )
        } else if url.ends_with(".tar.gz") || url.ends_with(".tgz") {
            format!(
                "mkdir -p {dir} && curl -fL {url} | tar -xz -C {dir}",
                dir = dir.display()
            )
        } else {
            format!(
                "mkdir -p {dir} && curl -fL {url} | tar -x -C {dir}",
                dir = dir.display()
            )
        };
        let wanted = if is_in_archive(&target.cmd) {
            format!(
                "{} is there",
                dir.join(target.cmd.trim_start_matches("./")).display()
            )
        } else {
            format!("`{}` runs in that directory", target.cmd)
        };
        format!(
            "agent `{}` ({} {}) comes as a binary archive for {platform}, which acp-conductor does \
             not download (the registry publishes no checksum to verify it with): install it by \
             hand, from a source you trust, by unpacking {url} into {} so that {wanted} (for \
             example: {unpack}), or set `command` to the program instead of `registry`",
            self.id,
            self.name,
            self.version,
            dir.display(),
        )
    }
}

/// Whether a binary's `cmd` names a file of the archive (`./agent`, `bin/agent`) rather than
/// a program on `PATH` (`node`). An absolute `cmd` counts as a file too (a local registry
/// file may name a program installed elsewhere).
fn is_in_archive(cmd: &str) -> bool {
    cmd.contains('/')
}

/// `npx -y <package> <args>` or `uvx <package> <args>`, the package pinned to the registry's
/// version unless it names a version itself.
fn package_launch(kind: Kind, package: &Package, version: &str) -> AgentLaunch {
    let spec = if names_a_version(kind, &package.package) {
        package.package.clone()
    } else {
        format!("{}@{version}", package.package)
    };
    let (program, mut args) = match kind {
        // `-y`: npx must not ask before installing; its stdin is the protocol.
        Kind::Npx => ("npx", vec!["-y".to_owned(), spec]),
        _ => ("uvx", vec![spec]),
    };
    args.extend(package.args.iter().cloned());
    AgentLaunch {
        kind,
        program: program.to_owned(),
        args,
        env: package
            .env
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
        cwd: None,
    }
}

/// Whether a package spec carries its own version: `name@1.2`, `@scope/name@latest`; for
/// Python also `name==1.2`, `name>=1`.
fn names_a_version(kind: Kind, spec: &str) -> bool {
    // A scoped npm name starts with `@`; only a later one separates the version.
    let versioned = spec.get(1..).is_some_and(|rest| rest.contains('@'));
    versioned || (kind == Kind::Uvx && spec.contains(['=', '<', '>', '~', '!']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_package_specs_are_recognised() {
        assert!(names_a_version(Kind::Npx, "@google/gemini-cli@0.27.3"));
        assert!(names_a_version(Kind::Npx, "pkg@latest"));
        assert!(!names_a_version(
            Kind::Npx,
            "@zed-industries/claude-code-acp"
        ));
        assert!(!names_a_version(Kind::Npx, "pkg"));
        assert!(names_a_version(Kind::Uvx, "pyagent==2.1"));
        assert!(names_a_version(Kind::Uvx, "pyagent@2.1"));
        assert!(!names_a_version(Kind::Uvx, "pyagent"));
        assert!(!names_a_version(Kind::Npx, ""));
    }

    #[test]
    fn the_platform_is_named_as_the_registry_does() {
        let platform = platform();
        let (os, arch) = platform.split_once('-').expect("os-arch");
        assert_eq!(arch, std::env::consts::ARCH);
        assert_ne!(os, "macos", "the registry says darwin");
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        assert_eq!(platform, "linux-x86_64");
    }

    #[test]
    fn the_install_root_follows_xdg_then_home() {
        let vars = |name: &str| match name {
            "XDG_DATA_HOME" => Some("/data".to_owned()),
            "HOME" => Some("/home/me".to_owned()),
            _ => None,
        };
        assert_eq!(
            install_root(&vars),
            Some(PathBuf::from("/data/acp-conductor/agents"))
        );
        let home_only = |name: &str| (name == "HOME").then(|| "/home/me".to_owned());
        assert_eq!(
            install_root(&home_only),
            Some(PathBuf::from("/home/me/.local/share/acp-conductor/agents"))
        );
        let relative = |name: &str| (name == "XDG_DATA_HOME").then(|| "data".to_owned());
        assert_eq!(install_root(&relative), None);
    }
}
