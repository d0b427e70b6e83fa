//! `serve`'s transport: a chain's editor link for remote editors over ACP's Streamable HTTP
//! & WebSocket transport, on one `/acp` endpoint behind a gate, one connection at a time handed
//! to whoever runs its chain. Knows connections and envelopes, never chains or configs.
//!
//! | file | concept |
//! |---|---|
//! | `listener.rs` | the address, loopback or not; TLS through rustls |
//! | `auth.rs` | the bearer token and the allowed browser origins |
//! | `limits.rs` | connections, message size, idle time |
//! | `admission.rs` | a place per connection, up to the limit; draining; handing connections over |
//! | `in_flight.rs` | a connection's client requests not answered yet; their latency |
//! | `admin.rs` | `--admin-listen`: `/healthz`, `/readyz`, `/metrics`, `POST /drain`, `POST /reload` |
//! | `reload_asks.rs` | `POST /reload`'s ask, and the answer from whoever reloads |
//! | `client_link.rs` | the client's end of a chain's editor link |
//! | `mailbox.rs` | one stream's queue toward the client, and its one reader |
//! | `cursor.rs` | a message's position, the SSE `id` and `Last-Event-ID` |
//! | `replay.rs` | what a connection sent and keeps for resumes, bounded in bytes |
//! | `resume.rs` | a refused resume's `409` and the resume counters |
//! | `heard.rs` | when the client was last heard from, for the idle limit |
//! | `websocket.rs` | the WebSocket profile |
//! | `http_sse.rs` | the Streamable HTTP profile: POST, GET (SSE), DELETE |
//! | `http_connection.rs` | one HTTP connection's streams and routes; the registry |
//! | `ids.rs` | connection ids and keys from the kernel's random source |
//! | `error.rs` | why `serve` refuses to start |

mod admin;
mod admission;
mod auth;
mod client_link;
mod cursor;
mod error;
mod heard;
mod http_connection;
mod http_sse;
mod ids;
mod in_flight;
mod limits;
mod listener;
mod mailbox;
mod reload_asks;
mod replay;
mod resume;
mod websocket;
mod websocket_connection;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use axum::routing::get;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::protocol;
pub use admission::{Admission, Admitted, Arrivals, NewConnection, admission};
use auth::{Gate, Token};
pub use client_link::{FromClient, ToClient};
pub use error::{ListenError, ServeError};
use http_connection::Registry;
pub use ids::ConnectionId;
pub use limits::Limits;
pub use reload_asks::{ReloadAnswer, ReloadAsk, ReloadAsker, ReloadAsks, reload_asks};
pub use resume::RESUME_REFUSED;

/// What the handlers share.
#[derive(Clone)]
struct Served {
    admission: Admission,
    http: Arc<Registry>,
    websockets: Arc<websocket_connection::Registry>,
    limits: Limits,
    /// `--replica`: what every connection id starts with.
    replica: Option<Arc<str>>,
}

impl Served {
    fn new_id(&self) -> ConnectionId {
        ConnectionId::random_after(self.replica.as_deref())
    }

    /// Says, on the answer that opens a connection, that its streams can be resumed and
    /// for how much and how long (RFD "Durable & Resumable HTTP/WS Transport").
    fn advertise_resume(&self, headers: &mut HeaderMap) {
        let value = format!(
            "bytes={}, seconds={}",
            self.limits.resume_buffer,
            self.limits.resume_window.as_secs()
        );
        headers.insert(
            protocol::RESUMABLE,
            HeaderValue::from_str(&value).expect("digits are a valid header value"),
        );
    }
}

/// What the command line asks of the transport.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--listen`: `127.0.0.1:8080`, `[::1]:0`, `0.0.0.0:8443`.
    pub listen: String,
    /// `--token-file`: required unless every address is loopback.
    pub token_file: Option<PathBuf>,
    /// `--tls-cert` and `--tls-key`, both or neither.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--allow-origin`, each a browser origin.
    pub allow_origins: Vec<String>,
    /// `--admin-listen`: where `/healthz`, `/readyz`, `/metrics` and `/drain` are served, if
    /// anywhere; under the same token rule as `listen`.
    pub admin_listen: Option<String>,
    /// `--replica`: a name every connection id starts with (`NAME-...`), for a load balancer
    /// that routes by `Acp-Connection-Id`.
    pub replica: Option<String>,
    pub limits: Limits,
}

/// Everything `serve` checked before it starts anything.
pub struct Plan {
    addrs: Vec<SocketAddr>,
    admin_addrs: Option<Vec<SocketAddr>>,
    gate: Gate,
    tls: Option<Arc<rustls::ServerConfig>>,
    limits: Limits,
    replica: Option<Arc<str>>,
}

