//! `test-http-client URL`: an ACP client built on the official Rust SDK and its
//! HTTP/WebSocket transport (`HttpClient`; `ws://` for WebSocket, `http://` for Streamable
//! HTTP). It initializes, opens a session, sends the prompts `hello` and `permission`
//! (answering a permission request with the first `allow_once` option) and prints one JSON
//! line per step on stdout; exits non-zero on any error.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, TextContent,
};
use agent_client_protocol::{Agent, Client};
use agent_client_protocol_http::HttpClient;
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: test-http-client URL")?;
    let transport = HttpClient::with_endpoint(&url)?;
    let chunks: Arc<Mutex<Vec<String>>> = Arc::default();
    let asked: Arc<Mutex<usize>> = Arc::default();
    let (seen, counted) = (chunks.clone(), asked.clone());
    Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(chunk) = notification.update
                    && let ContentBlock::Text(text) = chunk.content
                {
                    seen.lock().unwrap().push(text.text);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _connection| {
                *counted.lock().unwrap() += 1;
                let allow = request
                    .options
                    .iter()
                    .find(|option| option.kind == PermissionOptionKind::AllowOnce)
                    .map(|option| option.option_id.clone());
                let outcome = match allow {
                    Some(id) => {
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
                    }
                    None => RequestPermissionOutcome::Cancelled,
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, |connection: ConnectionTo<Agent>| async move {
            let init = connection
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            println!(
                "{}",
                json!({ "initialized": init.protocol_version == ProtocolVersion::V1 })
            );
            let session = connection
                .send_request(NewSessionRequest::new(PathBuf::from("/")))
                .block_task()
                .await?
                .session_id;
            println!("{}", json!({ "session": session.to_string() }));
            for text in ["hello", "permission"] {
                chunks.lock().unwrap().clear();
                let response = connection
                    .send_request(PromptRequest::new(
                        session.clone(),
                        vec![ContentBlock::Text(TextContent::new(text))],
                    ))
                    .block_task()
                    .await?;
                let line = json!({
                    "prompt": text,
                    "stopReason": serde_json::to_value(response.stop_reason).unwrap_or_default(),
                    "chunks": chunks.lock().unwrap().clone(),
                    "permissionRequests": *asked.lock().unwrap(),
                });
                println!("{line}");
            }
            Ok(())
        })
        .await?;
    Ok(())
}
