//! A Streamable HTTP client for the tests (ureq, blocking): `initialize` POSTed without a
//! connection id, the connection's SSE stream and each session's read on threads of their
//! own, every other message POSTed with the connection and session headers.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::remote::Remote;

pub struct HttpRemote {
    agent: ureq::Agent,
    url: String,
    /// Extra headers on every request (`Authorization`).
    headers: Vec<(String, String)>,
    pub connection_id: Option<String>,
    /// Messages from every stream, in the order they were read, with the stream's session.
    inbox_tx: mpsc::Sender<(Option<String>, Value)>,
    inbox: mpsc::Receiver<(Option<String>, Value)>,
    /// The session of each agent-side request, for the header on its answer.
    asked: HashMap<String, String>,
    /// The session of each message received, in order (`None`: the connection stream).
    pub streams_seen: Vec<(Option<String>, Value)>,
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// An agent that trusts `cert_pem` (and nothing else) for https://.
pub fn tls_agent(cert_pem: &[u8]) -> ureq::Agent {
    let cert = ureq::tls::Certificate::from_pem(cert_pem).expect("a PEM certificate");
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::new_with_certs(&[cert]))
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .into()
}

/// A POST's status and body.
pub struct Posted {
    pub status: u16,
    pub connection_id: Option<String>,
    pub body: String,
}

impl HttpRemote {
    pub fn new(url: &str, headers: &[(&str, &str)]) -> HttpRemote {
        HttpRemote::with_agent(url, headers, agent())
    }

    pub fn with_agent(url: &str, headers: &[(&str, &str)], agent: ureq::Agent) -> HttpRemote {
        let (inbox_tx, inbox) = mpsc::channel();
        HttpRemote {
            agent,
            url: url.to_string(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            connection_id: None,
            inbox_tx,
            inbox,
            asked: HashMap::new(),
            streams_seen: Vec::new(),
        }
    }

    /// POSTs `body` with the connection id (once known), `session` and the extra headers.
    pub fn post_raw(&self, body: &str, content_type: &str, session: Option<&str>) -> Posted {
        let mut request = self
            .agent
            .post(&self.url)
            .header("Content-Type", content_type)
            .header("Accept", "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(id) = &self.connection_id {
            request = request.header("Acp-Connection-Id", id);
        }
        if let Some(session) = session {
            request = request.header("Acp-Session-Id", session);
        }
        let mut response = request.send(body).expect("POST reaches serve");
        let connection_id = response
            .headers()
            .get("acp-connection-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        Posted {
            status: response.status().as_u16(),
            connection_id,
            body: response.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    /// GET on the endpoint with the connection id (and `session`): the status, and when it
    /// is 200 a thread reading the stream into the inbox.
    pub fn open_stream(&self, session: Option<&str>) -> u16 {
        let mut request = self
            .agent
            .get(&self.url)
            .header("Accept", "text/event-stream");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(id) = &self.connection_id {
            request = request.header("Acp-Connection-Id", id);
        }
        if let Some(session) = session {
            request = request.header("Acp-Session-Id", session);
        }
        let response = request.call().expect("GET reaches serve");
        let status = response.status().as_u16();
        if status != 200 {
            return status;
        }
        let inbox = self.inbox_tx.clone();
        let session = session.map(str::to_string);
        let reader = response.into_body().into_reader();
        std::thread::spawn(move || {
            let mut data = String::new();
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { return };
                if let Some(rest) = line.strip_prefix("data:") {
                    data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                } else if line.is_empty() && !data.is_empty() {
                    let message: Value = serde_json::from_str(&data)
                        .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}"));
                    data.clear();
                    if inbox.send((session.clone(), message)).is_err() {
                        return;
                    }
                }
            }
        });
        status
    }

    pub fn delete(&self) -> u16 {
        let mut request = self.agent.delete(&self.url);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(id) = &self.connection_id {
            request = request.header("Acp-Connection-Id", id);
        }
        request
            .call()
            .expect("DELETE reaches serve")
            .status()
            .as_u16()
    }
}

impl Remote for HttpRemote {
    fn send(&mut self, message: &Value) {
        let text = message.to_string();
        if self.connection_id.is_none() {
            let posted = self.post_raw(&text, "application/json", None);
            assert_eq!(posted.status, 200, "initialize POST: {}", posted.body);
            self.connection_id = Some(
                posted
                    .connection_id
                    .expect("the initialize answer carries Acp-Connection-Id"),
            );
            let answer: Value = serde_json::from_str(&posted.body).expect("a JSON answer");
            self.inbox_tx.send((None, answer)).unwrap();
            assert_eq!(self.open_stream(None), 200, "the connection's stream");
            return;
        }
        let session = message["params"]["sessionId"]
            .as_str()
            .map(str::to_string)
            .or_else(|| {
                let id = message.get("id")?.to_string();
                self.asked.get(&id).cloned()
            });
        let posted = self.post_raw(&text, "application/json", session.as_deref());
        assert_eq!(posted.status, 202, "POST {text}: {}", posted.body);
    }

    fn recv_within(&mut self, wait: Duration) -> Value {
        let (stream, message) = self
            .inbox
            .recv_timeout(wait)
            .unwrap_or_else(|_| panic!("no message from serve within {wait:?}"));
        if let (Some(session), Some(id)) = (
            message["params"]["sessionId"].as_str(),
            message
                .get("id")
                .filter(|_| message.get("method").is_some()),
        ) {
            self.asked.insert(id.to_string(), session.to_string());
        }
        // A new session's answer: open its stream before anything is sent in it.
        if message.get("method").is_none()
            && let Some(session) = message["result"]["sessionId"].as_str()
        {
            assert_eq!(self.open_stream(Some(session)), 200, "session stream");
        }
        self.streams_seen.push((stream, message.clone()));
        message
    }

    fn close(&mut self) {
        assert_eq!(self.delete(), 202);
    }
}
