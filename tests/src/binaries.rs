//! Where the programs under test are: the fixtures cargo built for this package and the
//! `acp-conductor` binary in the same target directory. Knows paths, not behaviour.

use std::path::{Path, PathBuf};

/// Absolute paths of every program a test launches.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub conductor: PathBuf,
    pub agent: PathBuf,
    pub proxy: PathBuf,
}

/// The binaries of this test build; a macro because cargo tells integration tests, not
/// libraries, where it put the package's executables.
#[macro_export]
macro_rules! binaries {
    () => {
        $crate::binaries::Binaries::locate(
            env!("CARGO_BIN_EXE_test-agent"),
            env!("CARGO_BIN_EXE_test-proxy"),
        )
    };
}

impl Binaries {
    /// The conductor is taken from `ACP_CONDUCTOR_BIN` when set, else from the target
    /// directory the fixtures were built into.
    pub fn locate(agent: &str, proxy: &str) -> Self {
        let agent = PathBuf::from(agent);
        let conductor = match std::env::var_os("ACP_CONDUCTOR_BIN") {
            Some(path) => PathBuf::from(path),
            None => agent
                .parent()
                .expect("a fixture binary lives in a directory")
                .join("acp-conductor"),
        };
        assert!(
            is_file(&conductor),
            "{} does not exist: build it with `cargo build -p acp-conductor` \
             (or point ACP_CONDUCTOR_BIN at a conductor binary)",
            conductor.display()
        );
        Self {
            conductor,
            agent,
            proxy: PathBuf::from(proxy),
        }
    }
}

fn is_file(path: &Path) -> bool {
    path.metadata().is_ok_and(|metadata| metadata.is_file())
}
