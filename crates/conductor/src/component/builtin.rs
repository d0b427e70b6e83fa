//! Built-in components that run inside the conductor on an in-memory pipe (the demo agent).
//! Same link as a child process, minus the process.

use tokio::sync::{mpsc, watch};

use super::{Instance, Started, StopSignal, report_exit};
use crate::config::BuiltinAgent;
use crate::event::Event;
use crate::link::Links;

const PIPE_BYTES: usize = 256 * 1024;

pub(crate) fn spawn(agent: BuiltinAgent, links: &Links, events: &mpsc::Sender<Event>) -> Started {
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (from_agent, to_agent) = tokio::io::split(ours);
    let (link, _done) = links.streams(from_agent, to_agent);
    let id = link.id;
    let (stopped_tx, stopped) = watch::channel(false);
    let (input, output) = tokio::io::split(theirs);
    let serve = match agent {
        BuiltinAgent::Demo => crate::demo_agent::serve(input, output),
    };
    let events = events.clone();
    let task = tokio::spawn(async move {
        let _stopped = StopSignal(stopped_tx);
        let reason = match serve.await {
            Ok(()) => "stopped".to_string(),
            Err(e) => format!("failed: {e}"),
        };
        report_exit(&events, id, "demo", reason, Vec::new()).await;
    });
    Started {
        link,
        instance: Instance {
            link: id,
            stopped,
            process_group: None,
            task: Some(task.abort_handle()),
        },
    }
}
