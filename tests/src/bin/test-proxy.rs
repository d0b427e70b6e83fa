//! `test-proxy`: a pass-through ACP proxy written from the proxy-chains RFD alone, an
//! independent peer for the end-to-end tests. Must not share code with the conductor.
//!
//! Everything from the predecessor goes to the successor wrapped in `proxy/successor`
//! under the proxy's own ids (counted from 0, so they collide with the editor's); wrapped
//! messages from the successor go to the predecessor unwrapped, again under its own ids;
//! responses go back under the ids they answer. `$/cancel_request` is hop-scoped (schema
//! 1.20): one naming a request this proxy forwarded (plain or, from older conductors, wrapped;
//! either side) is passed on plain under this proxy's id for it; the `underscore` dialect,
//! like the older proxies it stands for, wraps it when the request went to the successor. A
//! cancel naming nothing forwarded passes unchanged in the direction it was travelling.
//!
//! Options: `--dialect rfd|underscore` (`_proxy/*` method names, and `proxy/initialize`
//! answered with -32601 as older proxies do), `--record PATH` (every received line, raw),
//! `--record-sent PATH` (every line it writes, raw), `--init-response PATH` (the response its successor gave to `initialize`, raw),
//! `--pid-file PATH`, `--tag NAME` (names it in its stderr), `--envelope-meta JSON` (put
//! `_meta` on the `proxy/successor` envelopes it sends), `--eof-file PATH` (written when
//! stdin reaches EOF). Exits on stdin EOF.

use std::collections::HashMap;

use acp_conductor_tests::fixture_io::{self, FixtureArgs, Recording};
use acp_conductor_tests::jsonrpc::{self, RawMessage};
use serde_json::Value;
use serde_json::value::RawValue;

struct Dialect {
    initialize: &'static str,
    successor: &'static str,
    /// The other dialect's initialize method, which this proxy does not know.
    foreign_initialize: &'static str,
}

const RFD: Dialect = Dialect {
    initialize: "proxy/initialize",
    successor: "proxy/successor",
    foreign_initialize: "_proxy/initialize",
};

const UNDERSCORE: Dialect = Dialect {
    initialize: "_proxy/initialize",
    successor: "_proxy/successor",
    foreign_initialize: "proxy/initialize",
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Predecessor,
    Successor,
}

/// A request this proxy sent on behalf of someone, under one of its own ids.
struct Forwarded {
    /// The id it had when it reached this proxy, exactly as it arrived.
    origin_id: Box<RawValue>,
    /// Who sent it to this proxy.
    origin: Side,
    /// The `initialize` forwarded for `proxy/initialize`: its answer gets recorded.
    initialize: bool,
}

struct Proxy {
    tag: String,
    dialect: &'static Dialect,
    next_id: u64,
    forwarded: HashMap<u64, Forwarded>,
    init_response_path: Option<String>,
    envelope_meta: Option<String>,
}

fn main() {
    let args = FixtureArgs::from_env(&[]);
    fixture_io::write_pid_file(args.value("pid-file"));
    let mut recording = Recording::open(args.value("record"));
    fixture_io::record_sent(args.value("record-sent"));
    let dialect = match args.value("dialect").unwrap_or("rfd") {
        "rfd" => &RFD,
        "underscore" => &UNDERSCORE,
        other => panic!("unknown --dialect {other}"),
    };
    let envelope_meta = args.value("envelope-meta").map(|meta| {
        serde_json::from_str::<Value>(meta).expect("--envelope-meta takes JSON");
        meta.to_string()
    });
    let mut proxy = Proxy {
        tag: args.value("tag").unwrap_or("test-proxy").to_string(),
        dialect,
        next_id: 0,
        forwarded: HashMap::new(),
        init_response_path: args.value("init-response").map(str::to_string),
        envelope_meta,
    };
    for line in fixture_io::stdin_lines() {
        recording.record(&line);
        match RawMessage::parse(&line) {
            Ok(message) => proxy.handle(&message, &line),
            Err(e) => fixture_io::send_line(jsonrpc::error_line(
                "null",
                -32700,
                &format!("parse error: {e}"),
            )),
        }
    }
    fixture_io::note_stdin_eof(args.value("eof-file"));
}

impl Proxy {
    fn handle(&mut self, message: &RawMessage, line: &str) {
        let Some(method) = message.method() else {
            self.relay_response(message, line);
            return;
        };
        if method == self.dialect.initialize {
            match message.id() {
                Some(id) => self.forward_initialize(id, message.params()),
                None => eprintln!("{}: {method} sent as a notification", self.tag),
            }
        } else if method == self.dialect.foreign_initialize {
            if let Some(id) = message.id() {
                fixture_io::send_line(jsonrpc::error_line(
                    id.get(),
                    -32601,
                    &format!("method not found: {method}"),
                ));
            }
        } else if method == self.dialect.successor {
            self.forward_to_predecessor(message);
        } else if method == "$/cancel_request" && message.id().is_none() {
            self.cancel(message.params(), Side::Predecessor);
        } else {
            self.forward_to_successor(&method, message);
        }
    }

