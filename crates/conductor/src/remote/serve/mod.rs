//! `acp-conductor serve`: the chain of a config served to remote editors over ACP's Streamable
//! HTTP & WebSocket transport, on one `/acp` endpoint, with one chain per connection.
//!
//! | file | concept |
//! |---|---|
//! | `listener.rs` | the address, loopback or not; TLS through rustls |
//! | `auth.rs` | the bearer token and the allowed browser origins |
//! | `limits.rs` | connections, message size, idle time |
//! | `chains.rs` | a chain per connection, on the main thread; stopping them |
//! | `client_link.rs` | the client's end of a chain's editor link; when it was last heard |
//! | `websocket.rs` | the WebSocket profile |
//! | `http_sse.rs` | the Streamable HTTP profile: POST, GET (SSE), DELETE |
//! | `http_connection.rs` | one HTTP connection's streams and routes; the registry |
//! | `ids.rs` | connection ids and keys from the kernel's random source |
//! | `error.rs` | why `serve` refuses to start |

mod auth;
mod chains;
mod client_link;
mod error;
mod http_connection;
mod http_sse;
mod ids;
mod limits;
mod listener;
mod websocket;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

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

use crate::config::{self, Mode};
use crate::remote::protocol;
use crate::signals::StopSignals;
use acp_router::topology::ChainMode;
use auth::{Gate, Token};
use chains::Chains;
pub use error::ServeError;
use http_connection::Registry;
pub use limits::LimitArgs;
use limits::Limits;

/// Exit status for a configuration that cannot be used (sysexits EX_CONFIG).
const EX_CONFIG: u8 = 78;
/// After a signal, how long running chains get to stop before `serve` exits anyway.
const STOP_GRACE: Duration = Duration::from_secs(10);

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[arg(long, env = "ACP_CONDUCTOR_CONFIG", value_name = "FILE")]
    config: PathBuf,
    /// Address to listen on: `127.0.0.1:8080`, `[::1]:0`, `0.0.0.0:8443`. An address that
    /// is not loopback requires --token-file.
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// File holding the bearer token every request must carry (`Authorization: Bearer
    /// <token>`). Required unless the address is loopback; never give the token itself.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// TLS certificate chain (PEM); with --tls-key, serve https:// and wss://.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM) for --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A browser origin allowed to connect (`https://app.example`); repeat for more.
    /// Requests with any other `Origin` header get 403; requests without one pass.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// What the handlers share.
#[derive(Clone)]
struct Served {
    chains: Chains,
    http: Arc<Registry>,
    limits: Limits,
}

/// Everything `serve` checked before it starts anything.
struct Plan {
    addrs: Vec<SocketAddr>,
    gate: Gate,
    tls: Option<Arc<rustls::ServerConfig>>,
    limits: Limits,
}

fn plan(args: &ServeArgs) -> Result<Plan, ServeError> {
    let addrs = listener::resolve(&args.listen)?;
    let token = args.token_file.as_deref().map(Token::read).transpose()?;
    if token.is_none() && !listener::all_loopback(&addrs) {
        return Err(ServeError::NotLoopbackWithoutToken(args.listen.clone()));
    }
    let origins = args
        .allow_origins
        .iter()
        .map(|origin| {
            HeaderValue::from_str(origin.trim_end_matches('/'))
                .map_err(|_| ServeError::Origin(origin.clone()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(listener::tls_config(cert, key)?),
        _ => None,
    };
    Ok(Plan {
        addrs,
        gate: Gate { token, origins },
        tls,
        limits: Limits::from(&args.limits),
    })
}

/// The `serve` command.
pub fn main(args: ServeArgs, log: Option<&str>) -> ExitCode {
    crate::logging::init(log, "info");
    let config = match config::load(&args.config) {
        Ok(config) => config,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::from(EX_CONFIG);
        }
    };
    let plan = match plan(&args) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("acp-conductor serve: {error}");
            return ExitCode::from(EX_CONFIG);
        }
    };
    let mode = match config.conductor.mode {
        Mode::Proxy => ChainMode::Proxy,
        Mode::Agent => ChainMode::Agent,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    // Chains run on this (the main) thread, inside the local set; see `chains`.
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, serve(config, mode, plan))
}

