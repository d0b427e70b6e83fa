//! The trace thread: takes what producers queued, turns each into a record (classifying the
//! line, naming links, pairing ids, redacting) and writes it; the router never waits on it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, TryRecvError};
use std::time::{Duration, Instant};

use acp_wire::{IdKey, RawValue};

use super::classify::{Kind, classify, valid_id};
use super::item::{Dir, Frame, Item, Message};
use super::record::{self, MessageRecord, Payload};
use super::redact::Redactor;
use super::sink::{Shared, cost_of};
use acp_router::LinkId;

/// How long the thread sleeps when nothing is queued: 1 ms while messages flow, so that
/// its work comes in short slices between theirs rather than in long bursts, doubling up to
/// 32 ms while the run is idle. Producers never wake it (a wake would be a system call on
/// the router's path); the end of the run does.
const POLL_BUSY: Duration = Duration::from_millis(1);
const POLL_IDLE: Duration = Duration::from_millis(32);
/// Requests remembered per link and direction, to name the method of their responses;
/// beyond this (requests never answered) the table starts over.
const ASKED_LIMIT: usize = 65_536;
const BUFFER: usize = 256 * 1024;

/// The trace thread's state.
pub(super) struct TraceThread {
    out: BufWriter<File>,
    shared: Arc<Shared>,
    redactor: Option<Redactor>,
    payloads: bool,
    links: HashMap<LinkId, LinkInfo>,
    /// The record being written, and its redacted form.
    line: Vec<u8>,
    redacted: Vec<u8>,
    dropped_reported: u64,
    /// Writing failed: the rest is dropped (and the failure logged once).
    broken: bool,
}

/// What the records of one link need to know.
struct LinkInfo {
    name: String,
    position: Option<usize>,
    /// Requests read from the link, by id: their responses are written to it.
    asked_in: HashMap<IdKey, Asked>,
    /// Requests written to the link, by id: their responses are read from it.
    asked_out: HashMap<IdKey, Asked>,
}

struct Asked {
    method: Box<str>,
    wrapped: Option<&'static str>,
}

impl TraceThread {
    pub(super) fn new(
        file: File,
        shared: Arc<Shared>,
        redactor: Option<Redactor>,
        payloads: bool,
    ) -> TraceThread {
        TraceThread {
            out: BufWriter::with_capacity(BUFFER, file),
            shared,
            redactor,
            payloads,
            links: HashMap::new(),
            line: Vec::new(),
            redacted: Vec::new(),
            dropped_reported: 0,
            broken: false,
        }
    }

    /// Writes `header`, then every item until the end of the run; says so on `done`.
    pub(super) fn run(
        mut self,
        header: Vec<u8>,
        items: mpsc::Receiver<Item>,
        done: mpsc::Sender<()>,
    ) {
        self.line = header;
        self.emit();
        let mut poll = POLL_BUSY;
        loop {
            match items.try_recv() {
                Ok(Item::End { at, reason }) => {
                    self.report_dropped(at);
                    let total = self.shared.dropped.load(Ordering::Relaxed);
                    let t = self.t(at);
                    let reason = redact_text(self.redactor.as_ref(), &reason);
                    record::end(&mut self.line, t, &reason, total);
                    self.emit();
                    break;
                }
                Ok(item) => {
                    self.take(item);
                    poll = POLL_BUSY;
                }
                Err(TryRecvError::Empty) => {
                    self.report_dropped(Instant::now());
                    self.flush();
                    std::thread::park_timeout(poll);
                    poll = (poll * 2).min(POLL_IDLE);
                }
                Err(TryRecvError::Disconnected) => break,
            }
        }
        self.flush();
        let _ = done.send(());
    }

    fn take(&mut self, item: Item) {
        match item {
            Item::Message(message) => {
                self.shared
                    .queued
                    .fetch_sub(cost_of(&message), Ordering::Relaxed);
                self.message(&message);
            }
            Item::Link {
                link,
                name,
                position,
            } => {
                let info = self.info(link);
                info.name = name;
                info.position = position;
            }
            Item::Component {
                at,
                name,
                event,
                detail,
            } => {
                let t = self.t(at);
                let detail = redact_text(self.redactor.as_ref(), &detail);
                record::component(&mut self.line, t, &name, event.name(), &detail);
                self.emit();
            }
            Item::End { .. } => unreachable!("handled by run"),
        }
    }

