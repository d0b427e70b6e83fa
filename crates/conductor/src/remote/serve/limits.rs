//! What one `serve` allows: connections at once (each is a chain of processes), the largest
//! message a client may send, and how long a silent client keeps its connection.

use std::time::Duration;

use crate::config::duration::parse_duration;
use crate::config::size::parse_size;

#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Most connections served at once, each with its own chain; more are refused with 503.
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..))]
    max_connections: u16,
    /// Largest message a client may send (one WebSocket message, one POST body): larger
    /// WebSocket messages close the connection, larger POSTs get 413.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_size: usize,
    /// A connection on which nothing is heard from the client for this long is closed and
    /// its chain stopped (WebSocket pongs and open SSE streams count as hearing it).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    idle_timeout: Duration,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_connections: usize,
    pub(super) max_message: usize,
    pub(super) idle: Duration,
}

impl From<&LimitArgs> for Limits {
    fn from(args: &LimitArgs) -> Limits {
        Limits {
            max_connections: usize::from(args.max_connections),
            max_message: args.max_message_size,
            idle: args.idle_timeout,
        }
    }
}
