//! The WebSocket profile: a GET with `Upgrade: websocket` on `/acp` opens a connection and its
//! chain; each text message is one JSON-RPC message each way (binary ones are ignored, as the
//! RFD says). A socket that drops without a close frame leaves the chain running for
//! `--resume-window`, for an upgrade naming the connection (`Acp-Connection-Id`) and the last
//! message the client processed (`Last-Event-ID`) to resume it; a close frame, or the window
//! passing, ends the chain. The chain ending closes the socket.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};

use super::Served;
use super::admission::Admitted;
use super::admission::refused;
use super::client_link::{ClientState, FromClient, OpenConnection, ToClient, Way};
use super::cursor::Cursor;
use super::heard::Heard;
use super::ids::ConnectionId;
use super::in_flight::InFlight;
use super::resume::{self, ResumeRefused};
use super::websocket_connection::{Attached, Next, WsConnection, WsOutbound};
use crate::protocol;
use acp_metrics::labels::{Profile, ResumeOutcome};

/// After the chain has ended and the close frame is sent, how long the client gets to
/// answer it before the socket is dropped.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Accepts the upgrade (or 503 at the connection limit); the response carries the new
/// connection's `Acp-Connection-Id`. With `Acp-Connection-Id`, the upgrade resumes that
/// connection instead.
pub(super) fn upgrade(served: &Served, upgrade: WebSocketUpgrade, headers: &HeaderMap) -> Response {
    if let Some(id) = headers.get(protocol::CONNECTION_ID) {
        let id = String::from_utf8_lossy(id.as_bytes()).into_owned();
        return resume(served, upgrade, headers, &id);
    }
    let admitted = match served.admission.admit() {
        Ok(admitted) => admitted,
        Err(refusal) => return refused(refusal),
    };
    let id = served.new_id();
    let header = HeaderValue::from_str(id.as_str()).expect("hex is a valid header value");
    let limits = served.limits;
    let served = served.clone();
    let advertised = served.clone();
    let mut response = upgrade
        .max_message_size(limits.max_message)
        .max_frame_size(limits.max_message)
        .on_failed_upgrade(|error| tracing::debug!("WebSocket upgrade failed: {error}"))
        .on_upgrade(move |socket| open(socket, id, served, admitted));
    response
        .headers_mut()
        .insert(protocol::CONNECTION_ID, header);
    advertised.advertise_resume(response.headers_mut());
    response
}

/// An upgrade naming connection `id`: its socket dropped, and the client is back.
fn resume(served: &Served, upgrade: WebSocketUpgrade, headers: &HeaderMap, id: &str) -> Response {
    let from = match resume::last_event_id(headers) {
        Some(Ok(from)) => from,
        Some(Err(refused)) => return refused.response(Profile::WebSocket),
        None => {
            return (
                StatusCode::BAD_REQUEST,
                "an upgrade with Acp-Connection-Id resumes that connection and needs \
                 Last-Event-ID (0 if no message was received)\n",
            )
                .into_response();
        }
    };
    let Some(connection) = served.websockets.get(id) else {
        return ResumeRefused::NoConnection(id.to_owned()).response(Profile::WebSocket);
    };
    let Attached {
        generation,
        replay,
        received,
    } = match connection.attach(Some(from)) {
        Ok(attached) => attached,
        Err(refusal) => return ResumeRefused::of(from, refusal).response(Profile::WebSocket),
    };
    resume::counted(Profile::WebSocket, ResumeOutcome::Resumed);
    tracing::info!(
        connection = %connection.id,
        cursor = %from,
        replayed = replay.len(),
        received,
        "WebSocket connection resumed"
    );
    let limits = served.limits;
    let served = served.clone();
    let failed = (connection.clone(), served.clone());
    let mut response = upgrade
        .max_message_size(limits.max_message)
        .max_frame_size(limits.max_message)
        .on_failed_upgrade(move |error| {
            tracing::debug!("WebSocket upgrade failed: {error}");
            let (connection, served) = failed;
            lost(&connection, generation, &served);
        })
        .on_upgrade(move |socket| run_socket(socket, connection, generation, replay, served));
    let headers = response.headers_mut();
    headers.insert(
        protocol::CONNECTION_ID,
        HeaderValue::from_str(id).expect("a known id is a valid header value"),
    );
    headers.insert(protocol::RECEIVED, HeaderValue::from(received));
    response
}

