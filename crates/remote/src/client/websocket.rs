//! A remote component over WebSocket (`ws://`, `wss://`): one upgraded connection, every
//! text message one JSON-RPC message each way; binary messages are ignored, as the RFD says.
//!
//! One task owns the socket. When it drops without a close frame and the server advertised
//! resumption (`Acp-Resumable`), the task reconnects with backoff within the server's window,
//! naming the connection (`Acp-Connection-Id`) and how many messages it has received
//! (`Last-Event-ID`); the server sends what was missed, says how many of ours it has taken
//! (`Acp-Received`), and the rest are sent again. A refused resume (409) or the window passing
//! fails the component, as a dropped connection did before.

use std::io;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Response;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

use super::resumption::{Backoff, Resumable, SentMessages};
use super::{CONNECT_TIMEOUT, ConnectionError, Ended, Target};
use crate::protocol::{CONNECTION_ID, LAST_EVENT_ID, RECEIVED, RESUMABLE, Transport};
use acp_link::{MessageSink, MessageSource};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Messages the link has handed to the socket's task and it has not sent yet.
const OUTGOING_QUEUE: usize = 64;
/// Messages received and not yet read by the link.
const INCOMING_QUEUE: usize = 64;
/// Bytes of sent messages kept to send again after a resume.
const SENT_KEPT: usize = 1 << 20;

/// What the socket's task hands the source.
enum Incoming {
    Message(Bytes),
    /// The connection is over: `None` when the server ended it, else why it failed.
    End(Option<String>),
}

/// What the sink hands the socket's task.
enum Outgoing {
    Message(Bytes),
    /// Send the close message, then say so.
    Close(oneshot::Sender<()>),
}

/// What the server sends.
pub struct WsSource {
    incoming: mpsc::Receiver<Incoming>,
    stop: oneshot::Receiver<()>,
    done: bool,
}

/// What is sent to the server.
pub struct WsSink {
    outgoing: mpsc::Sender<Outgoing>,
    ended: Ended,
}

/// Starts connecting; the halves wait for the connection.
pub(super) fn open(
    target: Target,
    ended: Ended,
    stop: oneshot::Receiver<()>,
) -> (WsSource, WsSink) {
    let (incoming_tx, incoming) = mpsc::channel(INCOMING_QUEUE);
    let (outgoing, outgoing_rx) = mpsc::channel(OUTGOING_QUEUE);
    acp_link::transport::spawn(run(target, ended.clone(), incoming_tx, outgoing_rx));
    let source = WsSource {
        incoming,
        stop,
        done: false,
    };
    (source, WsSink { outgoing, ended })
}

/// Why an upgrade did not give a socket.
enum Refused {
    /// The server answered with a status: no attempt will do better.
    Answered(ConnectionError),
    /// The network failed: a later attempt may get through.
    Unreachable(ConnectionError),
}

impl Refused {
    fn into_reason(self) -> ConnectionError {
        match self {
            Refused::Answered(reason) | Refused::Unreachable(reason) => reason,
        }
    }
}

/// The upgrade, with the configured headers, and to resume, the connection and the count of
/// messages received; a refusal names the server's status.
async fn connect(
    target: &Target,
    resume: Option<(&str, u64)>,
) -> Result<(Socket, Response), Refused> {
    let mut request = target.url.as_str().into_client_request().map_err(|e| {
        Refused::Answered(ConnectionError::Request {
            shown: target.shown.clone(),
            detail: e.to_string(),
        })
    })?;
    for (name, value) in &target.headers {
        request.headers_mut().append(name, value.clone());
    }
    if let Some((connection, received)) = resume {
        let headers = request.headers_mut();
        if let Ok(connection) = http::HeaderValue::from_str(connection) {
            headers.insert(CONNECTION_ID, connection);
        }
        headers.insert(LAST_EVENT_ID, http::HeaderValue::from(received));
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(target.max_message))
        .max_frame_size(Some(target.max_message));
    let connector = if Transport::is_secure(target.url.scheme()) {
        Some(Connector::Rustls(
            crate::client_tls::client_config(&[b"http/1.1"])
                .map_err(|e| Refused::Answered(ConnectionError::Tls(e)))?,
        ))
    } else {
        Some(Connector::Plain)
    };
    let upgrade =
        tokio_tungstenite::connect_async_tls_with_config(request, Some(config), true, connector);
    match tokio::time::timeout(CONNECT_TIMEOUT, upgrade).await {
        Ok(Ok(connected)) => Ok(connected),
        Ok(Err(error)) => Err(refusal(&target.shown, error)),
        Err(_) => Err(Refused::Unreachable(ConnectionError::TimedOut {
            shown: target.shown.clone(),
            seconds: CONNECT_TIMEOUT.as_secs(),
        })),
    }
}

