//! A remote component over WebSocket (`ws://`, `wss://`): one upgraded connection, every
//! text message one JSON-RPC message each way; binary messages are ignored, as the RFD says.

use std::io;

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use super::{CONNECT_TIMEOUT, ConnectionError, Ended, Target};
use crate::protocol::{CONNECTION_ID, Transport};
use acp_link::{MessageSink, MessageSource};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A half that exists once the connection is made.
enum Half<T> {
    Connecting(oneshot::Receiver<Result<T, ConnectionError>>),
    Open(T),
    Done,
}

/// What the server sends.
pub struct WsSource {
    half: Half<SplitStream<Socket>>,
    stop: oneshot::Receiver<()>,
    ended: Ended,
    shown: String,
}

/// What is sent to the server.
pub struct WsSink {
    half: Half<SplitSink<Socket, Message>>,
}

/// Starts connecting; the halves wait for the connection.
pub(super) fn open(
    target: Target,
    ended: Ended,
    stop: oneshot::Receiver<()>,
) -> (WsSource, WsSink) {
    let (stream_tx, stream_rx) = oneshot::channel();
    let (sink_tx, sink_rx) = oneshot::channel();
    let shown = target.shown.clone();
    let failed = ended.clone();
    acp_link::transport::spawn(async move {
        let connected = tokio::time::timeout(CONNECT_TIMEOUT, connect(&target))
            .await
            .unwrap_or_else(|_| {
                Err(ConnectionError::TimedOut {
                    shown: target.shown.clone(),
                    seconds: CONNECT_TIMEOUT.as_secs(),
                })
            });
        match connected {
            Ok(socket) => {
                let (sink, stream) = socket.split();
                let _ = sink_tx.send(Ok(sink));
                let _ = stream_tx.send(Ok(stream));
            }
            Err(reason) => {
                failed.set(reason.to_string());
                let _ = sink_tx.send(Err(reason.clone()));
                let _ = stream_tx.send(Err(reason));
            }
        }
    });
    let source = WsSource {
        half: Half::Connecting(stream_rx),
        stop,
        ended,
        shown,
    };
    let sink = WsSink {
        half: Half::Connecting(sink_rx),
    };
    (source, sink)
}

/// The upgrade, with the configured headers; a refusal names the server's status.
async fn connect(target: &Target) -> Result<Socket, ConnectionError> {
    let mut request =
        target
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| ConnectionError::Request {
                shown: target.shown.clone(),
                detail: e.to_string(),
            })?;
    for (name, value) in &target.headers {
        request.headers_mut().append(name, value.clone());
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(target.max_message))
        .max_frame_size(Some(target.max_message));
    let connector = if Transport::is_secure(target.url.scheme()) {
        Some(Connector::Rustls(
            crate::client_tls::client_config(&[b"http/1.1"]).map_err(ConnectionError::Tls)?,
        ))
    } else {
        Some(Connector::Plain)
    };
    let (socket, response) =
        tokio_tungstenite::connect_async_tls_with_config(request, Some(config), true, connector)
            .await
            .map_err(|e| refusal(&target.shown, e))?;
    let connection = response
        .headers()
        .get(CONNECTION_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none given");
    tracing::debug!(url = %target.shown, connection, "WebSocket connected");
    Ok(socket)
}

/// Why the upgrade failed, for a person: the server's status when it answered.
fn refusal(shown: &str, error: tungstenite::Error) -> ConnectionError {
    let detail = match error {
        tungstenite::Error::Http(response) => {
            let status = response.status();
            let body = response
                .body()
                .as_deref()
                .map(|b| {
                    String::from_utf8_lossy(&b[..b.len().min(200)])
                        .trim()
                        .to_owned()
                })
                .filter(|b| !b.is_empty())
                .map(|b| format!(": {b}"))
                .unwrap_or_default();
            format!("the server answered {status}{body}")
        }
        error => error.to_string(),
    };
    ConnectionError::Unreachable {
        shown: shown.to_string(),
        detail,
    }
}

impl MessageSource for WsSource {
    async fn next_message(&mut self) -> Option<io::Result<Bytes>> {
        loop {
            match &mut self.half {
                Half::Connecting(connecting) => {
                    let connected = tokio::select! {
                        connected = connecting => connected.ok(),
                        _ = &mut self.stop => None,
                    };
                    match connected {
                        Some(Ok(stream)) => self.half = Half::Open(stream),
                        Some(Err(reason)) => {
                            self.half = Half::Done;
                            return Some(Err(io::Error::other(reason)));
                        }
                        None => {
                            self.half = Half::Done;
                            return None;
                        }
                    }
                }
                Half::Open(stream) => {
                    let next = tokio::select! {
                        next = stream.next() => next,
                        _ = &mut self.stop => None,
                    };
                    match next {
                        Some(Ok(Message::Text(text))) => return Some(Ok(Bytes::from(text))),
                        // Binary messages are not ACP; pings are answered by tungstenite.
                        Some(Ok(Message::Binary(_) | Message::Ping(_) | Message::Pong(_))) => {}
                        Some(Ok(Message::Frame(_))) => {}
                        Some(Ok(Message::Close(frame))) => {
                            let why = match frame {
                                Some(frame) if frame.code != CloseCode::Normal => {
                                    format!(" (close code {}: {})", frame.code, frame.reason)
                                }
                                _ => String::new(),
                            };
                            self.ended
                                .set(format!("closed its connection ({}){why}", self.shown));
                            self.half = Half::Done;
                            return None;
                        }
                        Some(Err(error)) => {
                            let reason = format!("lost its connection ({}): {error}", self.shown);
                            self.ended.set(reason.clone());
                            self.half = Half::Done;
                            return Some(Err(io::Error::other(reason)));
                        }
                        None => {
                            self.ended
                                .set(format!("closed its connection ({})", self.shown));
                            self.half = Half::Done;
                            return None;
                        }
                    }
                }
                Half::Done => return None,
            }
        }
    }
}

impl WsSink {
    /// The open half, waiting for the connection if it is being made.
    async fn open(&mut self) -> io::Result<&mut SplitSink<Socket, Message>> {
        if let Half::Connecting(connecting) = &mut self.half {
            match connecting.await {
                Ok(Ok(sink)) => self.half = Half::Open(sink),
                Ok(Err(reason)) => {
                    self.half = Half::Done;
                    return Err(io::Error::new(io::ErrorKind::NotConnected, reason));
                }
                Err(_) => self.half = Half::Done,
            }
        }
        match &mut self.half {
            Half::Open(sink) => Ok(sink),
            _ => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection is closed",
            )),
        }
    }
}

impl MessageSink for WsSink {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        let text = Utf8Bytes::try_from(message)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a message is not UTF-8"))?;
        self.open()
            .await?
            .feed(Message::Text(text))
            .await
            .map_err(io::Error::other)
    }

    async fn flush(&mut self) -> io::Result<()> {
        self.open().await?.flush().await.map_err(io::Error::other)
    }

    /// Sends the close message, unless the connection was never made.
    async fn close(&mut self) -> io::Result<()> {
        match &mut self.half {
            Half::Open(sink) => sink.close().await.map_err(io::Error::other),
            _ => Ok(()),
        }
    }
}
