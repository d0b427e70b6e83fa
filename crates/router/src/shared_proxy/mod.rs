//! A shared proxy's routes: which connection's chain each message of the one proxy instance
//! belongs to, and the rewrites of ids, sessions and cancels that keep the chains apart inside
//! it. Frames in, deliveries out; must not know how frames move or how the instance runs (the
//! conductor's hub carries the deliveries out and asks the supervisor for the instance).
//!
//! The rules, for a proxy that many connections' chains reach at once:
//! - **Requests to the proxy** go under ids of the hub's own (1, 2, 3, ...); the answer goes
//!   back to the connection that asked, under the id it asked with. A `$/cancel_request` names
//!   the hub's id for the request it cancels.
//! - **Sessions** are qualified: the proxy sees session `s` of connection 7 as `7/s`, in
//!   `sessionId` of params (of the wrapped message, for `proxy/successor`) and of results, so
//!   that two connections whose agents both number their sessions from 1 stay apart. What the
//!   proxy sends naming `7/s` goes to connection 7 as `s`.
//! - **MCP over ACP**: a `connectionId` the proxy answered `mcp/connect` with belongs to the
//!   connection that asked; what the proxy sends naming it goes there.
//! - **Requests that name neither** (`proxy/initialize`, `session/new`, `authenticate`,
//!   `mcp/connect`, ...) are set-up requests: one connection at a time has set-up requests in
//!   flight at the proxy, and whatever the proxy sends meanwhile that names neither a session
//!   nor an MCP connection (its own `initialize` or `session/new` to the successor) belongs to
//!   that connection. Other connections' set-up requests wait their turn, each connection's
//!   requests in order; with a single connection attached, everything is that connection's.
//! - A request the proxy sends that belongs to no attached connection is answered with an
//!   error, so the proxy hears back once; a notification like that is dropped with a warning.

use std::collections::{HashMap, HashSet, VecDeque};

use acp_wire::error_code::REQUEST_CANCELLED;
use acp_wire::splice::set_path;
use acp_wire::{Envelope, IdKey, Invalid, Outcome, OutgoingRequests, RawValue, Shape, encode};
use bytes::Bytes;

use call::{Call, error, json, member_raw, member_str, raw, response};

mod call;
#[cfg(test)]
mod tests;

/// One connection's chain attached to the shared proxy, numbered by the hub.
pub type Connection = u64;

const CANCEL_REQUEST: &str = "$/cancel_request";
const SESSION_ID: &str = "sessionId";
const MCP_CONNECTION_ID: &str = "connectionId";

/// Where a frame goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    ToProxy(Bytes),
    ToConnection(Connection, Bytes),
}

/// A request a connection sent to the proxy, under the hub's id for it.
#[derive(Debug)]
struct Forwarded {
    connection: Connection,
    /// Its id as the connection sent it, JSON text.
    id: String,
    key: IdKey,
    setup: bool,
}

/// A request the proxy sent to a connection, by its id.
#[derive(Debug)]
struct Asked {
    connection: Connection,
    /// Its id as the proxy sent it, JSON text.
    id: String,
}

#[derive(Debug, Default)]
pub struct Routes {
    /// The proxy's name, for the errors it is sent.
    name: String,
    attached: HashSet<Connection>,
    forwarded: OutgoingRequests<Forwarded>,
    asked: HashMap<IdKey, Asked>,
    mcp: HashMap<String, Connection>,
    /// The connection whose set-up requests are in flight, and how many.
    setup: Option<(Connection, usize)>,
    /// Requests waiting for their turn, in arrival order.
    waiting: VecDeque<(Connection, Bytes)>,
}

impl Routes {
    pub fn new(name: &str) -> Routes {
        Routes {
            name: name.to_owned(),
            ..Routes::default()
        }
    }

    pub fn attach(&mut self, connection: Connection) {
        self.attached.insert(connection);
    }

    pub fn attached(&self) -> usize {
        self.attached.len()
    }

