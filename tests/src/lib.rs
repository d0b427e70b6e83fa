//! Shared code of the end-to-end tests: the fixtures' wire helpers and the editor harness.
//! Drives the conductor only through its binary; must not link any workspace crate.
//!
//! The tests run the `acp-conductor` binary of the same target directory, which `cargo test`
//! does not build for this package: `cargo build -p acp-conductor` first (or set
//! `ACP_CONDUCTOR_BIN`). A build older than the conductor's sources is refused. The tests of
//! the bundled proxies and of the kit's example proxy run `acp-context-proxy`, `acp-tool-guard`
//! and `examples/shout` from the same directory, refused the same way when stale; so are the
//! MCP tests' `acp-notes-proxy`, `test-rmcp-agent` and `test-sdk-provider`, and the remote
//! tests' `test-remote-agent`:
//! `cargo build --workspace --bins --examples` builds everything they launch. The interop
//! tests (`tests/interop*.rs`) also run third-party clients and agents, which
//! `.ci/setup-interop` installs (docs/clients.md).

pub mod agent_script;
pub mod binaries;
pub mod client_run;
pub mod editor;
pub mod fixture_io;
pub mod interop;
pub mod jsonrpc;
pub mod marked_processes;
pub mod mcp_chain;
pub mod processes;
pub mod remote_server;
pub mod scenario;
pub mod test_chain;
pub mod trace_file;
pub mod views;
pub mod wasm;

pub use binaries::Binaries;
pub use editor::{Editor, Exchange};
pub use test_chain::TestChain;
