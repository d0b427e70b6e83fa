//! `test-remote-agent`: an ACP agent built on the official Rust SDK and served over ACP's
//! Streamable HTTP and WebSocket transport by the SDK's own server (`agent-client-protocol-http`).
//!
//! `test-remote-agent [--port N] [--token T]` serves `/acp` on 127.0.0.1 (port 0: any free
//! one) and prints `listening on 127.0.0.1:PORT` on stdout once it accepts connections. With
//! `--token T`, every request without `Authorization: Bearer T` is refused with 401.
//!
//! Prompts (the first text block): `stream N` sends N chunks `chunk 1`..; `permission` asks
//! the client and says `permission selected ID` or `permission cancelled`; `wait` says
//! `waiting` and ends the turn `cancelled` once `session/cancel` arrives; `drop` says
//! `dropping` and exits with status 3 mid-turn, dropping every connection; anything else is
//! echoed as `echo: TEXT`.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, InitializeRequest,
    InitializeResponse, NewSessionRequest, NewSessionResponse, PermissionOption,
    PermissionOptionKind, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    TextContent, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Responder, V1};
use agent_client_protocol_http::AcpHttpServer;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Notify;

/// The turns waiting for `session/cancel`, by session.
type Waiting = Arc<Mutex<HashMap<String, Arc<Notify>>>>;

/// Sessions are numbered across connections, so a reconnected client gets new ones.
static SESSIONS: AtomicUsize = AtomicUsize::new(0);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("REMOTE_AGENT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let mut port = 0u16;
    let mut token = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().and_then(|p| p.parse().ok()).expect("--port N"),
            "--token" => token = Some(args.next().expect("--token T")),
            other => panic!("unknown argument {other}"),
        }
    }
    let waiting = Waiting::default();
    let mut app = AcpHttpServer::new(move || agent(waiting.clone())).into_router();
    if let Some(token) = token {
        let expected = Arc::new(format!("Bearer {token}"));
        app = app.layer(axum::middleware::from_fn_with_state(
            expected,
            require_token,
        ));
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind 127.0.0.1");
    let address = listener.local_addr().expect("a bound address");
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {address}").expect("stdout");
    stdout.flush().expect("stdout");
    axum::serve(listener, app).await.expect("serve");
}

/// 401 for a request without the expected `Authorization` header.
async fn require_token(
    State(expected): State<Arc<String>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    if given == Some(expected.as_str()) {
        next.run(request).await
    } else {
        (StatusCode::UNAUTHORIZED, "missing or wrong bearer token").into_response()
    }
}

/// The agent one connection talks to.
fn agent(waiting: Waiting) -> impl ConnectTo<Client> {
    let cancels = waiting.clone();
    Agent
        .v1()
        .name("test-remote-agent")
        .on_receive_request(
            async move |initialize: InitializeRequest,
                        responder: Responder<InitializeResponse, V1>,
                        _connection: ConnectionTo<Client>| {
                responder.respond(
                    InitializeResponse::new(initialize.protocol_version)
                        .agent_capabilities(AgentCapabilities::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: NewSessionRequest,
                        responder: Responder<NewSessionResponse, V1>,
                        _connection: ConnectionTo<Client>| {
                let n = SESSIONS.fetch_add(1, Ordering::Relaxed) + 1;
                responder.respond(NewSessionResponse::new(SessionId::new(format!(
                    "remote-{n}"
                ))))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest,
                        responder: Responder<PromptResponse, V1>,
                        connection: ConnectionTo<Client>| {
                let turn = turn(request, responder, connection.clone(), waiting.clone());
                connection.spawn(turn)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _connection: ConnectionTo<Client>| {
                let turn = cancels
                    .lock()
                    .expect("waiting lock")
                    .remove(&cancel.session_id.to_string());
                if let Some(turn) = turn {
                    turn.notify_one();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

/// One prompt turn, run off the connection's dispatch loop so it can wait for answers.
async fn turn(
    request: PromptRequest,
    responder: Responder<PromptResponse, V1>,
    connection: ConnectionTo<Client>,
    waiting: Waiting,
) -> Result<(), agent_client_protocol::Error> {
    let session = request.session_id.clone();
    let text = match request.prompt.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        _ => String::new(),
    };
    let say = |text: String| {
        connection.send_notification(SessionNotification::new(
            session.clone(),
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new(text),
            ))),
        ))
    };
    let mut words = text.split_whitespace();
    match words.next() {
        Some("stream") => {
            let count: usize = words.next().and_then(|n| n.parse().ok()).unwrap_or(3);
            for i in 1..=count {
                say(format!("chunk {i}"))?;
            }
        }
        Some("permission") => {
            let ask = RequestPermissionRequest::new(
                session.clone(),
                ToolCallUpdate::new("call-1", ToolCallUpdateFields::new().title("write a file")),
                vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ],
            );
            let answer = connection.send_request(ask).block_task().await?;
            let outcome = match answer.outcome {
                RequestPermissionOutcome::Selected(selected) => {
                    format!("selected {}", selected.option_id)
                }
                RequestPermissionOutcome::Cancelled => "cancelled".to_owned(),
                _ => "unknown".to_owned(),
            };
            say(format!("permission {outcome}"))?;
        }
        Some("wait") => {
            let cancelled = Arc::new(Notify::new());
            waiting
                .lock()
                .expect("waiting lock")
                .insert(session.to_string(), cancelled.clone());
            say("waiting".to_owned())?;
            cancelled.notified().await;
            return responder.respond(PromptResponse::new(StopReason::Cancelled));
        }
        Some("drop") => {
            say("dropping".to_owned())?;
            // Long enough for the chunk to be written, then every connection drops.
            tokio::time::sleep(Duration::from_millis(100)).await;
            std::process::exit(3);
        }
        _ => say(format!("echo: {text}"))?,
    }
    responder.respond(PromptResponse::new(StopReason::EndTurn))
}
