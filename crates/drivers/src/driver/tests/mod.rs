//! The driver and the links around the core, in memory: backpressure through real outboxes
//! and gates, fairness between busy links, write timeouts, and the trace the run writes.
//! The routing rules themselves are the core's tests (`acp_router`'s `tests/`).

mod backpressure;
mod fairness;
mod harness;
mod links;
mod trace;