async fn serve(config: config::Config, mode: ChainMode, plan: Plan) -> ExitCode {
    let listener = match TcpListener::bind(&plan.addrs[..]).await {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!("cannot listen on {:?}: {error}", plan.addrs);
            return ExitCode::FAILURE;
        }
    };
    let local = listener
        .local_addr()
        .expect("a bound listener has an address");
    let file = config.file.clone();
    let (chains, runner) = Chains::new(config, mode, plan.limits.max_connections);
    let served = Served {
        chains,
        http: Arc::new(Registry::default()),
        limits: plan.limits,
    };
    let app = app(served, plan.gate, plan.limits);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = async move {
        let mut stop_rx = stop_rx;
        let _ = stop_rx.wait_for(|stop| *stop).await;
    };
    let (scheme, server) = match plan.tls {
        Some(tls) => match listener::TlsListener::new(listener, tls) {
            Ok(listener) => (
                "https",
                tokio::spawn(
                    axum::serve(listener, app)
                        .with_graceful_shutdown(stopped)
                        .into_future(),
                ),
            ),
            Err(error) => {
                tracing::error!("cannot listen: {error}");
                return ExitCode::FAILURE;
            }
        },
        None => (
            "http",
            tokio::spawn(
                axum::serve(listener.tap_io(no_delay), app)
                    .with_graceful_shutdown(stopped)
                    .into_future(),
            ),
        ),
    };
    tracing::info!(
        "serving the chain of {} on {scheme}://{local}{}",
        file.display(),
        protocol::ENDPOINT_PATH
    );
    let signalled = async move {
        let name = stop_signal().await;
        tracing::info!("{name}: no new connections; stopping the chains");
        let _ = stop_tx.send(true);
    };
    runner.run(signalled, STOP_GRACE).await;
    // Every chain has stopped, so every stream has ended; what is left are idle sockets.
    if tokio::time::timeout(STOP_GRACE, server).await.is_err() {
        tracing::warn!("connections still open after the chains stopped; exiting anyway");
    }
    ExitCode::SUCCESS
}

fn app(served: Served, gate: Gate, limits: Limits) -> Router {
    Router::new()
        .route(
            protocol::ENDPOINT_PATH,
            get(on_get).post(on_post).delete(on_delete),
        )
        .with_state(served)
        .layer(DefaultBodyLimit::max(limits.max_message))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(gate),
            auth::admit,
        ))
}

async fn on_get(
    State(served): State<Served>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    headers: HeaderMap,
) -> Response {
    match upgrade {
        Ok(upgrade) => websocket::upgrade(&served, upgrade),
        Err(_) => http_sse::stream(&served, &headers).await,
    }
}

async fn on_post(State(served): State<Served>, headers: HeaderMap, body: Bytes) -> Response {
    http_sse::post(&served, &headers, body).await
}

async fn on_delete(State(served): State<Served>, headers: HeaderMap) -> Response {
    http_sse::delete(&served, &headers)
}

/// The first of SIGTERM, SIGINT, SIGHUP. Each chain hears it too and stops on its own.
async fn stop_signal() -> &'static str {
    match StopSignals::install() {
        Some(mut signals) => signals.next().await,
        None => std::future::pending().await,
    }
}

/// Small messages go out at once: a stream of updates is many small writes, and Nagle's
/// algorithm would hold each behind the ACK of the one before (delayed up to 40 ms).
fn no_delay(tcp: &mut tokio::net::TcpStream) {
    if let Err(error) = tcp.set_nodelay(true) {
        tracing::debug!("cannot set TCP_NODELAY: {error}");
    }
}
