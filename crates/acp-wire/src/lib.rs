//! The wire layer of ACP: newline-delimited JSON-RPC 2.0 frames, read as borrowed views
//! and written by splicing raw payload bytes. Pure functions over bytes: no I/O, no runtime.
//!
//! A frame is one line ([`frame`]). Its envelope (`jsonrpc`, `id`, `method`) is classified
//! without touching the payload ([`envelope`]); payloads (`params`, `result`, `error`) stay
//! `&RawValue` and are written back byte-for-byte ([`encode`]). Ids keep their exact JSON
//! text ([`id`]).
#![deny(clippy::print_stdout)]

pub mod encode;
pub mod envelope;
pub mod error_code;
pub mod frame;
pub mod id;
pub mod splice;
pub mod successor;

pub use envelope::{Envelope, Invalid, Outcome, parse};
pub use frame::{FrameError, LineDecoder};
pub use id::IdKey;
pub use serde_json::value::RawValue;
