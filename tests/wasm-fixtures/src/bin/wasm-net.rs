//! `wasm-net`: a pass-through proxy that links `std::net` and uses it when a prompt says
//! so: `connect ADDRESS`, `listen ADDRESS`, `udp ADDRESS` or `resolve NAME`. It answers such a
//! prompt itself, with one message chunk saying what happened, e.g. `connect to ADDRESS
//! failed: ...`. Results are reported, never interpreted: the tests decide what must fail.

use std::net::{TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::process::ExitCode;

use proxy_kit::{Peers, Proxy, Request, RequestAction};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct Prompt {
    #[serde(rename = "sessionId")]
    session_id: String,
    prompt: Vec<Block>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(default)]
    text: String,
}

struct WasmNet;

impl Proxy for WasmNet {
    fn on_editor_request(
        &mut self,
        peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        if request.method() != "session/prompt" {
            return RequestAction::Forward;
        }
        let Ok(prompt) = request.parse_params::<Prompt>() else {
            return RequestAction::Forward;
        };
        let Some(report) = prompt.prompt.first().and_then(|b| attempt(&b.text)) else {
            return RequestAction::Forward;
        };
        proxy_kit::info!("{report}");
        peers.notify_editor(
            "session/update",
            json!({
                "sessionId": prompt.session_id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": { "type": "text", "text": report }
                }
            }),
        );
        RequestAction::respond(json!({ "stopReason": "end_turn" }))
    }
}

/// Carries out the network use `text` asks for, if it asks for one, and says how it went.
fn attempt(text: &str) -> Option<String> {
    let (verb, target) = text.split_once(' ')?;
    let (what, outcome) = match verb {
        "connect" => (
            format!("connect to {target}"),
            TcpStream::connect(target).map(|_| ()),
        ),
        "listen" => (
            format!("listen on {target}"),
            TcpListener::bind(target).map(|_| ()),
        ),
        "udp" => (
            format!("send a datagram to {target}"),
            UdpSocket::bind("0.0.0.0:0")
                .and_then(|socket| socket.send_to(b"hello", target))
                .map(|_| ()),
        ),
        "resolve" => (
            format!("resolve {target}"),
            (target, 80).to_socket_addrs().map(|_| ()),
        ),
        _ => return None,
    };
    Some(match outcome {
        Ok(()) => format!("{what} succeeded"),
        Err(error) => format!("{what} failed: {error}"),
    })
}

fn main() -> ExitCode {
    proxy_kit::log::init("wasm-net", None);
    proxy_kit::run(WasmNet)
}
