//! A WebSocket client for the tests (tungstenite, blocking): one JSON-RPC message per text
//! message, headers of the test's choosing on the upgrade.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;
use tungstenite::client::IntoClientRequest;
use tungstenite::http::HeaderValue;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use super::remote::Remote;

pub struct WsRemote {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    /// The `Acp-Connection-Id` of the upgrade response.
    pub connection_id: String,
    /// The `Acp-Received` of an upgrade that resumed a connection: how many of the client's
    /// messages the server has taken.
    pub received: Option<u64>,
    /// The `Acp-Resumable` of an upgrade that opened a connection.
    pub resumable: Option<String>,
}

/// Opens `url` with `headers`; the upgrade's HTTP status when it is refused.
pub fn connect(url: &str, headers: &[(&str, &str)]) -> Result<WsRemote, u16> {
    let mut request = url.into_client_request().expect("a ws:// URL");
    for (name, value) in headers {
        request.headers_mut().insert(
            tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    match tungstenite::connect(request) {
        Ok((socket, response)) => {
            let connection_id = response
                .headers()
                .get("acp-connection-id")
                .and_then(|v| v.to_str().ok())
                .expect("the upgrade response carries Acp-Connection-Id")
                .to_string();
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            Ok(WsRemote {
                socket,
                connection_id,
                received: header("acp-received").map(|n| n.parse().expect("a count")),
                resumable: header("acp-resumable"),
            })
        }
        Err(tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(error) => panic!("WebSocket connect to {url} failed: {error}"),
    }
}

impl WsRemote {
    fn tcp(&self) -> &TcpStream {
        match self.socket.get_ref() {
            MaybeTlsStream::Plain(tcp) => tcp,
            _ => unreachable!("the tests use ws:// only"),
        }
    }

    /// Ends the TCP connection without a close frame, as a network that went away does.
    pub fn cut(self) {
        let _ = self.tcp().shutdown(std::net::Shutdown::Both);
        drop(self);
    }

    /// Sends raw text as one message.
    pub fn send_text(&mut self, text: &str) {
        self.socket
            .send(Message::text(text))
            .expect("WebSocket send");
    }

    /// Reads until the server closes; true when it did within `wait` (a close frame, or the
    /// socket ending).
    pub fn closed_within(&mut self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            self.tcp()
                .set_read_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            match self.socket.read() {
                Ok(Message::Close(_)) => return true,
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return true,
            }
        }
        false
    }
}

impl Remote for WsRemote {
    fn send(&mut self, message: &Value) {
        self.send_text(&message.to_string());
    }

    fn recv_within(&mut self, wait: Duration) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no message from serve within {wait:?}");
            self.tcp().set_read_timeout(Some(left)).unwrap();
            match self.socket.read() {
                Ok(Message::Text(text)) => {
                    return serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
                }
                Ok(Message::Close(frame)) => panic!("serve closed the WebSocket: {frame:?}"),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(error) => panic!("WebSocket read failed: {error}"),
            }
        }
    }

    fn close(&mut self) {
        let _ = self.socket.close(None);
        let _ = self.closed_within(Duration::from_secs(5));
    }
}
