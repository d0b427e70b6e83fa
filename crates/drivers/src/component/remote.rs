//! Remote components: an agent or proxy served elsewhere, reached at a URL over ACP's
//! WebSocket or Streamable HTTP transport (`remote::client`). Knows connections, not messages.
//!
//! It is started like any component: it gets a link at once (the connection is made while
//! the router already queues frames for it), and its end is reported as an exit whose reason
//! says what happened to the connection: refused, unreachable, lost, or closed by the server.

use tokio::sync::{mpsc, oneshot, watch};

use super::{StartError, Started, StopSignal, report_exit, trace_started};
use crate::spec::RemoteSpec;
use acp_link::Links;
use acp_link::event::Event;
use acp_remote::client::{self, Connection, Ended, Target};

/// Starts connecting to `spec`'s URL with a link for it; its end is reported on `events`.
/// Must be called inside the runtime.
pub(crate) fn connect(
    spec: &RemoteSpec,
    links: &Links,
    events: &mpsc::Sender<Event>,
) -> Result<Started, StartError> {
    let target = Target::of(spec, links.limits().max_line)?;
    let shown = target.shown.clone();
    let launched_at = tokio::time::Instant::now();
    let ended = Ended::default();
    let (stop_tx, stop) = oneshot::channel::<()>();
    let (link, done) = match client::open(target, ended.clone(), stop) {
        Connection::WebSocket(source, sink) => links.messages(source, sink),
        Connection::Http(source, sink) => links.messages(source, sink),
    };
    let id = link.id;
    let name = spec.name.clone();
    tracing::debug!(component = %name, url = %shown, "connecting");
    trace_started(links, &name, shown.clone());
    let trace = links.trace().cloned();
    let (stopped_tx, stopped) = watch::channel(false);
    let events = events.clone();
    let monitor = tokio::spawn(async move {
        let _stopped = StopSignal(stopped_tx);
        // Dropped when this task ends or is aborted: the source then ends, dropping the
        // connection, however the server behaves.
        let _stop = stop_tx;
        // Everything the server sent reaches the router before the news that it is gone.
        done.reader_finished().await;
        let reason = ended
            .reason()
            .unwrap_or_else(|| format!("closed its connection ({shown})"));
        report_exit(&events, trace.as_ref(), id, &name, reason, None, Vec::new()).await;
    });
    Ok(Started::of_task(link, stopped, &monitor, launched_at))
}
