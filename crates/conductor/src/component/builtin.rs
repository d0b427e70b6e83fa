//! Built-in components that run inside the conductor on an in-memory pipe (the demo agent).
//! Same streams and transport tasks as a child process, minus the process.

use tokio::sync::watch;

use super::{Lifecycle, Running, Wiring};
use crate::config::BuiltinAgent;
use crate::event::Event;

const PIPE_BYTES: usize = 256 * 1024;

pub fn spawn(agent: &BuiltinAgent, wiring: Wiring) -> Running {
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (from_agent, to_agent) = tokio::io::split(ours);
    let (outbox, gate) = wiring.connect_streams(from_agent, to_agent);
    let (stopped_tx, stopped) = watch::channel(false);
    let (input, output) = tokio::io::split(theirs);
    let serve = match agent {
        BuiltinAgent::Demo => crate::demo_agent::serve(input, output),
    };
    tokio::spawn(async move {
        let reason = match serve.await {
            Ok(()) => "stopped".to_string(),
            Err(e) => format!("failed: {e}"),
        };
        let _ = wiring
            .events
            .send(Event::Exited {
                link: wiring.link,
                reason,
                stderr_tail: Vec::new(),
            })
            .await;
        let _ = stopped_tx.send(true);
    });
    Running {
        outbox,
        gate,
        lifecycle: Lifecycle {
            stopped,
            process_group: None,
        },
    }
}
