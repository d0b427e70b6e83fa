//! Finds a program shipped with this one: next to the running executable first, then on `PATH`,
//! the way acp-conductor finds bare command names. Knows the filesystem, nothing else.

use std::path::{Path, PathBuf};

/// The absolute path of the executable file `name` next to the running program or, failing
/// that, in a directory of `PATH` (empty entries, meaning the current directory, are skipped).
pub fn find_beside_or_on_path(name: &str) -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(
            path_dirs
                .into_iter()
                .filter(|dir| !dir.as_os_str().is_empty()),
        )
        .map(|dir| std::path::absolute(&dir).unwrap_or(dir).join(name))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}