async fn open(socket: WebSocket, id: ConnectionId, served: Served, admitted: Admitted) {
    let heard = Heard::new();
    let state = ClientState {
        connection: id.clone(),
        heard: heard.clone(),
        in_flight: InFlight::new(),
    };
    let (to_chain, from_client) =
        FromClient::new(&state, served.limits.idle, served.admission.draining());
    let connection = WsConnection::new(id.clone(), heard, to_chain, served.limits.resume_buffer);
    served.websockets.insert(connection.clone());
    let outbound = WsOutbound::new(
        connection.clone(),
        served.websockets.clone(),
        OpenConnection::counted(Profile::WebSocket),
    );
    let to_client = ToClient::new(Way::WebSocket(outbound), &state);
    if !served
        .admission
        .start(admitted, id.clone(), from_client, to_client)
    {
        served.websockets.remove(id.as_str());
        return;
    }
    tracing::debug!(connection = %id, "WebSocket connection open");
    let attached = connection
        .attach(None)
        .expect("a first socket resumes from nothing");
    run_socket(
        socket,
        connection,
        attached.generation,
        attached.replay,
        served,
    )
    .await;
}

/// How a socket's reader ended.
enum ReadEnd {
    /// The client sent a close frame: it is done with the connection.
    Closed,
    /// The socket failed or ended without a close frame: the client may come back.
    Lost,
    /// The chain's input has closed, or another socket has the connection.
    Over,
}

/// How a socket's writer ended.
enum WriteEnd {
    ChainEnded,
    Superseded,
    Failed,
}

/// One socket of `connection`: the replayed messages, then the chain's, out; the client's
/// in; until the chain ends, the client closes, another socket takes over, or it drops.
async fn run_socket(
    socket: WebSocket,
    connection: Arc<WsConnection>,
    generation: u64,
    replay: Vec<(Cursor, Bytes)>,
    served: Served,
) {
    let (sink, stream) = socket.split();
    let mut reader =
        acp_link::transport::spawn(read_client(stream, connection.clone(), generation));
    connection.reading(generation, reader.abort_handle());
    let ping_every =
        (served.limits.idle / 3).clamp(Duration::from_secs(1), Duration::from_secs(30));
    let writer = write_client(sink, &connection, generation, replay, ping_every);
    tokio::pin!(writer);
    let (written, read) = tokio::select! {
        written = &mut writer => (written, None),
        read = &mut reader => match read {
            Ok(ReadEnd::Closed) => {
                tracing::debug!(connection = %connection.id, "the client closed the WebSocket");
                connection.end_input();
                // The chain answers what is pending and stops; the writer then ends.
                (writer.await, Some(()))
            }
            Ok(ReadEnd::Over) => (writer.await, Some(())),
            Ok(ReadEnd::Lost) | Err(_) => (WriteEnd::Failed, Some(())),
        },
    };
    match written {
        WriteEnd::ChainEnded => {
            if read.is_none() {
                let abort = reader.abort_handle();
                if tokio::time::timeout(CLOSE_WAIT, reader).await.is_err() {
                    abort.abort();
                }
            }
            tracing::debug!(connection = %connection.id, "WebSocket connection closed");
        }
        WriteEnd::Superseded => {}
        WriteEnd::Failed => {
            reader.abort();
            lost(&connection, generation, &served);
        }
    }
}

/// Socket `generation` of `connection` dropped: the chain waits `--resume-window` for the
/// client to come back, and stops if it has not (or at once when `serve` drains).
fn lost(connection: &Arc<WsConnection>, generation: u64, served: &Served) {
    if connection.has_closed() || !connection.lost(generation) {
        return;
    }
    let window = served.limits.resume_window;
    tracing::info!(
        connection = %connection.id,
        "WebSocket dropped without a close frame: waiting {window:?} for the client to resume"
    );
    let connection = connection.clone();
    let mut draining = served.admission.draining();
    let mut closed = connection.closed();
    acp_link::transport::spawn(async move {
        let why = tokio::select! {
            () = tokio::time::sleep(window) => "the resume window passed",
            _ = draining.wait_for(|draining| *draining) => "draining",
            _ = closed.wait_for(|closed| *closed) => return,
        };
        if connection.is_current(generation) {
            tracing::info!(connection = %connection.id, "not resumed ({why}): closing the connection");
            connection.end_input();
        }
    });
}

