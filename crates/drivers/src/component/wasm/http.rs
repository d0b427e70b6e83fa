//! `wasi:http` for a WASM guest: linked, so that a component whose runtime imports it (a
//! default componentize-js build does) loads, and every outgoing request denied and counted.
//! Must not know how the guest is run; it decides only what an outgoing request gets.
//!
//! The types (headers, requests, bodies) are wasmtime's own: they build values in the guest's
//! resource table and touch nothing. The one call that would reach the network,
//! `outgoing-handler.handle`, ends in [`WasiHttpHooks::send_request`], which answers
//! `HTTP-request-denied`. wasmtime-wasi-http is built without its default sender
//! (`default-send-request`), so the conductor holds no code that could send a guest's request.

use std::future::Future;

use wasmtime::component::Linker;
use wasmtime_wasi_http::{WasiBody, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::network::{NetworkAttempts, NetworkUse};
use super::sandbox::{ComponentWasi, GuestState};

/// What `send_request` returns: the response and the future of its body's I/O, or an error.
type SendResult = wasmtime_wasi_http::Result<(
    http::Response<WasiBody>,
    Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl WasiHttpHooks for NetworkAttempts {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<wasmtime_wasi_http::RequestOptions>,
        _response_done: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        self.deny(NetworkUse::HttpRequest {
            method: request.method().to_string(),
            uri: request.uri().to_string(),
        });
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

impl WasiHttpView for GuestState<ComponentWasi> {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        let wasi = &mut self.wasi;
        WasiHttpCtxView {
            hooks: &mut wasi.network,
            table: &mut wasi.table,
            ctx: &mut wasi.http,
        }
    }
}

/// Links `wasi:http/types` and `wasi:http/outgoing-handler`.
pub fn add_to_linker(linker: &mut Linker<GuestState<ComponentWasi>>) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
}
