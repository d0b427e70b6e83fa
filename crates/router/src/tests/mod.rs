//! The routing core driven in memory with no runtime: every position is a peer the test
//! plays, so each routing rule, id, failure and recovery case is checked as inputs and outputs.

mod admission;
mod bad_input;
mod cancel;
mod congestion;
mod failures;
mod harness;
mod ids;
mod mcp;
mod mcp_http;
mod mcp_restart;
mod ordering;
mod properties;
mod recovery;
mod reload;
mod routing;
mod run_log;
mod trace;