    /// A connection's chain left: the proxy's requests to it are answered with an error,
    /// its waiting requests dropped, and its turn at set-up passed on.
    pub fn detach(&mut self, connection: Connection, out: &mut Vec<Delivery>) {
        if !self.attached.remove(&connection) {
            return;
        }
        self.waiting.retain(|(c, _)| *c != connection);
        let mut unanswered: Vec<Asked> = Vec::new();
        self.asked.retain(|_, asked| {
            if asked.connection == connection {
                unanswered.push(Asked {
                    connection,
                    id: std::mem::take(&mut asked.id),
                });
                false
            } else {
                true
            }
        });
        for asked in unanswered {
            let message = format!(
                "the connection this request was for has closed (shared proxy `{}`)",
                self.name
            );
            out.push(Delivery::ToProxy(error(&asked.id, &message)));
        }
        self.forwarded.take_where(|f| f.connection == connection);
        self.mcp.retain(|_, c| *c != connection);
        if matches!(self.setup, Some((owner, _)) if owner == connection) {
            self.setup = None;
            self.drain(out);
        }
    }

    /// A frame from `connection`'s chain, on its way to the proxy.
    pub fn route_from_connection(
        &mut self,
        connection: Connection,
        frame: Bytes,
        out: &mut Vec<Delivery>,
    ) {
        if !self.attached.contains(&connection) {
            return;
        }
        // A request behind this connection's waiting ones waits too (read only then: the
        // usual frame is parsed once, by `admit`).
        let behind = self.waiting.iter().any(|(c, _)| *c == connection)
            && matches!(acp_wire::parse(&frame), Ok(Envelope::Request { .. }));
        if behind || !self.admit(connection, &frame, out) {
            self.waiting.push_back((connection, frame));
        }
    }

    /// Sends `frame` on to the proxy, rewritten; false (and nothing sent) when it is a
    /// set-up request and another connection's set-up is in flight.
    fn admit(&mut self, connection: Connection, frame: &Bytes, out: &mut Vec<Delivery>) -> bool {
        let envelope = match acp_wire::parse(frame) {
            Ok(envelope) => envelope,
            // The chain's router sends only what it validated; pass on whatever this is.
            Err(_) => {
                out.push(Delivery::ToProxy(frame.clone()));
                return true;
            }
        };
        match envelope {
            Envelope::Request { id, method, params } => {
                let call = Call::of(method, params);
                let session = call.member(SESSION_ID);
                let setup = session.is_none() && call.member(MCP_CONNECTION_ID).is_none();
                if setup {
                    match &mut self.setup {
                        Some((owner, _)) if *owner != connection => return false,
                        Some((_, count)) => *count += 1,
                        None => self.setup = Some((connection, 1)),
                    }
                }
                let hub_id = self.forwarded.register(Forwarded {
                    connection,
                    id: id.get().to_owned(),
                    key: IdKey::of(id),
                    setup,
                });
                let scoped = session.map(|s| call.with_session(&qualify(connection, &s)));
                let written = call.write(Some(&hub_id.to_string()), scoped.as_deref());
                out.push(Delivery::ToProxy(written));
            }
            Envelope::Notification { method, params } if method == CANCEL_REQUEST => {
                let Some(key) = member_raw(params, "requestId").map(IdKey::of) else {
                    return true;
                };
                let hub_id = self
                    .forwarded
                    .find(|f| f.connection == connection && f.key == key);
                if let Some(hub_id) = hub_id {
                    let params = params.expect("has a requestId");
                    let rewritten = set_path(params, &["requestId"], &hub_id.to_string());
                    let rewritten = raw(rewritten);
                    let call = Call::of(method, Some(&rewritten));
                    out.push(Delivery::ToProxy(call.write(None, None)));
                } else if let Some(id) = self.unqueue(connection, &key) {
                    // Still waiting for its turn: it never reaches the proxy.
                    let mut answer = Vec::new();
                    encode::error_response(
                        &mut answer,
                        &id,
                        REQUEST_CANCELLED,
                        "cancelled while it waited for its turn at the shared proxy",
                        None,
                    );
                    out.push(Delivery::ToConnection(connection, answer.into()));
                }
                // Otherwise a request already answered, or never sent: nothing to cancel.
            }
            Envelope::Notification { method, params } => {
                let call = Call::of(method, params);
                match call.member(SESSION_ID) {
                    Some(session) => {
                        let scoped = call.with_session(&qualify(connection, &session));
                        out.push(Delivery::ToProxy(call.write(None, Some(&scoped))));
                    }
                    None => out.push(Delivery::ToProxy(frame.clone())),
                }
            }
            Envelope::Response { id, outcome } => {
                match self.asked.get(&IdKey::of(id)) {
                    Some(asked) if asked.connection == connection => {
                        self.asked.remove(&IdKey::of(id));
                    }
                    // Not a request the proxy is waiting on from this connection.
                    _ => return true,
                }
                let session = match outcome {
                    Outcome::Result(result) => member_str(Some(result), SESSION_ID),
                    Outcome::Error(_) => None,
                };
                match (session, outcome) {
                    (Some(session), Outcome::Result(result)) => {
                        let value = json(&qualify(connection, &session));
                        let result = raw(set_path(result, &[SESSION_ID], &value));
                        out.push(Delivery::ToProxy(response(
                            frame,
                            id,
                            id.get(),
                            outcome,
                            Some(&result),
                        )));
                    }
                    _ => out.push(Delivery::ToProxy(frame.clone())),
                }
            }
        }
        true
    }

