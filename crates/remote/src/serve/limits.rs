//! What one `serve` allows: connections at once (each is a chain of processes), the largest
//! message a client may send, how long a silent client keeps its connection, and what is
//! kept, and how long, for a client that resumes.

use std::time::Duration;

/// The limits the transports apply (`--max-connections`, `--max-message-size`,
/// `--idle-timeout`, `--resume-buffer`, `--resume-window`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub max_message: usize,
    pub idle: Duration,
    /// Bytes of sent messages kept per connection for resumes.
    pub resume_buffer: usize,
    /// How long a WebSocket connection whose socket dropped keeps its chain for the client to
    /// come back.
    pub resume_window: Duration,
}