fn header<'r>(response: &'r Response, name: &str) -> Option<&'r str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Why the upgrade failed, for a person: the server's status when it answered.
fn refusal(shown: &str, error: tungstenite::Error) -> Refused {
    let (detail, answered) = match error {
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
            (format!("the server answered {status}{body}"), true)
        }
        error => (error.to_string(), false),
    };
    let reason = ConnectionError::Unreachable {
        shown: shown.to_string(),
        detail,
    };
    if answered {
        Refused::Answered(reason)
    } else {
        Refused::Unreachable(reason)
    }
}

/// One connection, resumed as often as it drops within the server's window.
struct Connection {
    socket: Socket,
    /// `Acp-Connection-Id`, when the server gave one and can resume.
    resume: Option<(String, Resumable)>,
    received: u64,
    sent: SentMessages,
    /// The sink asked to close: a drop after it is the end.
    closing: bool,
}

/// The socket's task: connects, then moves messages both ways, resuming a dropped socket.
async fn run(
    target: Target,
    ended: Ended,
    incoming: mpsc::Sender<Incoming>,
    mut outgoing: mpsc::Receiver<Outgoing>,
) {
    let fail = async |reason: ConnectionError| {
        let reason = reason.to_string();
        ended.set(reason.clone());
        let _ = incoming.send(Incoming::End(Some(reason))).await;
    };
    let (socket, response) = match connect(&target, None).await {
        Ok(connected) => connected,
        Err(refused) => return fail(refused.into_reason()).await,
    };
    let id = header(&response, CONNECTION_ID).map(str::to_owned);
    let resumable = header(&response, RESUMABLE).and_then(|h| Resumable::parse(h.as_bytes()));
    tracing::debug!(url = %target.shown, connection = ?id, ?resumable, "WebSocket connected");
    let mut connection = Connection {
        socket,
        resume: id.zip(resumable),
        received: 0,
        sent: SentMessages::new(SENT_KEPT),
        closing: false,
    };
    let mut sink_open = true;
    loop {
        let dropped = tokio::select! {
            frame = connection.socket.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    connection.received += 1;
                    if incoming.send(Incoming::Message(Bytes::from(text))).await.is_err() {
                        return;
                    }
                    continue;
                }
                // Binary messages are not ACP; pings are answered by tungstenite.
                Some(Ok(Message::Binary(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(frame))) => {
                    let why = match frame {
                        Some(frame) if frame.code != CloseCode::Normal => {
                            format!(" (close code {}: {})", frame.code, frame.reason)
                        }
                        _ => String::new(),
                    };
                    ended.set(format!("closed its connection ({}){why}", target.shown));
                    let _ = incoming.send(Incoming::End(None)).await;
                    return;
                }
                Some(Err(error)) => error.to_string(),
                None => "the connection ended without a close message".to_owned(),
            },
            message = outgoing.recv(), if sink_open => match message {
                Some(Outgoing::Message(message)) => {
                    connection.sent.sent(message.clone());
                    let text = Utf8Bytes::try_from(message).expect("checked by the sink");
                    let mut written = connection.socket.feed(Message::Text(text)).await;
                    if written.is_ok() && outgoing.is_empty() {
                        written = connection.socket.flush().await;
                    }
                    match written {
                        Ok(()) => continue,
                        Err(error) => error.to_string(),
                    }
                }
                Some(Outgoing::Close(done)) => {
                    connection.closing = true;
                    let _ = connection.socket.close(None).await;
                    let _ = done.send(());
                    continue;
                }
                None => {
                    sink_open = false;
                    continue;
                }
            },
            () = incoming.closed() => return,
        };
        let lost = ConnectionError::Lost {
            shown: target.shown.clone(),
            detail: dropped,
        };
        if connection.closing || connection.resume.is_none() {
            if connection.closing {
                ended.set(format!("closed its connection ({})", target.shown));
                let _ = incoming.send(Incoming::End(None)).await;
                return;
            }
            return fail(lost).await;
        }
        tracing::info!(url = %target.shown, "{lost}: resuming");
        if let Err(reason) = resume(&target, &mut connection, &incoming).await {
            return fail(reason).await;
        }
    }
}