    fn own_id(&mut self, forwarded: Forwarded) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.forwarded.insert(id, forwarded);
        id
    }

    /// `proxy/initialize` becomes `proxy/successor {method: "initialize"}`.
    fn forward_initialize(&mut self, id: &RawValue, params: Option<&RawValue>) {
        let own = self.own_id(Forwarded {
            origin_id: id.to_owned(),
            origin: Side::Predecessor,
            initialize: true,
        });
        let envelope = self.envelope("initialize", params);
        fixture_io::send_line(jsonrpc::request_line(
            &own.to_string(),
            self.dialect.successor,
            Some(&envelope),
        ));
    }

    /// A plain message came from the predecessor: wrap it for the successor.
    fn forward_to_successor(&mut self, method: &str, message: &RawMessage) {
        let envelope = self.envelope(method, message.params());
        let line = match message.id() {
            Some(id) => {
                let own = self.own_id(Forwarded {
                    origin_id: id.to_owned(),
                    origin: Side::Predecessor,
                    initialize: false,
                });
                jsonrpc::request_line(&own.to_string(), self.dialect.successor, Some(&envelope))
            }
            None => jsonrpc::notification_line(self.dialect.successor, Some(&envelope)),
        };
        fixture_io::send_line(line);
    }

    /// A wrapped message came from the successor: unwrap it for the predecessor.
    fn forward_to_predecessor(&mut self, message: &RawMessage) {
        let Some(envelope) = message
            .params()
            .and_then(|params| RawMessage::parse(params.get()).ok())
        else {
            eprintln!(
                "{}: {} without an object as params",
                self.tag, self.dialect.successor
            );
            return;
        };
        let Some(method) = envelope.method() else {
            eprintln!(
                "{}: {} without an inner method",
                self.tag, self.dialect.successor
            );
            return;
        };
        if method == "$/cancel_request" && message.id().is_none() {
            self.cancel(envelope.params(), Side::Successor);
            return;
        }
        let params = envelope.params().map(RawValue::get);
        let line = match message.id() {
            Some(id) => {
                let own = self.own_id(Forwarded {
                    origin_id: id.to_owned(),
                    origin: Side::Successor,
                    initialize: false,
                });
                jsonrpc::request_line(&own.to_string(), &method, params)
            }
            None => jsonrpc::notification_line(&method, params),
        };
        fixture_io::send_line(line);
    }

    /// A response to one of this proxy's requests goes back under the id it answers.
    fn relay_response(&mut self, message: &RawMessage, line: &str) {
        let own = message
            .id_value()
            .and_then(|id| id.as_u64())
            .and_then(|id| self.forwarded.remove(&id));
        let (Some(forwarded), Some((kind, outcome))) = (own, message.outcome()) else {
            eprintln!(
                "{}: a response that answers nothing we sent: {line}",
                self.tag
            );
            return;
        };
        if forwarded.initialize {
            fixture_io::write_file(self.init_response_path.as_deref(), line);
        }
        fixture_io::send_line(jsonrpc::response_line(
            forwarded.origin_id.get(),
            kind,
            outcome.get(),
        ));
    }

    /// A `$/cancel_request` that arrived from the side `from` (plain, or unwrapped). It names
    /// the conductor's id for a request on this connection, whichever side it came from.
    fn cancel(&mut self, params: Option<&RawValue>, from: Side) {
        let found = params
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|mut params| {
                let target = params.get("requestId")?.clone();
                let (own, forwarded) = self
                    .forwarded
                    .iter()
                    .find(|(_, forwarded)| jsonrpc::to_value(&forwarded.origin_id) == target)?;
                let toward_successor = forwarded.origin == Side::Predecessor;
                params["requestId"] = Value::from(*own);
                Some((params.to_string(), toward_successor))
            });
        let params = params.map(RawValue::get);
        let (line, wrap) = match (&found, from) {
            (Some((params, toward_successor)), _) => (
                params.as_str(),
                *toward_successor && self.dialect.successor == UNDERSCORE.successor,
            ),
            (None, Side::Predecessor) => (params.unwrap_or("null"), true),
            (None, Side::Successor) => (params.unwrap_or("null"), false),
        };
        let line = if wrap {
            let params = RawValue::from_string(line.to_string()).ok();
            let envelope = self.envelope("$/cancel_request", params.as_deref());
            jsonrpc::notification_line(self.dialect.successor, Some(&envelope))
        } else {
            jsonrpc::notification_line("$/cancel_request", Some(line))
        };
        fixture_io::send_line(line);
    }

    /// The params of a `proxy/successor` carrying `method` and `params`.
    fn envelope(&self, method: &str, params: Option<&RawValue>) -> String {
        let mut envelope = format!(r#"{{"method":{}"#, Value::from(method));
        if let Some(params) = params {
            envelope.push_str(r#","params":"#);
            envelope.push_str(params.get());
        }
        if let Some(meta) = &self.envelope_meta {
            envelope.push_str(r#","_meta":"#);
            envelope.push_str(meta);
        }
        envelope.push('}');
        envelope
    }
}
