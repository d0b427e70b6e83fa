//! Where the programs under test are: the fixtures cargo built for this package and the
//! `acp-conductor` binary, with the programs it runs itself, in the same target directory.
//! Knows paths, not behaviour.

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
    /// directory the fixtures were built into, which must hold a build at least as new as
    /// the conductor's sources (`cargo test` does not rebuild another package's binary), and
    /// current builds of the programs the conductor runs itself ([`SHIPPED_PROGRAMS`]).
    pub fn locate(agent: &str, proxy: &str) -> Self {
        let agent = PathBuf::from(agent);
        let conductor = match std::env::var_os("ACP_CONDUCTOR_BIN") {
            Some(path) => PathBuf::from(path),
            None => {
                let dir = agent
                    .parent()
                    .expect("a fixture binary lives in a directory");
                let conductor = dir.join("acp-conductor");
                assert_not_older_than_sources(&conductor);
                for program in SHIPPED_PROGRAMS {
                    assert_built_and_current(&dir.join(program.path), program);
                }
                conductor
            }
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

/// A program of this workspace that tests run as a chain component: where cargo puts it in
/// the target directory, what it is built from, and the command that builds it.
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceProgram {
    /// Relative to the target directory's profile directory (`target/debug`).
    pub path: &'static str,
    /// Files and directories, relative to the workspace root.
    pub sources: &'static [&'static str],
    pub build: &'static str,
}

/// The sources of the programs in `crates/demo`.
const DEMO_SOURCES: [&str; 3] = [
    "crates/demo/src",
    "crates/demo/Cargo.toml",
    "crates/acp-wire/src",
];

/// The demo agent, which the conductor runs (found next to itself) for `builtin = "demo"`.
pub const DEMO_AGENT: WorkspaceProgram = WorkspaceProgram {
    path: "acp-demo-agent",
    sources: &DEMO_SOURCES,
    build: "cargo build -p acp-demo",
};

/// The prompt client, which `acp-conductor prompt` hands over to (found next to itself).
pub const PROMPT_CLIENT: WorkspaceProgram = WorkspaceProgram {
    path: "acp-prompt",
    sources: &DEMO_SOURCES,
    build: "cargo build -p acp-demo",
};

/// The programs a conductor runs itself, which must be next to the conductor under test.
pub const SHIPPED_PROGRAMS: [&WorkspaceProgram; 2] = [&DEMO_AGENT, &PROMPT_CLIENT];

/// The sources every proxy built on the kit shares.
const KIT_SOURCES: [&str; 3] = [
    "crates/proxy-kit/src",
    "crates/proxy-kit/Cargo.toml",
    "crates/acp-wire/src",
];

pub const CONTEXT_PROXY: WorkspaceProgram = WorkspaceProgram {
    path: "acp-context-proxy",
    sources: &[
        "proxies/context/src",
        "proxies/context/Cargo.toml",
        KIT_SOURCES[0],
        KIT_SOURCES[1],
        KIT_SOURCES[2],
    ],
    build: "cargo build -p context-proxy",
};

pub const TOOL_GUARD: WorkspaceProgram = WorkspaceProgram {
    path: "acp-tool-guard",
    sources: &[
        "proxies/tool-guard/src",
        "proxies/tool-guard/Cargo.toml",
        KIT_SOURCES[0],
        KIT_SOURCES[1],
        KIT_SOURCES[2],
    ],
    build: "cargo build -p tool-guard",
};

pub const NOTES_PROXY: WorkspaceProgram = WorkspaceProgram {
    path: "acp-notes-proxy",
    sources: &[
        "proxies/notes/src",
        "proxies/notes/Cargo.toml",
        KIT_SOURCES[0],
        KIT_SOURCES[1],
        KIT_SOURCES[2],
    ],
    build: "cargo build -p notes-proxy",
};

/// An ACP agent whose MCP client is the official Rust MCP SDK (`rmcp`).
pub const RMCP_AGENT: WorkspaceProgram = WorkspaceProgram {
    path: "test-rmcp-agent",
    sources: &["tests/rmcp-agent/src", "tests/rmcp-agent/Cargo.toml"],
    build: "cargo build -p rmcp-agent",
};

/// A proxy providing MCP tools, built on the official Rust ACP SDK (`agent-client-protocol`
/// with `agent-client-protocol-rmcp`).
pub const SDK_PROVIDER: WorkspaceProgram = WorkspaceProgram {
    path: "test-sdk-provider",
    sources: &["tests/sdk-provider/src", "tests/sdk-provider/Cargo.toml"],
    build: "cargo build -p sdk-provider",
};

/// An ACP agent on the official Rust SDK, served over ACP's Streamable HTTP and WebSocket
/// transport by the SDK's own server (`agent-client-protocol-http`).
pub const REMOTE_AGENT: WorkspaceProgram = WorkspaceProgram {
    path: "test-remote-agent",
    sources: &["tests/remote-agent/src", "tests/remote-agent/Cargo.toml"],
    build: "cargo build -p remote-agent",
};

/// The example proxy of docs/proxies.md, `crates/proxy-kit/examples/shout.rs`.
pub const SHOUT_EXAMPLE: WorkspaceProgram = WorkspaceProgram {
    path: "examples/shout",
    sources: &[
        "crates/proxy-kit/examples/shout.rs",
        KIT_SOURCES[0],
        KIT_SOURCES[1],
        KIT_SOURCES[2],
    ],
    build: "cargo build -p proxy-kit --example shout",
};

impl Binaries {
    /// The absolute path of `program` in the target directory the fixtures were built into.
    /// Panics, naming the command that builds it, when it is missing or older than one of
    /// its sources: `cargo test` of this package does not build other packages' programs.
    pub fn workspace_program(&self, program: &WorkspaceProgram) -> PathBuf {
        let path = self
            .agent
            .parent()
            .expect("a fixture binary lives in a directory")
            .join(program.path);
        assert_built_and_current(&path, program);
        path
    }
}

/// Panics, naming the command that builds it, when `path` (where `program` is built) is
/// missing or older than one of its sources.
fn assert_built_and_current(path: &Path, program: &WorkspaceProgram) {
    assert!(
        is_file(path),
        "{} does not exist: build it with `{}`",
        path.display(),
        program.build
    );
    let built = path
        .metadata()
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("no modification time for {}: {e}", path.display()));
    let root = workspace_root();
    for source in program.sources {
        let source = root.join(source);
        let newer = if source.is_dir() {
            newer_file(&source, built)
        } else {
            source
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|modified| modified > built)
                .then_some(source)
        };
        if let Some(newer) = newer {
            panic!(
                "{} is older than {}: rebuild it with `{}`",
                path.display(),
                newer.display(),
                program.build
            );
        }
    }
}