/// Client messages into the chain, until the client closes or the socket fails. Waiting on
/// a full chain queue stops reading, which holds the client back.
async fn read_client(
    mut stream: SplitStream<WebSocket>,
    connection: Arc<WsConnection>,
    generation: u64,
) -> ReadEnd {
    while let Some(frame) = stream.next().await {
        connection.heard.now();
        match frame {
            Ok(Message::Text(text)) => {
                if !connection.to_chain(generation, Bytes::from(text)).await {
                    return ReadEnd::Over;
                }
            }
            Ok(Message::Binary(_)) => {
                tracing::debug!(connection = %connection.id, "ignored a binary WebSocket message");
            }
            Ok(Message::Ping(_) | Message::Pong(_)) => {}
            Ok(Message::Close(_)) => return ReadEnd::Closed,
            Err(error) => {
                tracing::info!(connection = %connection.id, "WebSocket read failed: {error}");
                return if network_failure(error) {
                    ReadEnd::Lost
                } else {
                    ReadEnd::Closed
                };
            }
        }
    }
    ReadEnd::Lost
}

/// The replayed messages, then the chain's, to the client, each one text message, and a
/// ping every `ping_every` (a live client's pong counts as hearing from it). Messages already
/// queued go out in one flush. Ends with a close frame when the chain ends.
async fn write_client(
    mut sink: SplitSink<WebSocket, Message>,
    connection: &WsConnection,
    generation: u64,
    replay: Vec<(Cursor, Bytes)>,
    ping_every: Duration,
) -> WriteEnd {
    for (_, message) in replay {
        if sink.feed(text(message)).await.is_err() {
            return WriteEnd::Failed;
        }
    }
    if sink.flush().await.is_err() {
        return WriteEnd::Failed;
    }
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + ping_every, ping_every);
    let mut closed = connection.closed();
    let mut unflushed = false;
    loop {
        let message = match connection.take(generation) {
            Next::Message(message) => text(message),
            Next::Superseded => return WriteEnd::Superseded,
            Next::Empty if unflushed => {
                if sink.flush().await.is_err() {
                    return WriteEnd::Failed;
                }
                unflushed = false;
                continue;
            }
            Next::Empty => {
                // Only now register for a wake-up (not per message), then look once more so
                // that nothing arriving in between is missed.
                let changed = connection.changed();
                tokio::pin!(changed);
                changed.as_mut().enable();
                match connection.take(generation) {
                    Next::Message(message) => text(message),
                    Next::Superseded => return WriteEnd::Superseded,
                    Next::Empty if connection.has_closed() => {
                        let close = CloseFrame {
                            code: close_code::NORMAL,
                            reason: Utf8Bytes::from_static("the chain has stopped"),
                        };
                        let _ = sink.send(Message::Close(Some(close))).await;
                        return WriteEnd::ChainEnded;
                    }
                    Next::Empty => tokio::select! {
                        () = &mut changed => continue,
                        _ = closed.changed() => continue,
                        _ = ping.tick() => Message::Ping(Bytes::new()),
                    },
                }
            }
        };
        if let Err(error) = sink.feed(message).await {
            tracing::info!("WebSocket write failed: {error}");
            return WriteEnd::Failed;
        }
        unflushed = true;
    }
}

/// Whether a read failed because the network did (the client may come back), not because the
/// client broke the protocol (a message over the limit, bad framing), which ends the
/// connection as before.
fn network_failure(error: axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error;
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    match error.into_inner().downcast::<Error>() {
        Ok(error) => matches!(
            *error,
            Error::Io(_)
                | Error::ConnectionClosed
                | Error::AlreadyClosed
                | Error::Protocol(ProtocolError::ResetWithoutClosingHandshake)
        ),
        Err(_) => true,
    }
}

/// A message from the chain as a text message (`take` let only UTF-8 through).
fn text(message: Bytes) -> Message {
    Message::Text(Utf8Bytes::try_from(message).expect("checked when taken"))
}
