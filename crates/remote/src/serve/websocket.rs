//! The WebSocket profile: a GET with `Upgrade: websocket` on `/acp` opens a connection and its
//! chain; each text message is one JSON-RPC message each way (binary ones are ignored, as the
//! RFD says). The socket closing ends the chain; the chain ending closes the socket.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::HeaderValue;
use axum::response::Response;
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;

use super::Served;
use super::admission::Admitted;
use super::admission::refused;
use super::client_link::{ClientState, FromClient, OpenConnection, ToClient, Way};
use super::heard::Heard;
use super::ids::ConnectionId;
use super::in_flight::InFlight;
use crate::protocol;
use acp_metrics::labels::Profile;

/// Messages from the chain queued for the socket's writer before the chain's writer waits.
const OUTBOUND_QUEUE: usize = 64;
/// After the chain has ended and the close frame is sent, how long the client gets to
/// answer it before the socket is dropped.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Accepts the upgrade (or 503 at the connection limit); the response carries the new
/// connection's `Acp-Connection-Id`.
pub(super) fn upgrade(served: &Served, upgrade: WebSocketUpgrade) -> Response {
    let admitted = match served.admission.admit() {
        Ok(admitted) => admitted,
        Err(refusal) => return refused(refusal),
    };
    let id = served.new_id();
    let header = HeaderValue::from_str(id.as_str()).expect("hex is a valid header value");
    let limits = served.limits;
    let served = served.clone();
    let mut response = upgrade
        .max_message_size(limits.max_message)
        .max_frame_size(limits.max_message)
        .on_failed_upgrade(|error| tracing::debug!("WebSocket upgrade failed: {error}"))
        .on_upgrade(move |socket| connection(socket, id, served, admitted));
    response
        .headers_mut()
        .insert(protocol::CONNECTION_ID, header);
    response
}

async fn connection(socket: WebSocket, id: ConnectionId, served: Served, admitted: Admitted) {
    let heard = Heard::new();
    let state = ClientState {
        connection: id.clone(),
        heard: heard.clone(),
        in_flight: InFlight::new(),
    };
    let (to_chain, from_client) =
        FromClient::new(&state, served.limits.idle, served.admission.draining());
    let (to_client, from_chain) = mpsc::channel(OUTBOUND_QUEUE);
    let to_client = ToClient::new(Way::WebSocket(to_client), &state);
    if !served
        .admission
        .start(admitted, id.clone(), from_client, to_client)
    {
        return;
    }
    let _open = OpenConnection::counted(Profile::WebSocket);
    tracing::debug!(connection = %id, "WebSocket connection open");
    let (sink, stream) = socket.split();
    let reader = acp_link::transport::spawn(read_client(stream, to_chain, heard, id.clone()));
    let ping_every =
        (served.limits.idle / 3).clamp(Duration::from_secs(1), Duration::from_secs(30));
    write_client(sink, from_chain, ping_every).await;
    // The chain has ended (or the client cannot be written to): the reader ends with the
    // client's close frame, or is dropped.
    let abort = reader.abort_handle();
    if tokio::time::timeout(CLOSE_WAIT, reader).await.is_err() {
        abort.abort();
    }
    tracing::debug!(connection = %id, "WebSocket connection closed");
}

/// Client messages into the chain, until the client closes or the socket fails. Waiting on
/// a full chain queue stops reading, which holds the client back.
async fn read_client(
    mut stream: SplitStream<WebSocket>,
    to_chain: mpsc::Sender<Bytes>,
    heard: Arc<Heard>,
    id: ConnectionId,
) {
    while let Some(frame) = stream.next().await {
        heard.now();
        match frame {
            Ok(Message::Text(text)) => {
                if to_chain.send(Bytes::from(text)).await.is_err() {
                    return;
                }
            }
            Ok(Message::Binary(_)) => {
                tracing::debug!(connection = %id, "ignored a binary WebSocket message");
            }
            Ok(Message::Ping(_) | Message::Pong(_)) => {}
            Ok(Message::Close(_)) => return,
            Err(error) => {
                tracing::info!(connection = %id, "WebSocket read failed: {error}");
                return;
            }
        }
    }
}

/// The chain's messages to the client, each one text message, and a ping every
/// `ping_every` (a live client's pong counts as hearing from it). Messages already queued go
/// out in one flush. Ends with a close frame when the chain ends, or when a write fails.
async fn write_client(
    mut sink: SplitSink<WebSocket, Message>,
    mut from_chain: mpsc::Receiver<Bytes>,
    ping_every: Duration,
) {
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + ping_every, ping_every);
    loop {
        let message = tokio::select! {
            message = from_chain.recv() => match message {
                Some(message) => match Utf8Bytes::try_from(message) {
                    Ok(text) => Message::Text(text),
                    Err(_) => {
                        tracing::warn!("dropped a message to the client that is not UTF-8");
                        continue;
                    }
                },
                None => {
                    let close = CloseFrame {
                        code: close_code::NORMAL,
                        reason: Utf8Bytes::from_static("the chain has stopped"),
                    };
                    let _ = sink.send(Message::Close(Some(close))).await;
                    return;
                }
            },
            _ = ping.tick() => Message::Ping(Bytes::new()),
        };
        let mut written = sink.feed(message).await;
        if written.is_ok() && from_chain.is_empty() {
            written = sink.flush().await;
        }
        if let Err(error) = written {
            tracing::info!("WebSocket write failed: {error}");
            return;
        }
    }
}
