//! Paths as ACP uses them: absolute, resolved against a session's `cwd`, compared after
//! lexical normalization. Never touches the filesystem (a WASM proxy may not have one).

use std::path::{Component, Path, PathBuf};

/// `path` with `.` removed and `..` applied to the part before it, without consulting the
/// filesystem (so symlinks are not followed). `..` at the root stays at the root.
///
/// ```
/// use std::path::Path;
/// use proxy_kit::path::normalize;
/// assert_eq!(normalize(Path::new("/work/./p/../../etc/passwd")), Path::new("/etc/passwd"));
/// assert_eq!(normalize(Path::new("/../x")), Path::new("/x"));
/// ```
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let at_root = matches!(
                    out.components().next_back(),
                    None | Some(Component::RootDir | Component::Prefix(_))
                );
                if at_root && out.has_root() {
                    continue;
                }
                if at_root || out.components().next_back() == Some(Component::ParentDir) {
                    out.push("..");
                } else {
                    out.pop();
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` resolved against `base` when relative, then normalized.
pub fn resolve(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&base.join(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(p: &str) -> String {
        normalize(Path::new(p)).to_string_lossy().into_owned()
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(n("/a/b/../c/./d"), "/a/c/d");
        assert_eq!(n("/a/b/../../../../c"), "/c");
        assert_eq!(n("/"), "/");
        assert_eq!(n("/a//b/"), "/a/b");
        assert_eq!(n("a/../../b"), "../b");
        assert_eq!(n("../../x"), "../../x");
        assert_eq!(n("./x/."), "x");
    }

    #[test]
    fn resolves_relative_to_base_only() {
        assert_eq!(
            resolve(Path::new("/proj"), Path::new("docs/../AGENTS.md")),
            Path::new("/proj/AGENTS.md")
        );
        assert_eq!(
            resolve(Path::new("/proj"), Path::new("/etc/x")),
            Path::new("/etc/x")
        );
        assert_eq!(
            resolve(Path::new("/proj"), Path::new("../up")),
            Path::new("/up")
        );
    }
}