    /// A frame from the proxy, on its way to the connection it belongs to.
    pub fn route_from_proxy(&mut self, frame: Bytes, out: &mut Vec<Delivery>) {
        let envelope = match acp_wire::parse(&frame) {
            Ok(envelope) => envelope,
            Err(invalid) => return self.refuse_invalid(&invalid, out),
        };
        match envelope {
            Envelope::Response { id, outcome } => {
                let Some(forwarded) = self.forwarded.complete_raw(id) else {
                    tracing::warn!(
                        component = %self.name,
                        id = id.get(),
                        "the shared proxy answered a request it was not sent, or one whose \
                         connection has closed; dropped"
                    );
                    return;
                };
                let connection = forwarded.connection;
                let result = match outcome {
                    Outcome::Result(result) => Some(result),
                    Outcome::Error(_) => None,
                };
                if let Some(mcp) = member_str(result, MCP_CONNECTION_ID) {
                    self.mcp.insert(mcp, connection);
                }
                let unqualified = member_str(result, SESSION_ID)
                    .and_then(|s| strip_own(connection, &s).map(str::to_owned));
                let rewritten = match (unqualified, result) {
                    (Some(session), Some(result)) => {
                        Some(raw(set_path(result, &[SESSION_ID], &json(&session))))
                    }
                    _ => None,
                };
                let written = response(&frame, id, &forwarded.id, outcome, rewritten.as_deref());
                out.push(Delivery::ToConnection(connection, written));
                if forwarded.setup {
                    self.setup_done(connection, out);
                }
            }
            Envelope::Request { id, method, params } => {
                let call = Call::of(method, params);
                match self.owner(&call) {
                    Ok((connection, scoped)) => {
                        self.asked.insert(
                            IdKey::of(id),
                            Asked {
                                connection,
                                id: id.get().to_owned(),
                            },
                        );
                        let written = match scoped {
                            Some(scoped) => call.write(Some(id.get()), Some(&scoped)),
                            None => frame.clone(),
                        };
                        out.push(Delivery::ToConnection(connection, written));
                    }
                    Err(why) => {
                        tracing::warn!(component = %self.name, method, "{why}; answered with an error");
                        let message = format!("shared proxy `{}`: this request {why}", self.name);
                        out.push(Delivery::ToProxy(error(id.get(), &message)));
                    }
                }
            }
            Envelope::Notification { method, params } if method == CANCEL_REQUEST => {
                let asked =
                    member_raw(params, "requestId").and_then(|id| self.asked.get(&IdKey::of(id)));
                if let Some(asked) = asked {
                    out.push(Delivery::ToConnection(asked.connection, frame.clone()));
                }
            }
            Envelope::Notification { method, params } => {
                let call = Call::of(method, params);
                match self.owner(&call) {
                    Ok((connection, scoped)) => {
                        let written = match scoped {
                            Some(scoped) => call.write(None, Some(&scoped)),
                            None => frame.clone(),
                        };
                        out.push(Delivery::ToConnection(connection, written));
                    }
                    Err(why) => {
                        tracing::warn!(component = %self.name, method, "a notification that {why}; dropped");
                    }
                }
            }
        }
    }

