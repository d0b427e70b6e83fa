//! The HTTP bridge: proxy-provided MCP servers served to the agent over MCP's Streamable HTTP
//! transport on a loopback port, without a process per server. Each MCP session becomes a
//! link the router relays like a stdio shim's; this module only moves messages and checks
//! who may ask. It knows no routing and nothing of what the messages mean beyond their ids.
//!
//! A session setup's servers share a URL token and a secret (`Authorization: Bearer`); each
//! server has its own URL, `/mcp/<token>/<index>`. A request without the secret gets 401
//! and reaches nothing. A client of the stateless MCP revision (2026-07-28) sends no
//! `initialize` and has no `Mcp-Session-Id`: each of its requests is an MCP session of its
//! own, which ends with its answer (or when the client stops waiting for it).

mod secret;
mod session;

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use futures_util::stream;
use tokio::sync::mpsc;

use acp_link::event::Event;
use acp_link::{LinkDone, Links};
use acp_router::HttpBridgeSession;
use session::{Answer, McpSession, PostError, Posted};

const SESSION_HEADER: &str = "mcp-session-id";
/// SSE comments on an idle GET stream, so that a vanished client is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The listener and every session setup it serves; the server task ends on drop.
#[derive(Debug)]
pub struct McpHttpBridge {
    address: SocketAddr,
    shared: Arc<Shared>,
    serve: tokio::task::JoinHandle<()>,
}

#[derive(Debug)]
struct Shared {
    links: Links,
    events: mpsc::Sender<Event>,
    registry: Mutex<Registry>,
}

#[derive(Debug, Default)]
struct Registry {
    /// URL token → the session setup's secret and server ids.
    setups: HashMap<String, Setup>,
    /// `Mcp-Session-Id` → the MCP session.
    sessions: HashMap<String, Arc<McpSession>>,
    /// The links of the sessions, to let their last writes finish at the end.
    done: Vec<LinkDone>,
    /// The run is ending: no new session.
    ended: bool,
}

#[derive(Debug)]
struct Setup {
    secret: secret::Secret,
    servers: Vec<String>,
}

impl McpHttpBridge {
    /// Binds a loopback port and starts serving. Must be called inside the runtime.
    pub fn open(links: Links, events: mpsc::Sender<Event>) -> std::io::Result<McpHttpBridge> {
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        // A response is written as headers and body: without TCP_NODELAY the body waits for
        // the client's delayed acknowledgement of the headers.
        let listener = tokio::net::TcpListener::from_std(listener)?.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "MCP HTTP bridge: cannot set TCP_NODELAY");
            }
        });
        let shared = Arc::new(Shared {
            links: links.held(),
            events,
            registry: Mutex::default(),
        });
        let app = axum::Router::new()
            .route("/mcp/{token}/{index}", axum::routing::any(handle))
            .with_state(shared.clone());
        let serve = acp_link::transport::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "MCP HTTP bridge: the listener failed");
            }
        });
        tracing::debug!(%address, "MCP HTTP bridge listening");
        Ok(McpHttpBridge {
            address,
            shared,
            serve,
        })
    }

    /// Serves `server_ids` (one session setup's) at URLs of their own, behind a fresh secret.
    pub fn serve_setup(&self, server_ids: &[String]) -> std::io::Result<HttpBridgeSession> {
        let token = secret::random_hex(16)?;
        let secret = secret::random_hex(32)?;
        let urls = (0..server_ids.len())
            .map(|n| format!("http://{}/mcp/{token}/{n}", self.address))
            .collect();
        self.shared.registry().setups.insert(
            token.clone(),
            Setup {
                secret: secret::Secret::new(&secret),
                servers: server_ids.to_vec(),
            },
        );
        Ok(HttpBridgeSession {
            key: token,
            urls,
            headers: vec![("Authorization".to_string(), format!("Bearer {secret}"))],
        })
    }

    /// Ends the servers of the setup under URL token `key`: its URLs answer 404 from now on,
    /// and its MCP sessions end (their links close, so the router winds them up at the
    /// providers as it does a shim that left).
    pub fn close_setup(&self, key: &str) {
        let ended: Vec<Arc<McpSession>> = {
            let mut registry = self.shared.registry();
            registry.setups.remove(key);
            let ids: Vec<String> = registry
                .sessions
                .iter()
                .filter(|(_, session)| session.token == key)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| registry.sessions.remove(id))
                .collect()
        };
        tracing::debug!(
            sessions = ended.len(),
            "MCP HTTP bridge: a session's servers ended"
        );
        for session in ended {
            session.end();
        }
    }

    /// A handle that ends every session, for when the components have stopped.
    pub fn sessions(&self) -> EndSessions {
        EndSessions(self.shared.clone())
    }

    /// Waits until every session's link has delivered what was queued and closed.
    pub async fn sessions_written(&self) {
        let done: Vec<LinkDone> = self.shared.registry().done.clone();
        for done in done {
            done.writer_finished().await;
        }
    }
}

