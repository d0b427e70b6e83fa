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
use super::record::{self, Id, MessageRecord, Payload};
use super::redact::Redactor;
use super::sink::{Shared, cost_of};
use crate::link::LinkId;

/// How long the thread sleeps when nothing is queued. Producers never wake it (a wake
/// would be a system call on the router's path); the end of the run does.
const POLL: Duration = Duration::from_millis(10);
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
        loop {
            match items.try_recv() {
                Ok(Item::End { at, reason }) => {
                    self.report_dropped(at);
                    let total = self.shared.dropped.load(Ordering::Relaxed);
                    let t = self.t(at);
                    record::end(&mut self.line, t, &reason, total);
                    self.emit();
                    break;
                }
                Ok(item) => self.take(item),
                Err(TryRecvError::Empty) => {
                    self.report_dropped(Instant::now());
                    self.flush();
                    std::thread::park_timeout(POLL);
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
                    id: id.as_deref().and_then(valid_id),
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
        let maps_to = match seen.kind {
            Kind::Request => route.forwarded.map(|(to, id)| (to, Id::Own(id))),
            Kind::Response | Kind::Error => {
                route.answered.as_ref().map(|(to, id)| (*to, Id::Json(id)))
            }
            _ => None,
        };
        let cancels = match seen.kind {
            Kind::Notification => route.cancels.map(|(to, id)| (to, Id::Own(id))),
            _ => None,
        };
        let payload = match (self.payloads, seen.json) {
            (false, _) => Payload::Omitted,
            (true, true) => Payload::Json(line),
            (true, false) => Payload::Text(line),
        };
        let unnamed = |link: LinkId| format!("link {}", link.0);
        let name_of = |link: LinkId| {
            self.links.get(&link).map_or_else(
                || Cow::Owned(unnamed(link)),
                |info| Cow::Borrowed(&*info.name),
            )
        };
        let maps_to = maps_to.map(|(to, id)| (name_of(to), id));
        let cancels = cancels.map(|(to, id)| (name_of(to), id));
        let info = self.links.get(&message.link);
        let own_name = info.map_or_else(
            || Cow::Owned(unnamed(message.link)),
            |i| Cow::Borrowed(&*i.name),
        );
        let mut out = std::mem::take(&mut self.line);
        MessageRecord {
            t,
            link: &own_name,
            position: info.and_then(|i| i.position),
            dir: message.dir,
            kind: seen.kind,
            method: seen.method.as_deref(),
            wrapped: seen.wrapped,
            id: seen.id.as_deref(),
            maps_to: maps_to.as_ref().map(|(name, id)| (&**name, *id)),
            cancels: cancels.as_ref().map(|(name, id)| (&**name, *id)),
            session: seen.session.as_deref(),
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

    /// Writes the record in `line` (redacted) as one line, and clears it.
    fn emit(&mut self) {
        if !self.broken {
            let line = match &self.redactor {
                Some(redactor) => {
                    self.redacted.clear();
                    redactor.json(&self.line, &mut self.redacted);
                    &self.redacted
                }
                None => &self.line,
            };
            let written = self
                .out
                .write_all(line)
                .and_then(|()| self.out.write_all(b"\n"));
            if let Err(error) = written {
                tracing::warn!(%error, "cannot write the trace any more; tracing stops");
                self.broken = true;
            }
        }
        self.line.clear();
        if self.line.capacity() > BUFFER {
            self.line.shrink_to(BUFFER);
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
