//! The router driven in memory: every position is a peer the test plays over an in-memory
//! link, so each routing rule, id, failure and backpressure case is checked without processes.

mod admission;
mod backpressure;
mod bad_input;
mod cancel;
mod failures;
mod fairness;
mod harness;
mod ids;
mod mcp;
mod ordering;
mod properties;
mod recovery;
mod routing;
mod run_log;
mod trace;