    fn message(&mut self, message: &Message) {
        let t = self.t(message.at);
        let line = match &message.frame {
            Frame::Line(line) => line,
            Frame::TooLong { len, id } => {
                self.info(message.link);
                let info = &self.links[&message.link];
                MessageRecord {
                    t,
                    link: &info.name,
                    position: info.position,
                    dir: message.dir,
                    kind: Kind::Invalid,
                    method: None,
                    wrapped: None,
                    id: id
                        .as_deref()
                        .and_then(valid_id)
                        .map(|id| redact_json(self.redactor.as_ref(), id))
                        .as_deref(),
                    maps_to: None,
                    cancels: None,
                    session: None,
                    bytes: *len,
                    payload: Payload::Omitted,
                }
                .write(&mut self.line);
                return self.emit();
            }
        };
        let mut seen = classify(line);
        self.pair(message.link, message.dir, &mut seen);
        let route = &message.route;
        // What comes from the message is redacted; what the conductor names is not.
        let redactor = self.redactor.as_ref();
        let maps_to = match seen.kind {
            Kind::Request => route
                .forwarded
                .map(|(to, id)| (to, Cow::Owned(id.to_string()))),
            Kind::Response | Kind::Error => route
                .answered
                .as_ref()
                .map(|(to, id)| (*to, redact_json(redactor, id))),
            _ => None,
        };
        let cancels = match seen.kind {
            Kind::Notification => route.cancels.map(|(to, id)| (to, id.to_string())),
            _ => None,
        };
        let method = seen.method.as_deref().map(|m| redact_text(redactor, m));
        let session = seen.session.as_deref().map(|s| redact_text(redactor, s));
        let id = seen.id.as_deref().map(|id| redact_json(redactor, id));
        let text_payload;
        let payload = match (self.payloads, seen.json) {
            (false, _) => Payload::Omitted,
            (true, true) => match redactor {
                Some(r) => {
                    self.redacted.clear();
                    r.json(line, &mut self.redacted);
                    Payload::Json(&self.redacted)
                }
                None => Payload::Json(line),
            },
            (true, false) => {
                text_payload = String::from_utf8_lossy(line).into_owned();
                Payload::Text(&redact_text(redactor, &text_payload))
            }
        };
        let name_of = |link: LinkId| {
            self.links.get(&link).map_or_else(
                || Cow::Owned(format!("link {}", link.0)),
                |info| Cow::Borrowed(&*info.name),
            )
        };
        let maps_to = maps_to.map(|(to, id)| (name_of(to), id));
        let cancels = cancels.map(|(to, id)| (name_of(to), id));
        let info = self.links.get(&message.link);
        let own_name = name_of(message.link);
        let mut out = std::mem::take(&mut self.line);
        MessageRecord {
            t,
            link: &own_name,
            position: info.and_then(|i| i.position),
            dir: message.dir,
            kind: seen.kind,
            method: method.as_deref(),
            wrapped: seen.wrapped,
            id: id.as_deref(),
            maps_to: maps_to.as_ref().map(|(name, id)| (&**name, &**id)),
            cancels: cancels.as_ref().map(|(name, id)| (&**name, id.as_str())),
            session: session.as_deref(),
            bytes: line.len(),
            payload,
        }
        .write(&mut out);
        self.line = out;
        self.emit();
    }

