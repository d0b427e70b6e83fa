//! What one `serve` allows: connections at once (each is a chain of processes), the largest
//! message a client may send, and how long a silent client keeps its connection.

use std::time::Duration;

/// The limits the transports apply (`--max-connections`, `--max-message-size`,
/// `--idle-timeout`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub max_message: usize,
    pub idle: Duration,
}
