//! The editor's end of a served chain, whatever the transport: the client's messages into the
//! chain's editor link, the chain's messages out to the client, when the client was last
//! heard from (for the idle limit), and, while draining, the end of a connection once no
//! request of its client is in flight.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

use super::heard::Heard;
use super::http_connection::Outbound;
use super::ids::ConnectionId;
use super::in_flight::InFlight;
use super::websocket_connection::WsOutbound;
use acp_link::{MessageSink, MessageSource};
use acp_metrics::labels::Profile;

/// Messages from the client queued toward the chain before the transport stops reading
/// (and so stops the client): the chain's own queue limits take over from there.
pub(super) const INBOUND_QUEUE: usize = 16;

/// The client's messages, as the chain's editor link reads them. Ends when the transport
/// ends, when the client has not been heard from for the idle limit, or, while `serve`
/// drains, once none of the client's requests is in flight: to the chain, each is the editor
/// closing its end.
pub struct FromClient {
    messages: mpsc::Receiver<Bytes>,
    heard: Arc<Heard>,
    idle: Duration,
    connection: ConnectionId,
    in_flight: Arc<InFlight>,
    draining: watch::Receiver<bool>,
}

/// What the two ends of one connection share besides the messages.
pub(super) struct ClientState {
    pub(super) connection: ConnectionId,
    pub(super) heard: Arc<Heard>,
    pub(super) in_flight: Arc<InFlight>,
}

impl FromClient {
    /// The source, and the sender the transport puts the client's messages on.
    pub(super) fn new(
        state: &ClientState,
        idle: Duration,
        draining: watch::Receiver<bool>,
    ) -> (mpsc::Sender<Bytes>, FromClient) {
        let (to_chain, messages) = mpsc::channel(INBOUND_QUEUE);
        let source = FromClient {
            messages,
            heard: state.heard.clone(),
            idle,
            connection: state.connection.clone(),
            in_flight: state.in_flight.clone(),
            draining,
        };
        (to_chain, source)
    }
}

/// A connection counted as open (`acp_connections_open`) until this is dropped.
pub(super) struct OpenConnection(Profile);

impl OpenConnection {
    pub(super) fn counted(profile: Profile) -> OpenConnection {
        if let Some(metrics) = acp_metrics::get() {
            metrics.connection_opened(profile);
        }
        OpenConnection(profile)
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        if let Some(metrics) = acp_metrics::get() {
            metrics.connection_closed(self.0);
        }
    }
}

/// Returns once `serve` drains and no request of the client is waiting for its answer.
async fn drained(draining: &mut watch::Receiver<bool>, in_flight: &InFlight) {
    if draining.wait_for(|draining| *draining).await.is_err() {
        return std::future::pending().await;
    }
    in_flight.none().await;
}

impl MessageSource for FromClient {
    async fn next_message(&mut self) -> Option<io::Result<Bytes>> {
        loop {
            let wait = self.idle.saturating_sub(self.heard.silent_for());
            if wait.is_zero() {
                tracing::info!(
                    connection = %self.connection,
                    "nothing heard from the client for {:?}: closing the connection",
                    self.idle
                );
                return None;
            }
            tokio::select! {
                biased;
                message = self.messages.recv() => {
                    if let Some(message) = &message {
                        self.in_flight.heard_from_client(message);
                    }
                    return message.map(Ok);
                }
                () = tokio::time::sleep(wait) => {}
                () = drained(&mut self.draining, &self.in_flight) => {
                    tracing::info!(
                        connection = %self.connection,
                        "draining: no request in flight, closing the connection"
                    );
                    return None;
                }
            }
        }
    }
}

/// Where the chain's messages to the client go: the WebSocket connection's queue, or the HTTP
/// connection's streams.
pub struct ToClient {
    way: Way,
    in_flight: Arc<InFlight>,
}

pub(super) enum Way {
    WebSocket(WsOutbound),
    Http(Outbound),
}

impl ToClient {
    pub(super) fn new(way: Way, state: &ClientState) -> ToClient {
        ToClient {
            way,
            in_flight: state.in_flight.clone(),
        }
    }
}

impl MessageSink for ToClient {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        self.in_flight.going_to_client(&message);
        match &mut self.way {
            Way::WebSocket(socket) => {
                socket.send(message).await;
                Ok(())
            }
            Way::Http(streams) => streams.send(message).await,
        }
    }

    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        match &mut self.way {
            Way::WebSocket(socket) => socket.close(),
            Way::Http(streams) => streams.close(),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::heard::Heard;
    use tokio::time::Instant;

    fn state(heard: &Arc<Heard>) -> ClientState {
        ClientState {
            connection: ConnectionId::random(),
            heard: heard.clone(),
            in_flight: InFlight::new(),
        }
    }

    fn not_draining() -> watch::Receiver<bool> {
        watch::Sender::new(false).subscribe()
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_client_ends_the_source_after_the_idle_limit() {
        let heard = Heard::new();
        let (to_chain, mut source) =
            FromClient::new(&state(&heard), Duration::from_secs(60), not_draining());
        to_chain.send(Bytes::from_static(b"{}")).await.unwrap();
        heard.now();
        assert!(source.next_message().await.is_some());
        let started = Instant::now();
        assert!(source.next_message().await.is_none());
        assert!(started.elapsed() >= Duration::from_secs(59));
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_stream_keeps_the_connection() {
        let heard = Heard::new();
        let (_to_chain, mut source) =
            FromClient::new(&state(&heard), Duration::from_secs(60), not_draining());
        heard.stream_opened();
        let waited = tokio::time::timeout(Duration::from_secs(300), source.next_message()).await;
        assert!(waited.is_err(), "the source ended while a stream was open");
        heard.stream_closed();
        let started = Instant::now();
        assert!(source.next_message().await.is_none());
        assert!(started.elapsed() >= Duration::from_secs(59));
    }

    #[tokio::test(start_paused = true)]
    async fn draining_ends_the_source_once_the_turn_in_flight_is_answered() {
        let heard = Heard::new();
        let state = state(&heard);
        let draining = watch::Sender::new(false);
        let (to_chain, mut source) =
            FromClient::new(&state, Duration::from_secs(600), draining.subscribe());
        let (chain_input, _) = mpsc::channel(4);
        let connection = crate::serve::websocket_connection::WsConnection::new(
            state.connection.clone(),
            heard.clone(),
            chain_input,
            1 << 20,
        );
        let outbound = WsOutbound::new(
            connection,
            Arc::default(),
            OpenConnection::counted(Profile::WebSocket),
        );
        let mut sink = ToClient::new(Way::WebSocket(outbound), &state);
        to_chain
            .send(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#,
            ))
            .await
            .unwrap();
        heard.now();
        assert!(source.next_message().await.is_some());
        draining.send_replace(true);
        let waited = tokio::time::timeout(Duration::from_secs(60), source.next_message()).await;
        assert!(waited.is_err(), "the source ended with a turn in flight");
        // The answer goes out: nothing is in flight, the connection closes.
        let _ = sink
            .send(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            ))
            .await;
        assert!(source.next_message().await.is_none());
    }
}