    /// Remembers the method of a request on its link, and gives it to the response that
    /// answers it (which travels the other way on the same link).
    fn pair(&mut self, link: LinkId, dir: Dir, seen: &mut super::classify::Seen<'_>) {
        let Some(key) = seen
            .id
            .as_deref()
            .and_then(|id| serde_json::from_str::<&RawValue>(id).ok())
            .map(IdKey::of)
        else {
            return;
        };
        let info = self.info(link);
        let (asking, answering) = match dir {
            Dir::In => (&mut info.asked_in, &mut info.asked_out),
            Dir::Out => (&mut info.asked_out, &mut info.asked_in),
        };
        match seen.kind {
            Kind::Request => {
                if asking.len() >= ASKED_LIMIT {
                    asking.clear();
                }
                let method = seen.method.as_deref().unwrap_or_default().into();
                asking.insert(
                    key,
                    Asked {
                        method,
                        wrapped: seen.wrapped,
                    },
                );
            }
            Kind::Response | Kind::Error => {
                if let Some(asked) = answering.remove(&key) {
                    seen.method = Some(Cow::Owned(asked.method.into()));
                    seen.wrapped = asked.wrapped;
                }
            }
            Kind::Notification | Kind::Invalid => {}
        }
    }

    fn info(&mut self, link: LinkId) -> &mut LinkInfo {
        self.links.entry(link).or_insert_with(|| LinkInfo {
            name: format!("link {}", link.0),
            position: None,
            asked_in: HashMap::new(),
            asked_out: HashMap::new(),
        })
    }

    /// A record of the messages dropped since the last one, if any were.
    fn report_dropped(&mut self, at: Instant) {
        let total = self.shared.dropped.load(Ordering::Relaxed);
        if total > self.dropped_reported {
            let count = total - self.dropped_reported;
            self.dropped_reported = total;
            let t = self.t(at);
            record::dropped(&mut self.line, t, count, total);
            self.emit();
        }
    }

    /// Milliseconds since the run started.
    fn t(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.shared.start)
            .as_secs_f64()
            * 1000.0
    }

    /// Writes the record in `line` as one line, and clears it.
    fn emit(&mut self) {
        if !self.broken {
            let written = self
                .out
                .write_all(&self.line)
                .and_then(|()| self.out.write_all(b"\n"));
            if let Err(error) = written {
                tracing::warn!(%error, "cannot write the trace any more; tracing stops");
                self.broken = true;
            }
        }
        self.line.clear();
        if self.line.capacity() > BUFFER {
            self.line.shrink_to(BUFFER);
        }
        if self.redacted.capacity() > BUFFER {
            self.redacted = Vec::new();
        }
    }

    fn flush(&mut self) {
        if !self.broken
            && let Err(error) = self.out.flush()
        {
            tracing::warn!(%error, "cannot write the trace any more; tracing stops");
            self.broken = true;
        }
    }
}

/// `text` with its secrets redacted.
fn redact_text<'t>(redactor: Option<&Redactor>, text: &'t str) -> Cow<'t, str> {
    match redactor {
        Some(redactor) => redactor.text(text),
        None => Cow::Borrowed(text),
    }
}

