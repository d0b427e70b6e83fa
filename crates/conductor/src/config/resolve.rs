//! Turns `command` and `cwd` values into absolute paths that exist on this machine.
//! Must not know the configuration schema or spawn anything: it only inspects the filesystem.

use std::path::{Component, Path, PathBuf};

/// Where a program name without a slash is looked for, in order.
pub(crate) struct ProgramSearch<'a> {
    /// The directory holding the conductor's own executable, so that proxies shipped
    /// alongside it win over same-named programs elsewhere.
    pub(crate) exe_dir: Option<&'a Path>,
    /// The `PATH` value of the environment the conductor runs in.
    pub(crate) path_var: Option<String>,
}

/// Resolves `command` to an absolute path of an executable file.
///
/// A command containing `/` is a path, relative ones resolve against `config_dir`;
/// a bare name is looked up next to the conductor first, then on `PATH`.
pub(crate) fn resolve_program(
    command: &str,
    config_dir: &Path,
    search: &ProgramSearch<'_>,
) -> Result<PathBuf, ResolveError> {
    if command.contains('/') {
        let program = relative_to(config_dir, command);
        let command = command.to_owned();
        return match std::fs::metadata(&program) {
            Err(_) => Err(ResolveError::Missing {
                command,
                path: program,
            }),
            Ok(metadata) if metadata.is_dir() => Err(ResolveError::IsADirectory {
                command,
                path: program,
            }),
            Ok(_) if !is_executable_file(&program) => Err(ResolveError::NotExecutable {
                command,
                path: program,
            }),
            Ok(_) => Ok(program),
        };
    }
    let path_dirs = search
        .path_var
        .as_deref()
        .map(|path_var| std::env::split_paths(path_var).collect::<Vec<_>>())
        .unwrap_or_default();
    search
        .exe_dir
        .map(Path::to_path_buf)
        .into_iter()
        // An empty PATH entry would mean "the current directory", which makes the chain
        // depend on where the editor happened to start us; skip it.
        .chain(
            path_dirs
                .into_iter()
                .filter(|dir| !dir.as_os_str().is_empty()),
        )
        .map(|dir| std::path::absolute(&dir).unwrap_or(dir).join(command))
        .find(|candidate| is_executable_file(candidate))
        .ok_or_else(|| ResolveError::NotFound {
            command: command.to_owned(),
            next_to_conductor: search.exe_dir.is_some(),
        })
}

/// Resolves a working directory against `config_dir`; it must be an existing directory.
pub(crate) fn resolve_dir(dir: &str, config_dir: &Path) -> Result<PathBuf, ResolveError> {
    let resolved = relative_to(config_dir, dir);
    match std::fs::metadata(&resolved) {
        Ok(metadata) if metadata.is_dir() => Ok(resolved),
        Ok(_) => Err(ResolveError::CwdNotADirectory(resolved)),
        Err(_) => Err(ResolveError::CwdMissing(resolved)),
    }
}

/// Why a `command` or a `cwd` names nothing usable on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("command `{command}` not found ({} does not exist)", path.display())]
    Missing { command: String, path: PathBuf },
    #[error("command `{command}` is a directory ({})", path.display())]
    IsADirectory { command: String, path: PathBuf },
    #[error("command `{command}` is not executable ({})", path.display())]
    NotExecutable { command: String, path: PathBuf },
    /// A bare name found neither next to the conductor (when that was searched) nor on `PATH`.
    #[error(
        "command `{command}` not found {}on PATH",
        if *next_to_conductor { "next to acp-conductor or " } else { "" }
    )]
    NotFound {
        command: String,
        next_to_conductor: bool,
    },
    #[error("`cwd` {} is not a directory", .0.display())]
    CwdNotADirectory(PathBuf),
    #[error("`cwd` {} does not exist", .0.display())]
    CwdMissing(PathBuf),
}