impl Plan {
    /// Checks `options`: the address resolves, a token guards an address that is not
    /// loopback, the token file, the origins and the TLS files can be used.
    pub fn new(options: &Options) -> Result<Plan, ServeError> {
        let addrs = listener::resolve(&options.listen)?;
        let token = options.token_file.as_deref().map(Token::read).transpose()?;
        if token.is_none() && !listener::all_loopback(&addrs) {
            return Err(ServeError::NotLoopbackWithoutToken(options.listen.clone()));
        }
        let admin_addrs = options
            .admin_listen
            .as_deref()
            .map(listener::resolve)
            .transpose()?;
        if let Some(admin) = &admin_addrs
            && token.is_none()
            && !listener::all_loopback(admin)
        {
            return Err(ServeError::AdminNotLoopbackWithoutToken(
                options.admin_listen.clone().unwrap_or_default(),
            ));
        }
        let origins = options
            .allow_origins
            .iter()
            .map(|origin| {
                HeaderValue::from_str(origin.trim_end_matches('/'))
                    .map_err(|_| ServeError::Origin(origin.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(replica) = &options.replica
            && !ConnectionId::valid_replica(replica)
        {
            return Err(ServeError::Replica(replica.clone()));
        }
        let tls = match &options.tls {
            Some((cert, key)) => Some(listener::tls_config(cert, key)?),
            None => None,
        };
        Ok(Plan {
            addrs,
            admin_addrs,
            gate: Gate { token, origins },
            tls,
            limits: options.limits,
            replica: options.replica.as_deref().map(Arc::from),
        })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }
}

/// The endpoint, listening: what it admits goes to `admission`'s [`Arrivals`].
pub struct Server {
    /// `http` or `https`.
    pub scheme: &'static str,
    pub local: SocketAddr,
    /// Where the admin endpoints are served (plain HTTP), with `--admin-listen`.
    pub admin: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    /// Binds `plan`'s addresses and serves the endpoint on the runtime's workers; `POST
    /// /reload` on the admin listener asks through `reloads`.
    pub async fn listen(
        plan: Plan,
        admission: Admission,
        reloads: ReloadAsker,
    ) -> Result<Server, ListenError> {
        let listener =
            TcpListener::bind(&plan.addrs[..])
                .await
                .map_err(|source| ListenError::Bind {
                    addrs: plan.addrs.clone(),
                    source,
                })?;
        let local = listener
            .local_addr()
            .expect("a bound listener has an address");
        let gate = Arc::new(plan.gate);
        let (stop, stop_rx) = watch::channel(false);
        let stopped = move || {
            let mut stop_rx = stop_rx.clone();
            async move {
                let _ = stop_rx.wait_for(|stop| *stop).await;
            }
        };
        let admin = match &plan.admin_addrs {
            Some(addrs) => {
                let admin_listener =
                    TcpListener::bind(&addrs[..])
                        .await
                        .map_err(|source| ListenError::Bind {
                            addrs: addrs.clone(),
                            source,
                        })?;
                let local = admin_listener
                    .local_addr()
                    .expect("a bound listener has an address");
                let operated = admin::Operated {
                    admission: admission.clone(),
                    reloads,
                };
                let app = admin::app(operated, gate.clone());
                let server = axum::serve(admin_listener, app).with_graceful_shutdown(stopped());
                acp_link::transport::spawn(server.into_future());
                Some(local)
            }
            None => None,
        };
        let served = Served {
            admission,
            http: Arc::new(Registry::default()),
            websockets: Arc::new(websocket_connection::Registry::default()),
            limits: plan.limits,
            replica: plan.replica.clone(),
        };
        let app = app(served, gate, plan.limits);
        let stopped = stopped();
        let (scheme, task) = match plan.tls {
            Some(tls) => {
                let listener =
                    listener::TlsListener::new(listener, tls).map_err(ListenError::Tls)?;
                let server = axum::serve(listener, app).with_graceful_shutdown(stopped);
                ("https", acp_link::transport::spawn(server.into_future()))
            }
            None => {
                let server =
                    axum::serve(listener.tap_io(no_delay), app).with_graceful_shutdown(stopped);
                ("http", acp_link::transport::spawn(server.into_future()))
            }
        };
        Ok(Server {
            scheme,
            local,
            admin,
            stop,
            task,
        })
    }

    /// Stops listening (on `/acp` and the admin listener); the connections open go on until
    /// their chains stop.
    pub fn stop_accepting(&self) {
        let _ = self.stop.send(true);
    }

    /// Waits up to `grace` for the open connections to close; false if some are still open.
    pub async fn closed(self, grace: std::time::Duration) -> bool {
        tokio::time::timeout(grace, self.task).await.is_ok()
    }
}

fn app(served: Served, gate: Arc<Gate>, limits: Limits) -> Router {
    Router::new()
        .route(
            protocol::ENDPOINT_PATH,
            get(on_get).post(on_post).delete(on_delete),
        )
        .with_state(served)
        .layer(DefaultBodyLimit::max(limits.max_message))
        .layer(axum::middleware::from_fn_with_state(gate, auth::admit))
}

async fn on_get(
    State(served): State<Served>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    headers: HeaderMap,
) -> Response {
    match upgrade {
        Ok(upgrade) => websocket::upgrade(&served, upgrade, &headers),
        Err(_) => http_sse::stream(&served, &headers).await,
    }
}

async fn on_post(State(served): State<Served>, headers: HeaderMap, body: Bytes) -> Response {
    http_sse::post(&served, &headers, body).await
}

async fn on_delete(State(served): State<Served>, headers: HeaderMap) -> Response {
    http_sse::delete(&served, &headers)
}

/// Small messages go out at once: a stream of updates is many small writes, and Nagle's
/// algorithm would hold each behind the ACK of the one before (delayed up to 40 ms).
fn no_delay(tcp: &mut tokio::net::TcpStream) {
    if let Err(error) = tcp.set_nodelay(true) {
        tracing::debug!("cannot set TCP_NODELAY: {error}");
    }
}
