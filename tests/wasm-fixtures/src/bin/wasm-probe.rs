//! `wasm-probe`: a pass-through proxy that also answers `probe/*` requests addressed to it
//! (`params.target` = its `--name`) by trying something a sandbox should govern.
//! Results are reported, never interpreted: the tests decide what must have failed.

use std::process::ExitCode;

use proxy_kit::{Peers, Proxy, Request, RequestAction, error_code};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Probe {
    target: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    length: usize,
}

struct WasmProbe {
    name: String,
}

impl Proxy for WasmProbe {
    fn on_editor_request(
        &mut self,
        _peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        let Some(probe) = request.method().strip_prefix("probe/") else {
            return RequestAction::Forward;
        };
        let params: Probe = match request.parse_params() {
            Ok(params) => params,
            Err(error) => {
                return RequestAction::fail(error_code::INVALID_PARAMS, error.to_string());
            }
        };
        if params.target != self.name {
            return RequestAction::Forward;
        }
        match run(probe, &params) {
            Some(result) => RequestAction::respond(result),
            None => RequestAction::fail(error_code::METHOD_NOT_FOUND, format!("no probe {probe}")),
        }
    }
}

/// `{"ok": true, "value": ...}` or `{"ok": false, "error": "..."}`.
fn outcome<T: Into<Value>>(result: std::io::Result<T>) -> Value {
    match result {
        Ok(value) => json!({ "ok": true, "value": value.into() }),
        Err(error) => json!({ "ok": false, "error": error.to_string() }),
    }
}

fn run(probe: &str, params: &Probe) -> Option<Value> {
    Some(match probe {
        "ping" => json!({ "pong": params.target }),
        "read" => outcome(std::fs::read_to_string(&params.path)),
        "list" => outcome(std::fs::read_dir(&params.path).and_then(|entries| {
            let mut names = entries
                .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<std::io::Result<Vec<_>>>()?;
            names.sort();
            Ok(names)
        })),
        "write" => outcome(std::fs::write(&params.path, &params.text).map(|()| true)),
        "env" => json!({ "value": std::env::var(&params.name).ok() }),
        "environment" => {
            json!({ "names": std::env::vars().map(|(name, _)| name).collect::<Vec<_>>() })
        }
        "args" => json!({ "args": std::env::args().collect::<Vec<_>>() }),
        "spin" => spin(),
        "allocate" => allocate(),
        "line" => outcome(long_line(params.length)),
        _ => return None,
    })
}

/// Computes forever without reading input.
fn spin() -> ! {
    let mut counter = 0u64;
    loop {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

/// Allocates (and touches) memory until the allocator gives up.
fn allocate() -> ! {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    loop {
        blocks.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&blocks);
    }
}

/// Writes a notification of `length` x's to stdout with one `write` call, as a runtime that
/// does not loop on a short count does (Python's unbuffered `sys.stdout.buffer.write`), and
/// says how much of the line that call took. The kit's own output is flushed by now.
fn long_line(length: usize) -> std::io::Result<Value> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"probe/line\",\"params\":{{\"x\":\"{}\"}}}}\n",
        "x".repeat(length)
    );
    // SAFETY: fd 1 is the process's stdout, open for its whole life; `ManuallyDrop` keeps
    // this handle from closing it.
    let mut stdout = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) });
    let written = stdout.write(line.as_bytes())?;
    Ok(json!({ "written": written, "of": line.len() }))
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut name = "probe".to_owned();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--name", Some(value)) => name = value,
            _ => {
                eprintln!("usage: wasm-probe [--name NAME]");
                return ExitCode::from(2);
            }
        }
    }
    proxy_kit::log::init("wasm-probe", None);
    proxy_kit::run(WasmProbe { name })
}