impl Drop for McpHttpBridge {
    fn drop(&mut self) {
        self.serve.abort();
        EndSessions(self.shared.clone()).end_all();
    }
}

/// Ends every MCP session of the bridge and refuses new ones.
#[derive(Debug, Clone)]
pub struct EndSessions(Arc<Shared>);

impl EndSessions {
    pub fn end_all(&self) {
        let sessions: Vec<Arc<McpSession>> = {
            let mut registry = self.0.registry();
            registry.ended = true;
            registry.sessions.drain().map(|(_, s)| s).collect()
        };
        for session in sessions {
            session.end();
        }
    }
}

impl Shared {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, format!("{why}\n")).into_response()
}

fn header_text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// Every request to `/mcp/<token>/<index>`: the secret first, then the transport's methods.
async fn handle(
    State(shared): State<Arc<Shared>>,
    Path((token, index)): Path<(String, usize)>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let server_id = {
        let registry = shared.registry();
        let Some(setup) = registry.setups.get(&token) else {
            return refuse(StatusCode::NOT_FOUND, "no MCP server at this URL");
        };
        let presented = header_text(&headers, header::AUTHORIZATION)
            .and_then(|value| value.strip_prefix("Bearer "))
            .unwrap_or("");
        if !setup.secret.accepts(presented) {
            drop(registry);
            tracing::warn!(%method, "MCP HTTP bridge: a request without the session's secret; refused");
            let mut response = refuse(
                StatusCode::UNAUTHORIZED,
                "the session's secret is missing or wrong",
            );
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
        let Some(server_id) = setup.servers.get(index).cloned() else {
            return refuse(StatusCode::NOT_FOUND, "no MCP server at this URL");
        };
        server_id
    };
    // A browser page could only reach a loopback port by DNS rebinding; agents' MCP clients
    // send no Origin.
    if headers.contains_key(header::ORIGIN) {
        return refuse(
            StatusCode::FORBIDDEN,
            "requests from browser pages are refused",
        );
    }
    let session = match header_text(&headers, SESSION_HEADER) {
        None => None,
        Some(id) => {
            let mut registry = shared.registry();
            match registry.sessions.get(id).cloned() {
                Some(session) if session.has_ended() => {
                    registry.sessions.remove(id);
                    return refuse(StatusCode::NOT_FOUND, "the MCP session has ended");
                }
                Some(session) if session.token == token && session.index == index => {
                    Some((id.to_string(), session))
                }
                _ => return refuse(StatusCode::NOT_FOUND, "no such MCP session"),
            }
        }
    };
    match method {
        Method::POST => post(&shared, token, index, &server_id, session, &headers, body).await,
        Method::GET => match session {
            Some((_, session)) => server_stream(&session, &headers),
            None => refuse(StatusCode::BAD_REQUEST, "Mcp-Session-Id is required"),
        },
        Method::DELETE => match session {
            Some((id, session)) => {
                shared.registry().sessions.remove(&id);
                session.end();
                StatusCode::OK.into_response()
            }
            None => refuse(StatusCode::BAD_REQUEST, "Mcp-Session-Id is required"),
        },
        _ => {
            let mut response = refuse(StatusCode::METHOD_NOT_ALLOWED, "POST, GET or DELETE");
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            response
        }
    }
}

/// POST: one JSON-RPC message. A request is answered with its JSON response; anything else
/// with 202. The `initialize` without a session opens one.
async fn post(
    shared: &Shared,
    token: String,
    index: usize,
    server_id: &str,
    session: Option<(String, Arc<McpSession>)>,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let json = header_text(headers, header::CONTENT_TYPE)
        .is_some_and(|kind| kind.trim_start().starts_with("application/json"));
    if !json {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let posted = Posted::read(&body);
    let (session_id, session, opened) = match (session, &posted) {
        (Some((id, session)), _) => (id, session, false),
        (None, Posted::Request { id, method }) if method != "initialize" => {
            return stateless_post(shared, token, index, server_id, body, id).await;
        }
        (None, Posted::Request { method, .. }) if method == "initialize" => {
            match open_session(shared, token, index, server_id).await {
                Some((id, session)) => (id, session, true),
                None => {
                    return refuse(StatusCode::SERVICE_UNAVAILABLE, "the conductor is stopping");
                }
            }
        }
        (None, _) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "Mcp-Session-Id is required after initialize",
            );
        }
    };
    let request_id = match &posted {
        Posted::Request { id, .. } => Some(id.as_str()),
        Posted::Other => None,
        Posted::Invalid => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "the body must be one JSON-RPC message",
            );
        }
    };
    let answer = match session.post(body, request_id) {
        Ok(None) => return StatusCode::ACCEPTED.into_response(),
        Ok(Some(answer)) => answer,
        Err(PostError::IdInFlight) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "a request with this id is in flight",
            );
        }
        Err(PostError::Ended) => return refuse(StatusCode::NOT_FOUND, "the MCP session has ended"),
    };
    match answer.await.unwrap_or(Answer::Ended) {
        Answer::Message(message) => {
            let mut response = (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                message,
            )
                .into_response();
            if opened && let Ok(value) = HeaderValue::from_str(&session_id) {
                response.headers_mut().insert(SESSION_HEADER, value);
            }
            response
        }
        Answer::Refused(reason) => {
            if opened {
                shared.registry().sessions.remove(&session_id);
            }
            refuse(StatusCode::SERVICE_UNAVAILABLE, &reason)
        }
        Answer::Ended => refuse(StatusCode::NOT_FOUND, "the MCP session has ended"),
    }
}

