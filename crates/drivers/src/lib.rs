//! acp-drivers: runs a chain around the routing core. Starts and stops components (child
//! processes, WASM guests, remote ones), moves their frames over links, and owns the runtimes.
//!
//! Knows processes, wasmtime, sockets and tokio; must not decide where a message goes: every
//! routing decision is `acp_router`'s, fed by [`driver`] with what the links read.
#![deny(clippy::print_stdout)]

pub mod component;
pub mod driver;
pub mod runtime;
pub mod spec;
pub mod supervisor;
