//! One SSE stream read the way a resuming client reads it (ureq, blocking): each event's `id`
//! (the cursor) and message, read only when the test asks, so that events the server wrote
//! and the test never read are lost when it cuts the stream; reopened with `Last-Event-ID`.

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use serde_json::Value;

/// An open stream.
pub struct SseStream {
    lines: BufReader<Box<dyn Read + Send>>,
}

/// A GET that was refused: its status and body.
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub body: String,
}

impl Refused {
    /// The body as JSON (a refused resume's JSON-RPC error).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("a JSON body ({e}): {}", self.body))
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_recv_body(Some(acp_conductor_tests::editor::patience()))
        .build()
        .into()
}

impl SseStream {
    /// GET `url` for `connection`'s stream (or `session`'s), resuming after `last_event_id`
    /// when given.
    pub fn open(
        url: &str,
        connection: &str,
        session: Option<&str>,
        last_event_id: Option<&str>,
    ) -> Result<SseStream, Refused> {
        let mut request = agent()
            .get(url)
            .header("Accept", "text/event-stream")
            .header("Acp-Connection-Id", connection);
        if let Some(session) = session {
            request = request.header("Acp-Session-Id", session);
        }
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last);
        }
        let response = request.call().expect("GET reaches the server");
        let status = response.status().as_u16();
        if status != 200 {
            let body = response.into_body().read_to_string().unwrap_or_default();
            return Err(Refused { status, body });
        }
        let reader: Box<dyn Read + Send> = Box::new(response.into_body().into_reader());
        Ok(SseStream {
            lines: BufReader::new(reader),
        })
    }

    /// The next event's id and message; `None` when the stream ends.
    pub fn next(&mut self) -> Option<(String, Value)> {
        let mut id = None;
        let mut data = String::new();
        loop {
            let mut line = String::new();
            if self.lines.read_line(&mut line).ok()? == 0 {
                return None;
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(rest) = line.strip_prefix("id:") {
                id = Some(rest.trim_start().to_string());
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            } else if line.is_empty() && !data.is_empty() {
                let message: Value = serde_json::from_str(&data)
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}"));
                let id = id.unwrap_or_else(|| panic!("an event without an id: {data}"));
                return Some((id, message));
            }
        }
    }

    /// Drops the connection without reading what the server has written meanwhile.
    pub fn cut(self) {
        drop(self);
        std::thread::sleep(Duration::from_millis(50));
    }
}
