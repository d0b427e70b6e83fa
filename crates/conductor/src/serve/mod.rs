//! `acp-conductor serve`: the chain of a config served to remote editors over ACP's Streamable
//! HTTP & WebSocket transport (`acp_remote::serve`), one chain per connection, run here
//! ([`chains`]) by the same path `run` uses. The command line, the runtime, the metrics,
//! stopping ([`drain`]).

mod chains;
mod drain;
mod file_limit;
mod reload;

use std::path::PathBuf;
use std::time::Duration;

use acp_remote::protocol;
use acp_remote::serve::{self, Limits, ListenError, Options, Plan, ServeError, Server};
use acp_router::topology::ChainMode;

use crate::config::{self, Config, Mode};
use crate::config::{parse_duration, parse_size};
use acp_drivers::runtime::{self, MainThread, RuntimeKind};
use chains::Runner;
use drain::DrainState;

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
    /// Serve /healthz, /readyz, /metrics and POST /drain on this address (plain HTTP). An
    /// address that is not loopback requires --token-file, and those requests the token.
    #[arg(long, value_name = "HOST:PORT")]
    admin_listen: Option<String>,
    /// After SIGTERM (or POST /drain), how long connections with a turn in flight get to
    /// finish it before what is left is answered -32002 and stopped.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    drain_timeout: Duration,
    /// This replica's name (letters, digits, `_`, `.`): every connection id starts with
    /// `NAME-`, so a load balancer in front of several replicas can route a Streamable HTTP
    /// connection's requests by `Acp-Connection-Id` (docs/deploy/).
    #[arg(long, value_name = "NAME")]
    replica: Option<String>,
    #[command(flatten)]
    limits: LimitArgs,
}

impl ServeArgs {
    /// What the transport is asked for.
    fn options(&self) -> Options {
        Options {
            listen: self.listen.clone(),
            token_file: self.token_file.clone(),
            tls: self.tls_cert.clone().zip(self.tls_key.clone()),
            allow_origins: self.allow_origins.clone(),
            admin_listen: self.admin_listen.clone(),
            replica: self.replica.clone(),
            limits: Limits::from(&self.limits),
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Most connections served at once, each with its own chain; more are refused with 503.
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..))]
    max_connections: u16,
    /// Largest message a client may send (one WebSocket message, one POST body): larger
    /// WebSocket messages close the connection, larger POSTs get 413.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    max_message_size: usize,
    /// A connection on which nothing is heard from the client for this long is closed and
    /// its chain stopped (WebSocket pongs and open SSE streams count as hearing it).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// Bytes of sent messages kept per connection for a client that resumes a dropped stream
    /// or socket (`Last-Event-ID`); a resume from before what is kept gets 409. 1 MiB holds
    /// thousands of streamed updates, minutes of a busy turn, at 64 connections 64 MiB at most.
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = parse_size)]
    resume_buffer: usize,
    /// How long a WebSocket connection whose socket dropped without a close frame keeps its
    /// chain for the client to come back; after it the chain stops and a resume gets 409.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    resume_window: Duration,
}

impl From<&LimitArgs> for Limits {
    fn from(args: &LimitArgs) -> Limits {
        Limits {
            max_connections: usize::from(args.max_connections),
            max_message: args.max_message_size,
            idle: args.idle_timeout,
            resume_buffer: args.resume_buffer,
            resume_window: args.resume_window,
        }
    }
}