/// The workspace's root directory.
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package is inside the workspace")
}

/// The conductor's sources, relative to the workspace root.
const CONDUCTOR_SOURCES: &[&str] = &[
    "crates/conductor",
    "crates/drivers",
    "crates/acp-wire",
    "crates/router",
    "crates/link",
    "crates/trace",
    "crates/trace-view",
    "crates/remote",
];

/// Panics when a source file of the conductor was modified after `binary` was built, so
/// that a test never reports on an old conductor.
fn assert_not_older_than_sources(binary: &Path) {
    let Ok(built) = binary.metadata().and_then(|m| m.modified()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package is inside the workspace");
    for sources in CONDUCTOR_SOURCES {
        if let Some(newer) = newer_file(&root.join(sources), built) {
            panic!(
                "{} is older than {}: rebuild it with `cargo build -p acp-conductor`",
                binary.display(),
                newer.display()
            );
        }
    }
}

/// A file under `dir` modified after `time`, skipping build output.
fn newer_file(dir: &Path, time: std::time::SystemTime) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        if is_unit_test_source(&path) {
            continue;
        }
        if metadata.is_dir() {
            if entry.file_name() != "target"
                && let Some(newer) = newer_file(&path, time)
            {
                return Some(newer);
            }
        } else if metadata.modified().is_ok_and(|modified| modified > time) {
            return Some(path);
        }
    }
    None
}

/// A crate's own unit tests (`src/**/tests/`, `tests.rs`, `*_tests.rs`): compiled only into its
/// test binary, so editing one leaves the programs as they are and cargo does not relink them.
fn is_unit_test_source(path: &Path) -> bool {
    let in_src = path.components().any(|part| part.as_os_str() == "src");
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    in_src && (name == "tests" || name == "tests.rs" || name.ends_with("_tests.rs"))
}

fn is_file(path: &Path) -> bool {
    path.metadata().is_ok_and(|metadata| metadata.is_file())
}