/// `json` (JSON text: an id) with the secrets in its strings redacted.
fn redact_json<'t>(redactor: Option<&Redactor>, json: &'t str) -> Cow<'t, str> {
    match redactor {
        Some(redactor) if json.starts_with('"') => {
            let mut out = Vec::with_capacity(json.len());
            redactor.json(json.as_bytes(), &mut out);
            Cow::Owned(String::from_utf8(out).expect("redaction keeps JSON text UTF-8"))
        }
        _ => Cow::Borrowed(json),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, AtomicUsize};

    use bytes::Bytes;
    use serde_json::{Value, json};

    use super::*;
    use crate::item::{ComponentEvent, Route};

    /// Runs a trace thread over `items` (an `End` appended) and returns its records.
    fn records(items: Vec<Item>, redactor: Option<Redactor>, dropped: u64) -> Vec<Value> {
        let path = std::env::temp_dir().join(format!(
            "acp-trace-thread-{}-{dropped}-{}.jsonl",
            std::process::id(),
            redactor.is_some()
        ));
        let start = Instant::now();
        let shared = Arc::new(Shared {
            start,
            queued: AtomicUsize::new(usize::MAX / 2),
            dropped: AtomicU64::new(dropped),
            budget: usize::MAX,
        });
        let (tx, rx) = mpsc::channel();
        for item in items {
            tx.send(item).unwrap();
        }
        tx.send(Item::End {
            at: Instant::now(),
            reason: "stopped: hunter22".into(),
        })
        .unwrap();
        let (done_tx, done) = mpsc::channel();
        let thread = TraceThread::new(File::create(&path).unwrap(), shared, redactor, true);
        thread.run(b"{\"type\":\"header\"}".to_vec(), rx, done_tx);
        done.recv().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    fn message(link: usize, dir: Dir, text: &'static str, route: Route) -> Item {
        Item::Message(Message {
            at: Instant::now(),
            link: LinkId(link),
            dir,
            frame: Frame::Line(Bytes::from_static(text.as_bytes())),
            route,
        })
    }

    fn named(link: usize, name: &str, position: Option<usize>) -> Item {
        Item::Link {
            link: LinkId(link),
            name: name.into(),
            position,
        }
    }

    #[test]
    fn records_name_links_pair_methods_and_redact_only_what_came_from_messages() {
        let redactor = Redactor::new(
            &["hunter22".to_owned()],
            // Words the records themselves are made of: never redacted there.
            &["message|request|agent|editor|in\\b".to_owned()],
        )
        .unwrap();
        let items = vec![
            named(0, "editor", Some(0)),
            named(1, "agent", Some(1)),
            message(
                0,
                Dir::In,
                r#"{"jsonrpc":"2.0","id":"e","method":"session/prompt","params":{"sessionId":"s","text":"hunter22 in a message"}}"#,
                Route {
                    forwarded: Some((LinkId(1), 5)),
                    ..Route::default()
                },
            ),
            message(
                1,
                Dir::Out,
                r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s"}}"#,
                Route::default(),
            ),
            message(
                1,
                Dir::In,
                r#"{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}"#,
                Route {
                    answered: Some((LinkId(0), "\"e\"".into())),
                    ..Route::default()
                },
            ),
            message(9, Dir::In, "a banner \u{1b}[1m", Route::default()),
            Item::Component {
                at: Instant::now(),
                name: "agent".into(),
                event: ComponentEvent::Exited,
                detail: "exited; stderr said hunter22".into(),
            },
        ];
        let records = records(items, redactor, 0);
        assert_eq!(records[0], json!({"type": "header"}));
        let asked = &records[1];
        assert_eq!(
            (
                &asked["type"],
                &asked["link"],
                &asked["dir"],
                &asked["kind"]
            ),
            (
                &json!("message"),
                &json!("editor"),
                &json!("in"),
                &json!("request")
            )
        );
        assert_eq!(asked["mapsTo"], json!({"link": "agent", "id": 5}));
        assert_eq!(
            asked["payload"]["params"]["text"],
            "[redacted] [redacted] a [redacted]"
        );
        let answer = &records[3];
        assert_eq!(
            answer["method"], "session/prompt",
            "paired with its request"
        );
        assert_eq!(answer["mapsTo"], json!({"link": "editor", "id": "e"}));
        assert_eq!(answer["position"], 1);
        let banner = &records[4];
        assert_eq!(
            (&banner["link"], &banner["kind"], &banner["position"]),
            (&json!("link 9"), &json!("invalid"), &Value::Null)
        );
        assert_eq!(banner["payload"], "a banner \u{1b}[1m");
        assert_eq!(records[5]["detail"], "exited; stderr said [redacted]");
        assert_eq!(records[5]["link"], "agent");
        let end = records.last().unwrap();
        assert_eq!(end["reason"], "stopped: [redacted]");
        assert_eq!(end["dropped"], 0);
    }

    #[test]
    fn dropped_messages_are_reported_before_the_end() {
        let records = records(Vec::new(), None, 3);
        let kinds: Vec<&str> = records
            .iter()
            .map(|r| r["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["header", "dropped", "end"]);
        assert_eq!(
            (&records[1]["count"], &records[1]["total"]),
            (&json!(3), &json!(3))
        );
        assert_eq!(records[2]["dropped"], 3);
    }
}