/// Reconnects `connection` within its window, with backoff, and sends again what the server
/// has not taken.
async fn resume(
    target: &Target,
    connection: &mut Connection,
    incoming: &mpsc::Sender<Incoming>,
) -> Result<(), ConnectionError> {
    let (id, resumable) = connection.resume.clone().expect("a resumable connection");
    let deadline = Instant::now() + resumable.window;
    let mut backoff = Backoff::default();
    let (socket, response) = loop {
        let attempt = connect(target, Some((&id, connection.received)));
        let refused = tokio::select! {
            attempt = attempt => match attempt {
                Ok(connected) => break connected,
                Err(Refused::Answered(reason)) => return Err(reason),
                Err(Refused::Unreachable(reason)) => reason,
            },
            () = incoming.closed() => return Err(ConnectionError::Lost {
                shown: target.shown.clone(),
                detail: "nobody reads the connection any more".to_owned(),
            }),
        };
        let delay = backoff.next().expect("the backoff never ends");
        if Instant::now() + delay >= deadline {
            return Err(ConnectionError::Lost {
                shown: target.shown.clone(),
                detail: format!(
                    "not resumed within the server's {} s window: {refused}",
                    resumable.window.as_secs()
                ),
            });
        }
        tokio::time::sleep(delay).await;
    };
    let taken = header(&response, RECEIVED).and_then(|n| n.parse::<u64>().ok());
    let again = taken
        .and_then(|taken| connection.sent.after(taken).ok())
        .ok_or_else(|| ConnectionError::Lost {
            shown: target.shown.clone(),
            detail: format!(
                "the resumed connection's count of messages taken ({}) does not match what was sent",
                header(&response, RECEIVED).unwrap_or("none")
            ),
        })?;
    connection.socket = socket;
    tracing::info!(
        url = %target.shown,
        received = connection.received,
        sent_again = again.len(),
        "WebSocket connection resumed"
    );
    for message in again {
        let text = Utf8Bytes::try_from(message).expect("checked by the sink");
        connection
            .socket
            .feed(Message::Text(text))
            .await
            .map_err(|e| ConnectionError::Lost {
                shown: target.shown.clone(),
                detail: e.to_string(),
            })?;
    }
    connection
        .socket
        .flush()
        .await
        .map_err(|e| ConnectionError::Lost {
            shown: target.shown.clone(),
            detail: e.to_string(),
        })
}

impl MessageSource for WsSource {
    async fn next_message(&mut self) -> Option<io::Result<Bytes>> {
        if self.done {
            return None;
        }
        let incoming = tokio::select! {
            incoming = self.incoming.recv() => incoming,
            _ = &mut self.stop => None,
        };
        match incoming {
            Some(Incoming::Message(message)) => Some(Ok(message)),
            Some(Incoming::End(Some(reason))) => {
                self.done = true;
                Some(Err(io::Error::other(reason)))
            }
            Some(Incoming::End(None)) | None => {
                self.done = true;
                None
            }
        }
    }
}

impl WsSink {
    fn gone(&self) -> io::Error {
        let reason = self
            .ended
            .reason()
            .unwrap_or_else(|| "the connection is closed".to_owned());
        io::Error::new(io::ErrorKind::NotConnected, reason)
    }
}

impl MessageSink for WsSink {
    async fn send(&mut self, message: Bytes) -> io::Result<()> {
        if std::str::from_utf8(&message).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a message is not UTF-8",
            ));
        }
        self.outgoing
            .send(Outgoing::Message(message))
            .await
            .map_err(|_| self.gone())
    }

    /// The socket's task flushes whenever it has nothing more queued.
    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Sends the close message, unless the connection was never made.
    async fn close(&mut self) -> io::Result<()> {
        let (done, closed) = oneshot::channel();
        if self.outgoing.send(Outgoing::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
        Ok(())
    }
}
