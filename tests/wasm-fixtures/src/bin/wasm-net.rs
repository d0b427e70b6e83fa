//! `wasm-net`: a pass-through proxy that links `std::net` and uses it when a prompt says
//! so: `connect ADDRESS`, `listen ADDRESS`, `udp ADDRESS` or `resolve NAME`; built as a WASI
//! 0.2 component it also imports `wasi:http` (as a default componentize-js build does) and
//! sends `GET http://ADDRESS/` with it on `http ADDRESS`. It answers such a prompt itself,
//! with one message chunk saying what happened, e.g. `connect to ADDRESS failed: ...`.
//! Results are reported, never interpreted: the tests decide what must fail.

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
        "http" => (
            format!("send GET http://{target}/"),
            outgoing_http::get(target).map_err(std::io::Error::other),
        ),
        _ => return None,
    };
    Some(match outcome {
        Ok(()) => format!("{what} succeeded"),
        Err(error) => format!("{what} failed: {error}"),
    })
}

/// `wasi:http/outgoing-handler` called by hand (the fixtures use no bindings generator):
/// each import is the lowered form of its WIT signature.
#[cfg(all(target_family = "wasm", target_env = "p2"))]
mod outgoing_http {
    #[link(wasm_import_module = "wasi:http/types@0.2.0")]
    unsafe extern "C" {
        #[link_name = "[constructor]fields"]
        fn fields_new() -> i32;
        #[link_name = "[constructor]outgoing-request"]
        fn outgoing_request_new(headers: i32) -> i32;
        /// `set-scheme(self, option<scheme>) -> result`: the option's tag, the variant's tag,
        /// `other`'s string.
        #[link_name = "[method]outgoing-request.set-scheme"]
        fn set_scheme(request: i32, is_some: i32, scheme: i32, ptr: i32, len: i32) -> i32;
        #[link_name = "[method]outgoing-request.set-authority"]
        fn set_authority(request: i32, is_some: i32, ptr: *const u8, len: usize) -> i32;
        #[link_name = "[method]outgoing-request.set-path-with-query"]
        fn set_path_with_query(request: i32, is_some: i32, ptr: *const u8, len: usize) -> i32;
        #[link_name = "[method]future-incoming-response.subscribe"]
        fn subscribe(response: i32) -> i32;
        /// `get(self) -> option<result<result<incoming-response, error-code>>>`, written to
        /// `result`: each nested tag at the next multiple of 8 (`error-code` holds u64s).
        #[link_name = "[method]future-incoming-response.get"]
        fn response_get(response: i32, result: *mut u8);
    }

    #[link(wasm_import_module = "wasi:io/poll@0.2.0")]
    unsafe extern "C" {
        #[link_name = "[method]pollable.block"]
        fn block(pollable: i32);
    }

    #[link(wasm_import_module = "wasi:http/outgoing-handler@0.2.0")]
    unsafe extern "C" {
        /// `handle(request, option<request-options>) -> result<future-incoming-response,
        /// error-code>`, written to `result`: the tag, then the payload at offset 8.
        #[link_name = "handle"]
        fn handle(request: i32, has_options: i32, options: i32, result: *mut u8);
    }

    #[repr(C, align(8))]
    struct ResultArea([u8; 64]);

    /// Sends `GET http://{authority}/` and says how it ended: `Ok` if a response came, else
    /// the failure, with `error-code`'s case number (15 is `HTTP-request-denied`).
    pub fn get(authority: &str) -> Result<(), String> {
        let mut area = ResultArea([0; 64]);
        // SAFETY: every call is an import of the signature its WIT declares; `area` is
        // aligned and larger than any result written to it; handles are the host's.
        unsafe {
            let request = outgoing_request_new(fields_new());
            if set_scheme(request, 1, 0, 0, 0) != 0 {
                return Err("the scheme was refused".to_owned());
            }
            if set_authority(request, 1, authority.as_ptr(), authority.len()) != 0 {
                return Err("the authority was refused".to_owned());
            }
            if set_path_with_query(request, 1, "/".as_ptr(), 1) != 0 {
                return Err("the path was refused".to_owned());
            }
            handle(request, 0, 0, area.0.as_mut_ptr());
            if area.0[0] != 0 {
                return Err(format!("handle failed with error-code case {}", area.0[8]));
            }
            let response = i32::from_le_bytes(area.0[8..12].try_into().unwrap());
            block(subscribe(response));
            area.0 = [0; 64];
            response_get(response, area.0.as_mut_ptr());
            match (area.0[0], area.0[8], area.0[16]) {
                (0, _, _) => Err("the response never came".to_owned()),
                (_, 1, _) => Err("the response was taken twice".to_owned()),
                (_, _, 0) => Ok(()),
                _ => Err(format!("error-code case {}", area.0[24])),
            }
        }
    }
}

#[cfg(not(all(target_family = "wasm", target_env = "p2")))]
mod outgoing_http {
    /// Only a WASI 0.2 component can import `wasi:http`.
    pub fn get(_authority: &str) -> Result<(), String> {
        Err("wasi:http exists only for WASI 0.2 components".to_owned())
    }
}

fn main() -> ExitCode {
    proxy_kit::log::init("wasm-net", None);
    proxy_kit::run(WasmNet)
}
