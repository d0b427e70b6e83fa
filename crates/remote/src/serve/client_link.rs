//! The editor's end of a served chain, whatever the transport: the client's messages into the
//! chain's editor link, the chain's messages out to the client, and when the client was last
//! heard from, for the idle limit.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::heard::Heard;
use super::http_connection::Outbound;
use super::ids::ConnectionId;
use acp_link::{MessageSink, MessageSource};

/// Messages from the client queued toward the chain before the transport stops reading
/// (and so stops the client): the chain's own queue limits take over from there.
pub(super) const INBOUND_QUEUE: usize = 16;

/// The client's messages, as the chain's editor link reads them. Ends when the transport
/// ends, or when the client has not been heard from for the idle limit: to the chain,
/// either is the editor closing its end.
pub struct FromClient {
    messages: mpsc::Receiver<Bytes>,
    heard: Arc<Heard>,
    idle: Duration,
    connection: ConnectionId,
}

impl FromClient {
    /// The source, and the sender the transport puts the client's messages on.
    pub(super) fn new(
        connection: ConnectionId,
        heard: Arc<Heard>,
        idle: Duration,
    ) -> (mpsc::Sender<Bytes>, FromClient) {
        let (to_chain, messages) = mpsc::channel(INBOUND_QUEUE);
        let source = FromClient {
            messages,
            heard,
            idle,
            connection,
        };
        (to_chain, source)
    }
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
                message = self.messages.recv() => return message.map(Ok),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

/// Where the chain's messages to the client go: a WebSocket's writer, or the HTTP
/// connection's streams.
pub enum ToClient {
    WebSocket(mpsc::Sender<Bytes>),
    Http(Outbound),
}

impl MessageSink for ToClient {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        match self {
            ToClient::WebSocket(writer) => MessageSink::send(writer, message).await,
            ToClient::Http(streams) => streams.send(message).await,
        }
    }

    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        // A WebSocket's writer sees its channel close when this sink is dropped, next.
        if let ToClient::Http(streams) = self {
            streams.close();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::heard::Heard;
    use tokio::time::Instant;

    #[tokio::test(start_paused = true)]
    async fn a_silent_client_ends_the_source_after_the_idle_limit() {
        let heard = Heard::new();
        let (to_chain, mut source) = FromClient::new(
            ConnectionId::random(),
            heard.clone(),
            Duration::from_secs(60),
        );
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
        let (_to_chain, mut source) = FromClient::new(
            ConnectionId::random(),
            heard.clone(),
            Duration::from_secs(60),
        );
        heard.stream_opened();
        let waited = tokio::time::timeout(Duration::from_secs(300), source.next_message()).await;
        assert!(waited.is_err(), "the source ended while a stream was open");
        heard.stream_closed();
        let started = Instant::now();
        assert!(source.next_message().await.is_none());
        assert!(started.elapsed() >= Duration::from_secs(59));
    }
}
