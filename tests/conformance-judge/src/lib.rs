//! The conformance judge: every line the conductor wrote on a link, read with the official ACP
//! schema crate's types. It judges recordings; it never drives a conductor or makes a message.
//!
//! The conformance suite (`tests/tests/conformance.rs` in the main workspace) runs the real
//! conductor, records every link ([`recording`]) and runs this crate's program on the
//! recording. The program writes one verdict per line ([`verdicts`]) and exits non-zero when
//! the schema refused any.

#![deny(clippy::print_stdout)]

pub mod judge;
pub mod legacy;
pub mod links;
pub mod recording;
pub mod verdicts;