/// A request without `Mcp-Session-Id` (a client of the stateless revision): answered on an
/// MCP session of its own, ended once it is answered or the client has gone.
async fn stateless_post(
    shared: &Shared,
    token: String,
    index: usize,
    server_id: &str,
    body: Bytes,
    request_id: &str,
) -> Response {
    let Some((session_id, session)) = open_session(shared, token, index, server_id).await else {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "the conductor is stopping");
    };
    // Ends the session however this request ends, a client that hung up included: the
    // router then cancels the request at its provider.
    let _ending = EndsWith {
        shared,
        id: session_id,
        session: session.clone(),
    };
    let answer = match session.post(body, Some(request_id)) {
        Ok(Some(answer)) => answer,
        Ok(None) | Err(_) => return refuse(StatusCode::NOT_FOUND, "the MCP session has ended"),
    };
    match answer.await.unwrap_or(Answer::Ended) {
        Answer::Message(message) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            message,
        )
            .into_response(),
        Answer::Refused(reason) => refuse(StatusCode::SERVICE_UNAVAILABLE, &reason),
        Answer::Ended => refuse(StatusCode::NOT_FOUND, "the MCP session has ended"),
    }
}

/// Ends a one-request MCP session when dropped.
struct EndsWith<'a> {
    shared: &'a Shared,
    id: String,
    session: Arc<McpSession>,
}

impl Drop for EndsWith<'_> {
    fn drop(&mut self) {
        self.shared.registry().sessions.remove(&self.id);
        self.session.end();
    }
}

async fn open_session(
    shared: &Shared,
    token: String,
    index: usize,
    server_id: &str,
) -> Option<(String, Arc<McpSession>)> {
    if shared.registry().ended {
        return None;
    }
    let id = secret::random_hex(16).ok()?;
    let (session, done) =
        McpSession::open(&shared.links, &shared.events, token, index, server_id).await?;
    let mut registry = shared.registry();
    registry.done.retain(|done| !done.writer_has_finished());
    registry.done.push(done);
    if registry.ended {
        drop(registry);
        session.end();
        return None;
    }
    registry.sessions.insert(id.clone(), session.clone());
    Some((id, session))
}

/// GET: the stream of what the server sends on its own (requests to the client,
/// notifications), as SSE.
fn server_stream(session: &McpSession, headers: &HeaderMap) -> Response {
    let accepts_sse = header_text(headers, header::ACCEPT)
        .is_some_and(|accept| accept.contains("text/event-stream"));
    if !accepts_sse {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must include text/event-stream",
        );
    }
    let Some(messages) = session.open_stream() else {
        return refuse(
            StatusCode::CONFLICT,
            "this MCP session's stream is open already",
        );
    };
    let events = stream::unfold(messages, |mut messages| async move {
        let message = messages.recv().await?;
        let event = SseEvent::default().data(String::from_utf8_lossy(&message));
        Some((Ok::<_, std::convert::Infallible>(event), messages))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}