    /// The connection a call from the proxy belongs to, and its scoped params with the
    /// session unqualified when it names one.
    fn owner(&self, call: &Call<'_>) -> Result<(Connection, Option<Box<RawValue>>), Unowned> {
        if let Some(session) = call.member(SESSION_ID) {
            return match unqualify(&session) {
                Some((connection, plain)) if self.attached.contains(&connection) => {
                    Ok((connection, Some(call.with_session(plain))))
                }
                _ => Err(Unowned::UnknownSession(session.to_string())),
            };
        }
        if let Some(connection) = call
            .member(MCP_CONNECTION_ID)
            .and_then(|mcp| self.mcp.get(&mcp))
        {
            return Ok((*connection, None));
        }
        if let Some((owner, _)) = self.setup {
            return Ok((owner, None));
        }
        if self.attached.len() == 1
            && let Some(only) = self.attached.iter().next()
        {
            return Ok((*only, None));
        }
        Err(Unowned::NamesNoOwner)
    }

    /// One of `connection`'s set-up requests was answered.
    fn setup_done(&mut self, connection: Connection, out: &mut Vec<Delivery>) {
        if let Some((owner, count)) = &mut self.setup
            && *owner == connection
        {
            *count -= 1;
            if *count == 0 {
                self.setup = None;
                self.drain(out);
            }
        }
    }

    /// Takes `connection`'s waiting request `key` out of the queue; its id, if it was there.
    fn unqueue(&mut self, connection: Connection, key: &IdKey) -> Option<String> {
        let at = self.waiting.iter().position(|(c, frame)| {
            *c == connection
                && matches!(acp_wire::parse(frame), Ok(Envelope::Request { id, .. }) if IdKey::of(id) == *key)
        })?;
        let (_, frame) = self.waiting.remove(at)?;
        match acp_wire::parse(&frame) {
            Ok(Envelope::Request { id, .. }) => Some(id.get().to_owned()),
            _ => None,
        }
    }

    /// Sends on what waited and may go now, keeping each connection's requests in order.
    fn drain(&mut self, out: &mut Vec<Delivery>) {
        let mut blocked = HashSet::new();
        for (connection, frame) in std::mem::take(&mut self.waiting) {
            if blocked.contains(&connection) || !self.admit(connection, &frame, out) {
                blocked.insert(connection);
                self.waiting.push_back((connection, frame));
            }
        }
    }

    /// The proxy wrote something that is not JSON-RPC: a call is answered with the error
    /// (so that it hears back once), anything else dropped.
    fn refuse_invalid(&self, invalid: &Invalid<'_>, out: &mut Vec<Delivery>) {
        tracing::warn!(component = %self.name, "the shared proxy sent an invalid message: {invalid}");
        if invalid.shape() == Shape::Call {
            let mut written = Vec::new();
            encode::error_response(
                &mut written,
                invalid.reply_id(),
                invalid.code(),
                &invalid.to_string(),
                None,
            );
            out.push(Delivery::ToProxy(written.into()));
        }
    }
}

/// How the proxy sees `session` of `connection`.
fn qualify(connection: Connection, session: &str) -> String {
    format!("{connection}/{session}")
}

/// The connection and its own session id, from what the proxy sees.
fn unqualify(seen: &str) -> Option<(Connection, &str)> {
    let (connection, session) = seen.split_once('/')?;
    Some((connection.parse().ok()?, session))
}

/// `seen` without `connection`'s qualifier, if it carries it.
fn strip_own(connection: Connection, seen: &str) -> Option<&str> {
    match unqualify(seen) {
        Some((c, session)) if c == connection => Some(session),
        _ => None,
    }
}

/// Why a call from the proxy belongs to no attached connection; worded to follow "this
/// request" or "a notification that".
#[derive(Debug, thiserror::Error)]
enum Unowned {
    #[error("names session {0:?}, which is no open session of a connection")]
    UnknownSession(String),
    #[error(
        "names no session or MCP connection while no connection is setting up, so it belongs \
         to none"
    )]
    NamesNoOwner,
}
