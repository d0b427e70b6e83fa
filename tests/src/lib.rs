//! Shared code of the end-to-end tests: the fixtures' wire helpers and the editor harness.
//! Drives the conductor only through its binary; must not link any workspace crate.

pub mod agent_script;
pub mod binaries;
pub mod chain;
pub mod editor;
pub mod fixture_io;
pub mod jsonrpc;
pub mod processes;
pub mod scenario;
pub mod views;

pub use binaries::Binaries;
pub use chain::Chain;
pub use editor::{Editor, Exchange};
