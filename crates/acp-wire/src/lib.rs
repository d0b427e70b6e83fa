//! The wire layer of ACP: newline-delimited JSON-RPC 2.0 frames, read as borrowed views
//! and written by splicing raw payload bytes. Pure functions over bytes: no I/O, no runtime.
//!
//! A frame is one line ([`frame`]). Its envelope (`jsonrpc`, `id`, `method`) is classified
//! without touching the payload ([`envelope`]); payloads (`params`, `result`, `error`) stay
//! `&RawValue` and are written back byte-for-byte ([`encode`]). Ids keep their exact JSON
//! text ([`id`]); [`outgoing`] keeps the requests a peer sent until they are answered.
#![deny(clippy::print_stdout)]

pub mod encode;
pub mod envelope;
pub mod error_code;
pub mod escaped_method;
pub mod frame;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod id;
mod members;
pub mod outgoing;
mod scan;
pub mod splice;
pub mod successor;

pub use envelope::{Envelope, Invalid, Outcome, Parsed, Shape, parse, parse_frame};
pub use frame::{FrameError, LineDecoder, LineEncoder};
pub use id::IdKey;
pub use outgoing::OutgoingRequests;
pub use serde_json::value::RawValue;