/// Why `serve` ended in failure; `cli::exit_status` turns it into the exit status.
#[derive(Debug, thiserror::Error)]
pub enum ServeCommandError {
    /// The configuration cannot be used.
    #[error("{0}")]
    Config(#[from] config::ConfigErrors),
    /// What the command line names cannot be used.
    #[error("acp-conductor serve: {0}")]
    Plan(#[from] ServeError),
    /// The checked address could not be listened on (logged when it happened).
    #[error("{0}")]
    Listen(#[from] ListenError),
    #[error("acp-conductor serve: cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// The `serve` command: until a signal stops it.
pub fn main(args: ServeArgs, log: Option<&str>) -> Result<(), ServeCommandError> {
    crate::logging::init(log, "info");
    let config = config::load(&args.config)?;
    let plan = Plan::new(&args.options())?;
    let mode = match config.conductor.mode {
        Mode::Proxy => ChainMode::Proxy,
        Mode::Agent => ChainMode::Agent,
    };
    acp_metrics::enable().set_component_kinds(component_kinds(&config));
    check_file_limit(&config, args.limits.max_connections);
    crate::otlp::start(&config);
    let drain_timeout = args.drain_timeout;
    // Chains run on this (the main) thread, inside the local set; see `chains`.
    let served = runtime::run_on_main_thread(RuntimeKind::WorkersAndLocalSet, |main| {
        serve(main, config, mode, plan, drain_timeout)
    })
    .map_err(ServeCommandError::Runtime)?;
    crate::otlp::finish();
    served
}

async fn serve(
    main: MainThread,
    config: Config,
    mode: ChainMode,
    plan: Plan,
    drain_timeout: Duration,
) -> Result<(), ServeCommandError> {
    let file = config.file.clone();
    let (admission, arrivals) = serve::admission(plan.limits().max_connections);
    let (reload_asker, reload_asks) = serve::reload_asks();
    let server = Server::listen(plan, admission.clone(), reload_asker)
        .await
        .inspect_err(|error| {
            tracing::error!("{error}");
        })?;
    // Before the line that says serve is up, which tools wait for.
    if let Some(admin) = server.admin {
        tracing::info!(
            "admin endpoints on http://{admin} (/healthz /readyz /metrics /drain /reload)"
        );
    }
    tracing::info!(
        "serving the chain of {} on {}://{}{}",
        file.display(),
        server.scheme,
        server.local,
        protocol::ENDPOINT_PATH
    );
    let state = DrainState::default();
    let (stop_chains, told) = tokio::sync::watch::channel(None);
    let runner = Runner::new(config, mode, arrivals, reload_asks, told, state.clone());
    let drained = drain::until_drained(admission, state, stop_chains, drain_timeout);
    runner.run(main, drained, STOP_GRACE).await;
    server.stop_accepting();
    // Every chain has stopped, so every stream has ended; what is left are idle sockets.
    if !server.closed(STOP_GRACE).await {
        tracing::warn!("connections still open after the chains stopped; exiting anyway");
    }
    Ok(())
}

/// Raises the open-file limit, and warns when `--max-connections` chains of `config` would
/// not fit in it (each holds pipes to its processes).
fn check_file_limit(config: &Config, max_connections: u16) {
    use crate::config::{AgentSpec, ProxyLaunch};
    let Some(files) = file_limit::raise() else {
        return;
    };
    let proxies = config
        .proxies
        .iter()
        .filter(|p| !p.shared && matches!(p.launch, ProxyLaunch::Native(_)))
        .count();
    let agent = usize::from(matches!(
        config.agent,
        Some(AgentSpec::Command(_) | AgentSpec::Builtin { .. })
    ));
    let processes = (proxies + agent) as u64;
    if processes == 0 {
        return;
    }
    let fit = file_limit::connections_within(files, processes);
    if fit < u64::from(max_connections) {
        tracing::warn!(
            "the open-file limit ({files}) fits about {fit} connections of {processes} processes \
             each, fewer than --max-connections ({max_connections}): raise it (`ulimit -n`, \
             LimitNOFILE=) or lower --max-connections (docs/operations.md#sizing)"
        );
    }
}

/// The kind of each component by name, for the metrics' `kind` label.
fn component_kinds(config: &Config) -> std::collections::HashMap<String, &'static str> {
    use crate::config::{AgentSpec, ProxyLaunch};
    let proxies = config.proxies.iter().map(|proxy| {
        let kind = match (&proxy.launch, proxy.shared) {
            (_, true) => "shared",
            (ProxyLaunch::Native(_), false) => "native",
            (ProxyLaunch::Wasm(_), false) => "wasm",
            (ProxyLaunch::Remote(_), false) => "remote",
        };
        (proxy.name.clone(), kind)
    });
    let agent = config.agent.iter().map(|agent| {
        let kind = match agent {
            AgentSpec::Remote(_) => "remote",
            AgentSpec::Command(_) | AgentSpec::Builtin { .. } => "native",
        };
        (
            acp_drivers::supervisor::Supervisor::agent_name(config),
            kind,
        )
    });
    proxies.chain(agent).collect()
}