/// `text` as an absolute path, relative paths taken from `base`, with `.` segments removed.
pub(crate) fn relative_to(base: &Path, text: &str) -> PathBuf {
    base.join(text)
        .components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect()
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::test_support::TempDir;

    fn search<'a>(exe_dir: Option<&'a Path>, path_dirs: &[&Path]) -> ProgramSearch<'a> {
        ProgramSearch {
            exe_dir,
            path_var: Some(
                std::env::join_paths(path_dirs)
                    .unwrap()
                    .into_string()
                    .unwrap(),
            ),
        }
    }

    #[test]
    fn bare_names_prefer_the_conductors_directory_over_path() {
        let temp = TempDir::new("lookup-order");
        let beside = temp.file("exe/tool", 0o755);
        let on_path = temp.file("bin/tool", 0o755);
        let config_dir = temp.dir("config");
        let exe_dir = temp.path().join("exe");
        let bin = temp.path().join("bin");
        assert_eq!(
            resolve_program("tool", &config_dir, &search(Some(&exe_dir), &[&bin])),
            Ok(beside)
        );
        assert_eq!(
            resolve_program("tool", &config_dir, &search(None, &[&bin])),
            Ok(on_path)
        );
    }

    #[test]
    fn path_is_searched_in_order_after_the_conductors_directory() {
        let temp = TempDir::new("path-order");
        let exe_dir = temp.dir("exe");
        let first = temp.dir("first");
        let second = temp.dir("second");
        let wanted = temp.file("second/tool", 0o755);
        temp.file("third/tool", 0o755);
        let third = temp.path().join("third");
        assert_eq!(
            resolve_program(
                "tool",
                temp.path(),
                &search(Some(&exe_dir), &[&first, &second, &third])
            ),
            Ok(wanted)
        );
    }

    #[test]
    fn non_executable_files_and_directories_are_skipped_in_the_search() {
        let temp = TempDir::new("skip");
        temp.file("exe/tool", 0o644);
        temp.dir("bin1/tool");
        let wanted = temp.file("bin2/tool", 0o700);
        let exe_dir = temp.path().join("exe");
        let bin1 = temp.path().join("bin1");
        let bin2 = temp.path().join("bin2");
        assert_eq!(
            resolve_program(
                "tool",
                temp.path(),
                &search(Some(&exe_dir), &[&bin1, &bin2])
            ),
            Ok(wanted)
        );
    }

    #[test]
    fn missing_bare_names_say_where_they_were_looked_for() {
        let temp = TempDir::new("missing");
        let exe_dir = temp.dir("exe");
        assert_eq!(
            resolve_program("nope", temp.path(), &search(Some(&exe_dir), &[&exe_dir]))
                .map_err(|e| e.to_string()),
            Err("command `nope` not found next to acp-conductor or on PATH".to_owned())
        );
        assert_eq!(
            resolve_program(
                "nope",
                temp.path(),
                &ProgramSearch {
                    exe_dir: None,
                    path_var: None
                }
            )
            .map_err(|e| e.to_string()),
            Err("command `nope` not found on PATH".to_owned())
        );
    }

    #[test]
    fn paths_with_a_slash_resolve_against_the_config_directory() {
        let temp = TempDir::new("relative");
        let program = temp.file("config/bin/proxy", 0o755);
        let config_dir = temp.path().join("config");
        let no_search = search(None, &[]);
        assert_eq!(
            resolve_program("./bin/proxy", &config_dir, &no_search),
            Ok(program.clone())
        );
        assert_eq!(
            resolve_program("bin/proxy", &config_dir, &no_search),
            Ok(program.clone())
        );
        assert_eq!(
            resolve_program(
                program.to_str().unwrap(),
                Path::new("/elsewhere"),
                &no_search
            ),
            Ok(program)
        );
    }

    #[test]
    fn paths_with_a_slash_are_not_searched_elsewhere() {
        let temp = TempDir::new("no-search");
        temp.file("exe/bin/proxy", 0o755);
        let exe_dir = temp.path().join("exe");
        let config_dir = temp.dir("config");
        let error = resolve_program(
            "bin/proxy",
            &config_dir,
            &search(Some(&exe_dir), &[&exe_dir]),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "command `bin/proxy` not found ({} does not exist)",
                config_dir.join("bin/proxy").display()
            )
        );
    }

    #[test]
    fn paths_must_be_executable_files() {
        let temp = TempDir::new("not-exec");
        let plain = temp.file("plain", 0o644);
        let dir = temp.dir("adir");
        let no_search = search(None, &[]);
        assert_eq!(
            resolve_program("./plain", temp.path(), &no_search).map_err(|e| e.to_string()),
            Err(format!(
                "command `./plain` is not executable ({})",
                plain.display()
            ))
        );
        assert_eq!(
            resolve_program("./adir", temp.path(), &no_search).map_err(|e| e.to_string()),
            Err(format!(
                "command `./adir` is a directory ({})",
                dir.display()
            ))
        );
    }

    #[test]
    fn working_directories_resolve_against_the_config_directory() {
        let temp = TempDir::new("cwd");
        let work = temp.dir("work");
        temp.file("file", 0o644);
        assert_eq!(resolve_dir("work", temp.path()), Ok(work.clone()));
        assert_eq!(resolve_dir("./work/.", temp.path()), Ok(work.clone()));
        assert_eq!(resolve_dir(".", temp.path()), Ok(temp.path().to_path_buf()));
        assert_eq!(
            resolve_dir(work.to_str().unwrap(), Path::new("/elsewhere")),
            Ok(work)
        );
        assert_eq!(
            resolve_dir("missing", temp.path()).map_err(|e| e.to_string()),
            Err(format!(
                "`cwd` {} does not exist",
                temp.path().join("missing").display()
            ))
        );
        assert_eq!(
            resolve_dir("file", temp.path()).map_err(|e| e.to_string()),
            Err(format!(
                "`cwd` {} is not a directory",
                temp.path().join("file").display()
            ))
        );
    }

    #[test]
    fn relative_to_keeps_parent_segments_and_drops_dots() {
        assert_eq!(
            relative_to(Path::new("/a/b"), "./c/../d/."),
            PathBuf::from("/a/b/c/../d")
        );
        assert_eq!(
            relative_to(Path::new("/a/b"), "/x/./y"),
            PathBuf::from("/x/y")
        );
    }
}
