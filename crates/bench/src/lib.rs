//! The acp-conductor benchmark harness: the bench agent's and bench proxy's message handling,
//! and the runner's pieces (processes driven as an editor, statistics, config generation, report).
//! Knows the conductor only from outside: its command line and its `conductor.toml` format.
//!
//! The three binaries are `bench-agent` (a minimal fast ACP agent), `bench-proxy` (a
//! pass-through proxy-chain proxy) and `acp-bench` (the runner; see `docs/performance.md`).
#![deny(clippy::print_stdout)]

pub mod agent;
pub mod chain_config;
pub mod measure;
pub mod messages;
pub mod options;
pub mod peer;
pub mod proc_status;
pub mod proxy;
pub mod report;
pub mod session_run;
pub mod stats;
pub mod stdio_loop;
